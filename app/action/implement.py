"""`ourobot action implement`: one cycle for the triggering issue, inside GitHub Actions.

The same `ticket` job as the App's (`app.jobs.ticket_cycle.run_ticket`): the labeler's
permission asked of GitHub, the cycle in a worktree of a bare mirror under `RUNNER_TEMP`, the
branch pushed with the token in a one-command header, the pull request opened. The event is
`issues` labeled `ourobot:ticket`, or an `issue_comment` with `/ourobot implement`; anything
else does nothing (exit 0).

The token: a pull request opened with the workflow's default `GITHUB_TOKEN` does not trigger
workflows (GitHub's rule against recursive runs), so neither CI nor ourobot's own guards and
review would run on it. With the `app-token` input (an installation token of a GitHub App,
e.g. from `actions/create-github-app-token`) ourobot pushes and opens the pull request as that
App, and the pull request's workflows run. `bot-login` then names that App's bot
(`<slug>[bot]`), so ourobot finds its own status comment again.

Outputs `outcome` (the ticket job's sentence) and `pull-request` (its number, or empty).
Exit 0 when a pull request is open or nothing was asked, 1 when the cycle did not open one.

A `workflow_dispatch` event is the App's (`implementer.runs_on: actions`): its inputs name the
ticket and the run key, and the run does the cycle here, on the runner the workflow's own setup
steps prepared, pushes `ourobot/issue-N` and reports to the App with the `ourobot/cycle` check
run (`app.jobs.actions_run`); the App opens the pull request. Outputs `outcome` (ready, blocked
or satisfied), `branch` and an empty `pull-request`; exit 0 when the branch is ready, 1 when
not, 2 when the inputs are not the App's.

Before a cycle, a runner where bubblewrap cannot build the sandbox is named in one line
(`app.action.sandbox_need`), e.g. an Ubuntu 24.04 runner whose AppArmor still restricts user
namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.action.files import append_to
from app.commands.actors import is_automation, login_of
from app.commands.slash import parse_commands
from app.errors import UserError
from app.handlers.issue_fields import label_names, text_of
from app.handlers.tickets import TICKET_LABEL
from app.jobs.actions_contract import ReportError, read_inputs
from app.jobs.actions_run import DispatchedRun
from app.jobs.cycle_records import CycleRecords
from app.jobs.registry import load_job_modules
from app.jobs.ticket_cycle import TicketRun, run_ticket

EXIT_OK = 0
EXIT_NO_PULL = 1


def ticket_run(event: str, payload: Mapping[str, Any], run_id: str) -> TicketRun | None:
    """The cycle the event asks for, or None (not a ticket label, not a person, no command)."""
    issue = payload.get("issue")
    repository = payload.get("repository")
    repo = repository.get("full_name") if isinstance(repository, Mapping) else None
    if not isinstance(issue, Mapping) or not isinstance(repo, str) or "pull_request" in issue:
        return None
    if event == "issues" and payload.get("action") == "labeled":
        label = payload.get("label")
        actor = payload.get("sender")
        if not isinstance(label, Mapping) or label.get("name") != TICKET_LABEL:
            return None
    elif event == "issue_comment" and payload.get("action") == "created":
        comment = payload.get("comment")
        if not isinstance(comment, Mapping):
            return None
        actor = comment.get("user")
        if is_automation(actor, comment):
            return None
        if not any(c.verb == "implement" for c in parse_commands(comment.get("body"))):
            return None
    else:
        return None
    login = login_of(actor)
    if is_automation(actor) or login is None:
        return None
    return TicketRun(
        installation_id=None,
        repo=repo,
        number=int(issue["number"]),
        login=login,
        run_key=f"action:{run_id}",
        title=text_of(issue.get("title")),
        body=text_of(issue.get("body")),
        labels=tuple(label_names(issue.get("labels"))),
        on_actions_runner=True,
    )


def run_implement_action(env: Mapping[str, str]) -> int:
    from app.action.command import build_context, read_event

    name, payload = read_event(env)
    if name == "workflow_dispatch":
        return run_dispatched_action(env, payload)
    run = ticket_run(
        name, payload, f"{env.get('GITHUB_RUN_ID', '0')}.{env.get('GITHUB_RUN_ATTEMPT', '1')}"
    )
    if run is None:
        print(f"ourobot implement: nothing to do for {name}.{payload.get('action') or '-'}")
        append_to(env.get("GITHUB_OUTPUT"), "outcome=nothing to do\npull-request=\n")
        return EXIT_OK
    token_env = dict(env)
    if env.get("OUROBOT_APP_TOKEN"):
        token_env["GITHUB_TOKEN"] = env["OUROBOT_APP_TOKEN"]
    ctx = build_context(token_env)
    try:
        load_job_modules(ctx.settings)
        announce_sandbox_need(ctx.settings.allow_unsandboxed)
        outcome = run_ticket(ctx, run)
        record = CycleRecords(ctx.store).get(run.run_key)
    finally:
        ctx.store.close()
    number = record.pr_number if record is not None and record.pr_number else None
    line = " ".join(outcome.split())
    append_to(env.get("GITHUB_OUTPUT"), f"outcome={line}\npull-request={number or ''}\n")
    append_to(env.get("GITHUB_STEP_SUMMARY"), f"## ourobot implement\n\n{outcome}\n")
    print(f"ourobot implement: {line}")
    return EXIT_OK if number is not None else EXIT_NO_PULL


def announce_sandbox_need(allow_unsandboxed: bool) -> str | None:
    """Print what the runner lacks for the sandbox as one annotation; the line, or None."""
    from app.action.sandbox_need import annotation, sandbox_need

    need = sandbox_need(allow_unsandboxed=allow_unsandboxed)
    if need is not None:
        print(annotation(need))
    return need


def dispatched_run(payload: Mapping[str, Any], env: Mapping[str, str]) -> DispatchedRun:
    """The run the App dispatched, from the event's inputs and the runner's variables."""
    repository = payload.get("repository")
    repo = repository.get("full_name") if isinstance(repository, Mapping) else None
    repo = repo or env.get("GITHUB_REPOSITORY")
    if not isinstance(repo, str) or "/" not in repo:
        raise UserError("the workflow_dispatch event names no repository")
    try:
        number, run_key = read_inputs(payload.get("inputs"))
    except ReportError as exc:
        raise UserError(
            f"ourobot implement: {exc} (the App dispatches this workflow with the inputs "
            "`ticket` and `run_key`; see docs/examples/cycle-workflow.yml)"
        ) from None
    run_id = env.get("GITHUB_RUN_ID", "")
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    return DispatchedRun(
        repo=repo,
        number=number,
        run_key=run_key,
        run_id=int(run_id) if run_id.isdigit() else None,
        run_url=f"{server}/{repo}/actions/runs/{run_id}" if run_id.isdigit() else None,
    )


def run_dispatched_action(env: Mapping[str, str], payload: Mapping[str, Any]) -> int:
    from app.action.command import build_context
    from app.jobs.actions_run import run_dispatched

    run = dispatched_run(payload, env)
    token_env = dict(env)
    if env.get("OUROBOT_APP_TOKEN"):
        token_env["GITHUB_TOKEN"] = env["OUROBOT_APP_TOKEN"]
    ctx = build_context(token_env)
    try:
        load_job_modules(ctx.settings)
        hint = announce_sandbox_need(ctx.settings.allow_unsandboxed)
        report = run_dispatched(ctx, run, sandbox_hint=hint)
    finally:
        ctx.store.close()
    reason = " ".join(str(report.summary.get("reason") or "").split())
    append_to(
        env.get("GITHUB_OUTPUT"),
        f"outcome={report.outcome}\nbranch={report.branch}\npull-request=\n",
    )
    append_to(
        env.get("GITHUB_STEP_SUMMARY"),
        f"## ourobot implement\n\n#{report.ticket}: **{report.outcome}** on "
        f"`{report.branch}`. ourobot opens the pull request from this run's report.\n",
    )
    print(f"ourobot implement: #{report.ticket} {report.outcome} on {report.branch}: {reason}")
    return EXIT_OK if report.outcome == "ready" else EXIT_NO_PULL
