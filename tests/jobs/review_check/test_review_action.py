"""`run_review_action`: the Action's `command: review`, with the job's token and environment."""

from __future__ import annotations

import json

import pytest

from app.action.review import run_review_action
from app.errors import UserError
from reviewers.fake_servers import Text
from tests.jobs.review_check.conftest import APPROVE, DIVIDE, A, B

pytestmark = pytest.mark.slow

NEW_OPS = "def add(a: int, b: int) -> int:\n    return a + b\n" + DIVIDE
REJECT = "FINDING major calc/ops.py:6 divide(1, 0) raises; check b\nVERDICT: REJECT"


@pytest.fixture
def action_env(rw, monkeypatch, tmp_path):
    """What a workflow job gives the action: the event, a token, the model keys."""
    for name, value in rw.models.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OUROBOT_BOT_LOGIN", rw.sandbox.app.bot_login)

    def build(payload: dict) -> dict[str, str]:
        payload = {k: v for k, v in payload.items() if k != "installation"}
        event = tmp_path / "event.json"
        event.write_text(json.dumps(payload))
        return {
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_API_URL": rw.sandbox.url,
            "GITHUB_TOKEN": rw.sandbox.control.installation_token(rw.repo.installation_id),
            "RUNNER_TEMP": str(tmp_path / "runner"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        }

    return build


def test_the_action_reviews_the_event_pr_and_exits_1_on_a_rejection(
    rw, action_env, tmp_path, capsys
):
    rw.models.script(A, APPROVE)
    rw.models.script(B, Text(REJECT))
    number, head, payload = rw.open_pull({"calc/ops.py": NEW_OPS})
    env = action_env(payload)
    assert run_review_action(env) == 1
    # The Actions log shows each model's verdict as it arrives, one line each.
    log = capsys.readouterr().out.splitlines()
    progress = sorted(line.split(" (")[0] for line in log if f"#{number}: " in line)
    assert progress == [
        f"ourobot review {rw.repo.full_name}#{number}: {A}: approve, 0 findings",
        f"ourobot review {rw.repo.full_name}#{number}: {B}: reject, 1 finding",
    ]
    [run] = rw.check_runs(head)
    assert (run.conclusion, run.output.title) == ("failure", "Review failed: rejected by 1 of 2")
    output = (tmp_path / "output.txt").read_text()
    assert "conclusion=failure\nreason=rejected\n" in output
    assert "## ourobot review failed (rejected)" in (tmp_path / "summary.md").read_text()
    # A rerun of the workflow on the same head posts nothing new and says what it found.
    assert run_review_action(env) == 1
    assert len(rw.check_runs(head)) == 1
    assert len([r for r in rw.reviews(number) if r.user.login == rw.sandbox.app.bot_login]) == 1
    assert len(rw.models.requests) == 2


def test_the_action_skips_a_pr_ourobot_does_not_review(rw, action_env, tmp_path):
    _, head, payload = rw.open_pull({"calc/ops.py": NEW_OPS}, branch="feature", by="writer")
    assert run_review_action(action_env(payload)) == 0
    assert "conclusion=skipped" in (tmp_path / "output.txt").read_text()
    assert rw.check_runs(head) == []


def test_the_action_needs_a_pull_request_event(rw, action_env):
    env = action_env({"action": "created", "issue": {"number": 1}})
    env["GITHUB_EVENT_NAME"] = "issue_comment"
    with pytest.raises(UserError, match="needs a pull_request event, got 'issue_comment'"):
        run_review_action(env)
