"""`ourobot action command`: the Action feeds the same router and jobs as the App."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
OUROBOT = Path(sys.executable).parent / "ourobot"


def run_action(tmp_path, sandbox, payload, event="issue_comment", token=None):
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(payload))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OUROBOT_", "GITHUB_"))}
    env.update(
        {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_API_URL": sandbox.url,
            "RUNNER_TEMP": str(tmp_path / "runner"),
            "OUROBOT_BOT_LOGIN": sandbox.app.bot_login,
        }
    )
    if token is not None:
        env["GITHUB_TOKEN"] = token
    return subprocess.run(
        [str(OUROBOT), "action", "command"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_help_from_the_action_is_answered_once(sandbox, webhook_sink, tmp_path):
    repo = sandbox.create_repo()
    sandbox.create_user("writer")
    sandbox.control.set_permission(repo.owner, repo.name, "writer", "write")
    person = sandbox.github_user("writer")
    issue = person.rest.issues.create(repo.owner, repo.name, title="t").parsed_data
    person.rest.issues.create_comment(repo.owner, repo.name, issue.number, body="/ourobot help")
    payload = webhook_sink.wait_for("issue_comment", "created")[-1].payload
    payload.pop("installation", None)  # Actions payloads carry no App installation
    token = sandbox.control.installation_token(repo.installation_id)
    for _ in range(2):
        proc = run_action(tmp_path, sandbox, payload, token=token)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "ran command" in proc.stdout
    owner = sandbox.github_user(repo.owner)
    comments = owner.rest.issues.list_comments(repo.owner, repo.name, issue.number).parsed_data
    ours = [c for c in comments if c.user.login == sandbox.app.bot_login]
    assert len(ours) == 1
    assert "ourobot commands" in ours[0].body


def test_panic_in_the_action_says_how_to_stop_it(sandbox, webhook_sink, tmp_path):
    repo = sandbox.create_repo()
    owner = sandbox.github_user(repo.owner)
    issue = owner.rest.issues.create(repo.owner, repo.name, title="t").parsed_data
    owner.rest.issues.create_comment(repo.owner, repo.name, issue.number, body="/ourobot panic")
    payload = webhook_sink.wait_for("issue_comment", "created")[-1].payload
    token = sandbox.control.installation_token(repo.installation_id)
    proc = run_action(tmp_path, sandbox, payload, token=token)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    comments = owner.rest.issues.list_comments(repo.owner, repo.name, issue.number).parsed_data
    [reply] = [c for c in comments if c.user.login == sandbox.app.bot_login]
    assert "disable its workflow" in reply.body


def test_missing_token_or_event_is_one_line_exit_2(sandbox, tmp_path):
    proc = run_action(tmp_path, sandbox, {"action": "created"})
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "GITHUB_TOKEN" in proc.stderr


def test_ticket_work_is_refused_with_one_line_pointing_at_implement(
    sandbox, webhook_sink, tmp_path
):
    # `command: command` holds `issues: write`, not the rights to push and open a pull request.
    repo = sandbox.create_repo()
    sandbox.create_user("writer")
    sandbox.control.set_permission(repo.owner, repo.name, "writer", "write")
    person = sandbox.github_user("writer")
    issue = person.rest.issues.create(repo.owner, repo.name, title="t", body="b").parsed_data
    person.rest.issues.add_labels(repo.owner, repo.name, issue.number, labels=["ourobot:ticket"])
    labeled = webhook_sink.wait_for("issues", "labeled")[-1].payload
    person.rest.issues.create_comment(
        repo.owner, repo.name, issue.number, body="/ourobot implement\n/ourobot help"
    )
    commented = webhook_sink.wait_for("issue_comment", "created")[-1].payload
    token = sandbox.control.installation_token(repo.installation_id)
    for event, payload in (("issues", labeled), ("issue_comment", commented)):
        payload.pop("installation", None)
        proc = run_action(tmp_path, sandbox, payload, event=event, token=token)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        refusals = [line for line in proc.stdout.splitlines() if "`command: implement`" in line]
        assert len(refusals) == 1 and "does not run ticket work" in refusals[0]
        assert "ran ticket" not in proc.stdout
    owner = sandbox.github_user(repo.owner)
    assert owner.rest.pulls.list(repo.owner, repo.name, state="all").parsed_data == []
    comments = owner.rest.issues.list_comments(repo.owner, repo.name, issue.number).parsed_data
    [reply] = [c for c in comments if c.user.login == sandbox.app.bot_login]
    assert "ourobot commands" in reply.body  # `/ourobot help` beside it is still answered
