"""The run's side of `implementer.runs_on: actions`: what `ourobot action implement` does in a
`workflow_dispatch` run the App started (`app.action.implement`).

    the inputs (ticket, run key: `app.jobs.actions_contract.read_inputs`)
    -> the default branch into a bare mirror under RUNNER_TEMP, the config at that base
    -> the issue read from GitHub (the dispatch carries no text of it)
    -> the same cycle as the App's worker (`cycle_on_mirror`), in the cage, on the runner the
       workflow's own setup steps prepared
    -> `ourobot/issue-N` pushed with the run's token when the cycle made a commit
    -> the report: the `ourobot/cycle` check run on the branch's head (`publish_report`)

No pull request, label or status comment is written here: the App does those from the report,
so the permissions the workflow needs are `contents: write` and `checks: write`. Whatever goes
wrong is still reported (blocked, with the reason), so the App hears of it at once instead of at
its timeout; only a run that cannot write the check run leaves the App to its timeout.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from githubkit import GitHub
from githubkit.utils import UNSET

from app.errors import UserError
from app.jobs.actions_contract import (
    CHECK_NAME,
    CONCLUSIONS,
    Conclusion,
    Report,
    branch_for,
    report_text,
)
from app.jobs.actions_dispatch import blocked_summary
from app.jobs.context import JobContext
from app.jobs.review_inputs import Fetched, config_at_base
from app.jobs.ticket_cycle import cycle_on_mirror, summarize
from app.jobs.ticket_pull import PushRejected, push_branch
from app.loop.intake import issue_ticket
from app.workspace.mirror import RepoMirror

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DispatchedRun:
    """One dispatched run, as plain values from its event and the runner's environment."""

    repo: str
    number: int
    run_key: str
    run_id: int | None
    run_url: str | None


def run_dispatched(ctx: JobContext, run: DispatchedRun, *, sandbox_hint: str | None) -> Report:
    """Work the ticket, push its branch, report; the report as published."""
    github = ctx.github.installation(None)
    owner, name = run.repo.split("/", 1)
    info = github.rest.repos.get(owner, name).parsed_data
    clone_url, default_branch = str(info.clone_url), str(info.default_branch)
    token = ctx.github.git_token(None)
    mirror = RepoMirror(ctx.settings.data_dir, run.repo)
    base_sha = mirror.fetch_branch(clone_url, default_branch, token=token)
    branch = branch_for(run.number)
    try:
        summary = _cycle(ctx, github, run, mirror, base_sha, token)
    except Exception as exc:  # reported, so the App need not wait for its timeout
        log.exception("the cycle failed")
        summary = _blocked(run, base_sha, f"the run failed: {type(exc).__name__}: {exc}")
    if summary.get("error_class") == "sandbox" and sandbox_hint:
        summary["reason"] = f"{summary.get('reason')} ({sandbox_hint})"
    head = summary.get("head_sha")
    if isinstance(head, str):
        try:
            push_branch(mirror.path, clone_url, head, branch, token=token, force=True)
        except PushRejected as exc:
            summary = _blocked(
                run,
                base_sha,
                f"the run could not push {branch} (does the workflow grant `contents: write`?): "
                f"{exc}",
            )
    report = Report(run.run_key, run.number, branch, run.run_id, summary)
    publish_report(github, run.repo, report, on_sha=head or base_sha, details_url=run.run_url)
    return report


def _cycle(
    ctx: JobContext,
    github: GitHub[Any],
    run: DispatchedRun,
    mirror: RepoMirror,
    base_sha: str,
    token: str,
) -> dict[str, Any]:
    try:
        config = config_at_base(Fetched(mirror.path, base_sha)).capped(ctx.settings)
    except UserError as exc:
        return _blocked(run, base_sha, f"the repository's config at the base is invalid: {exc}")
    owner, name = run.repo.split("/", 1)
    issue = github.rest.issues.get(owner, name, run.number).parsed_data
    if getattr(issue, "pull_request", None) not in (None, UNSET):
        return _blocked(run, base_sha, f"#{run.number} is a pull request, not an issue")
    labels = [str(getattr(label, "name", label)) for label in issue.labels or []]
    ticket = issue_ticket(
        run.repo, run.number, title=str(issue.title), body=str(issue.body or ""), labels=labels
    )
    result, spent = cycle_on_mirror(ctx, None, mirror, base_sha, ticket, config, token=token)
    return {**summarize(result, ticket, spent), "runs_on": "actions"}


def _blocked(run: DispatchedRun, base_sha: str, reason: str) -> dict[str, Any]:
    return blocked_summary(
        reason[:2000],
        title="",
        ticket_key=f"{run.repo}#{run.number}",
        base_sha=base_sha,
        execution="error",
        error_class="actions:run",
    )


def publish_report(
    github: GitHub[Any], repo: str, report: Report, *, on_sha: str, details_url: str | None
) -> int:
    """The `ourobot/cycle` check run on `on_sha`: made in progress, then completed with the
    report, so GitHub sends the App `check_run.completed`. Its id."""
    owner, name = repo.split("/", 1)
    title, words = report_words(report)
    made = github.rest.checks.create(
        owner,
        name,
        name=CHECK_NAME,
        head_sha=on_sha,
        status="in_progress",
        external_id=report.run_key,
        details_url=details_url or UNSET,
        output={"title": title, "summary": words},
    ).parsed_data
    # On the base commit (no commit of its own) a blocked report does not paint it red.
    conclusion: Conclusion = CONCLUSIONS[report.outcome] if report.head_sha else "neutral"
    github.rest.checks.update(
        owner,
        name,
        made.id,
        conclusion=conclusion,
        output={"title": title, "summary": words, "text": report_text(report)},
    )
    return int(made.id)


def report_words(report: Report) -> tuple[str, str]:
    """The check run's title and summary: what happened, for a person."""
    summary = report.summary
    outcome = report.outcome
    if outcome == "ready":
        title = f"Ready on {report.branch}"
    elif outcome == "satisfied":
        title = "Already satisfied"
    else:
        title = "Blocked"
    lines = [
        f"The cycle for #{report.ticket} ended **{outcome}**: {summary.get('reason') or '-'}",
        "",
        f"- branch: `{report.branch}`" + (" (pushed)" if report.head_sha else " (not pushed)"),
        f"- tests: {summary.get('tests') or '-'} (at the base: {summary.get('baseline') or '-'})",
        f"- iterations: {len(summary.get('iterations') or [])}, "
        f"model calls: {summary.get('model_calls') or 0}",
        "",
        "ourobot opens the pull request (or blocks the ticket) from this report.",
    ]
    return title, "\n".join(lines)
