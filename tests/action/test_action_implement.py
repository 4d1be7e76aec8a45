"""`ourobot action implement`: one cycle for the triggering issue inside GitHub Actions, with the
workflow's token (or an App's, `app-token`) against the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.action.implement import run_implement_action
from app.action.sandbox_need import annotation, restricted_by_apparmor, what_it_needs
from reviewers.fake_servers import edits_reply
from tests.jobs.loop.conftest import (
    FIX,
    IMPLEMENTER,
    WITH_TEST,
    LoopWorld,
    config_text,
    make_world,
    project_files,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def lw(sandbox, webhook_sink, fake_models, tmp_path):
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path)
    yield world
    world.store.close()


@pytest.fixture
def action_env(lw: LoopWorld, monkeypatch, tmp_path):
    for name, value in lw.models.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OUROBOT_BOT_LOGIN", lw.sandbox.app.bot_login)

    def build(event: str, payload: dict) -> dict[str, str]:
        path = tmp_path / "event.json"
        path.write_text(json.dumps({k: v for k, v in payload.items() if k != "installation"}))
        return {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(path),
            "GITHUB_API_URL": lw.sandbox.url,
            "GITHUB_TOKEN": "not-a-token-the-app-token-wins",
            "OUROBOT_APP_TOKEN": lw.sandbox.control.installation_token(lw.repo.installation_id),
            "GITHUB_RUN_ID": "77",
            "RUNNER_TEMP": str(tmp_path / "runner"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        }

    return build


def test_the_action_turns_the_labeled_issue_into_a_pull_request(lw, action_env, tmp_path):
    lw.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
    number = lw.issue()
    lw.label(number, "writer")
    [delivery] = [d for d in lw.new_deliveries() if d.event == "issues" and d.action == "labeled"]
    env = action_env("issues", delivery.payload)
    assert run_implement_action(env) == 0
    [pull] = lw.pulls()
    assert pull.head.ref == f"ourobot/issue-{number}"
    assert pull.user.login == lw.sandbox.app.bot_login  # the App's token opened it
    output = (tmp_path / "output.txt").read_text()
    assert f"pull-request={pull.number}\n" in output
    # A rerun of the same workflow run finds its pull request and status comment.
    assert run_implement_action(env) == 0
    assert len(lw.pulls()) == 1 and len(lw.bot_comments(number)) == 1


def test_other_events_and_bots_do_nothing(lw, action_env, tmp_path):
    number = lw.issue()
    lw.label(number, "writer", name="bug")
    lw.comment("writer", number, "/ourobot help")
    for delivery in lw.new_deliveries():
        payload = dict(delivery.payload)
        if delivery.event == "issue_comment":
            payload["comment"] = {**payload["comment"], "user": {"login": "x[bot]", "type": "Bot"}}
        assert run_implement_action(action_env(delivery.event, payload)) == 0
    assert lw.pulls() == [] and lw.models.requests == []
    assert "outcome=nothing to do" in (tmp_path / "output.txt").read_text()


def test_a_dispatch_without_the_apps_inputs_is_refused_in_one_line(tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"inputs": {"ticket": "5; curl evil"}, "ref": "refs/heads/main",
                                 "repository": {"full_name": "octo/demo"}}))  # fmt: skip
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": str(event),
        "RUNNER_TEMP": str(tmp_path),
    }
    done = subprocess.run(
        [str(Path(sys.executable).with_name("ourobot")), "action", "implement"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "input `ticket` must be an issue number" in line and "Traceback" not in done.stderr
    assert "::error title=ourobot::" in done.stdout


def test_the_sandbox_need_is_one_line_naming_the_fix(tmp_path):
    knob = tmp_path / "apparmor_restrict_unprivileged_userns"
    knob.write_text("1\n")
    assert restricted_by_apparmor(knob) and not restricted_by_apparmor(tmp_path / "absent")
    userns = what_it_needs("bwrap failed: setting up uid map: Permission denied",
                           missing=False, restricted=True)  # fmt: skip
    assert "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in userns
    assert "Ubuntu 24.04" in userns and "\n" not in userns
    assert "apt-get install -y bubblewrap" in what_it_needs("x", missing=True, restricted=False)
    other = what_it_needs("bwrap failed: no", missing=False, restricted=False)
    assert "OUROBOT_ALLOW_UNSANDBOXED=1" in other
    assert annotation("50%\nmore") == "::error title=ourobot sandbox::50%25%0Amore"


def test_in_the_action_runs_on_actions_is_moot_the_cycle_runs_here(
    sandbox, webhook_sink, fake_models, tmp_path, monkeypatch
):
    files = project_files(config_text(implementer="{runs_on: actions}"))
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path, files=files)
    try:
        for name, value in world.models.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("OUROBOT_BOT_LOGIN", world.sandbox.app.bot_login)
        world.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
        number = world.issue()
        world.label(number, "writer")
        [delivery] = [d for d in world.new_deliveries() if d.event == "issues"
                      and d.action == "labeled"]  # fmt: skip
        event = tmp_path / "event.json"
        event.write_text(json.dumps(delivery.payload))
        env = {
            "GITHUB_EVENT_NAME": "issues",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_API_URL": world.sandbox.url,
            "GITHUB_TOKEN": world.sandbox.control.installation_token(world.repo.installation_id),
            "GITHUB_RUN_ID": "78",
            "RUNNER_TEMP": str(tmp_path / "runner"),
        }
        assert run_implement_action(env) == 0
        [pull] = world.pulls()
        assert pull.head.ref == f"ourobot/issue-{number}"
        assert world.sandbox.control.workflow_runs("octo", "demo") == []
    finally:
        world.store.close()
