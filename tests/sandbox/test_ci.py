"""The Actions stand-in: a repo's CI command runs on each pull request head and reports a
`ci/test` check run as the separate "github-actions" App."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from githubkit import GitHub

from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink

pytestmark = pytest.mark.slow

PASSES = [sys.executable, "-c", "from calc.ops import add; assert add(2, 3) == 5; print('ok')"]
FAILS = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
HANGS = [sys.executable, "-c", "import time; time.sleep(30)"]


def _open_pull(sandbox: SandboxHandle, repo: SeededRepo) -> tuple[GitHub[Any], int, str]:
    work = sandbox.tmp_path / "ci-work"
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=repo.owner_token)
    sandbox.git("checkout", "-q", "-b", "change", cwd=work)
    (work / "calc" / "more.py").write_text("X = 1\n")
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "More", cwd=work)
    sandbox.git("push", "-q", "origin", "change", cwd=work, token=repo.owner_token)
    head = sandbox.git("rev-parse", "HEAD", cwd=work).stdout.strip()
    assert repo.installation_id is not None
    bot = sandbox.github_installation(repo.installation_id)
    pull = bot.rest.pulls.create(repo.owner, repo.name, title="C", head="change", base="main")
    return bot, pull.parsed_data.number, head


def _ci_run(bot: GitHub[Any], repo: SeededRepo, head: str) -> Any:
    runs = bot.rest.checks.list_for_ref(repo.owner, repo.name, head, check_name="ci/test")
    (run,) = runs.parsed_data.check_runs
    return run


def test_passing_command_reports_success_as_github_actions(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    sandbox.control.set_ci_command(repo.owner, repo.name, PASSES, timeout_s=60)
    bot, _, head = _open_pull(sandbox, repo)
    assert sandbox.control.wait_idle(60)
    run = _ci_run(bot, repo, head)
    assert (run.status, run.conclusion) == ("completed", "success")
    assert run.app is not None
    assert run.app.slug == "github-actions"
    assert "ok" in (run.output.text or "")
    created, completed = (
        webhook_sink.wait_for("check_run", "created")[0],
        webhook_sink.wait_for("check_run", "completed")[0],
    )
    assert created.payload["check_run"]["status"] == "in_progress"
    assert completed.payload["check_run"]["conclusion"] == "success"
    assert completed.payload["sender"]["login"] == "github-actions[bot]"
    # Like GitHub, a check run names the open pull requests whose head it ran on.
    (pull,) = completed.payload["check_run"]["pull_requests"]
    assert pull["head"]["sha"] == head
    assert [p.number for p in run.pull_requests] == [pull["number"]]


def test_failing_and_hanging_commands(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    sandbox.control.set_ci_command(repo.owner, repo.name, FAILS)
    bot, number, head = _open_pull(sandbox, repo)
    assert sandbox.control.wait_idle(60)
    failed = _ci_run(bot, repo, head)
    assert failed.conclusion == "failure"
    assert "exit code 3" in (failed.output.summary or "")
    assert "boom" in (failed.output.text or "")

    # Reopening re-runs CI, like a `pull_request: reopened` workflow trigger.
    sandbox.control.set_ci_command(repo.owner, repo.name, HANGS, timeout_s=0.5)
    bot.rest.pulls.update(repo.owner, repo.name, number, state="closed")
    bot.rest.pulls.update(repo.owner, repo.name, number, state="open")
    assert sandbox.control.wait_idle(60)
    latest = _ci_run(bot, repo, head)
    assert latest.id != failed.id
    assert latest.conclusion == "timed_out"


def test_no_command_no_check(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    bot, _, head = _open_pull(sandbox, repo)
    assert sandbox.control.wait_idle(60)
    runs = bot.rest.checks.list_for_ref(repo.owner, repo.name, head).parsed_data
    assert runs.total_count == 0
