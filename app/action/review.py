"""`ourobot action review`: the review panel on a pull request, inside GitHub Actions.

The same job as the App's (`app.jobs.review_check.run_review`): config from the base
branch, the panel of `review.models`, one PR review and the `ourobot/review` check run on the
head, once per head and panel. What differs is where things come from: the event from
`GITHUB_EVENT_PATH` (a `pull_request` or `pull_request_target` event), the token from
`GITHUB_TOKEN` (it needs `checks: write` and `pull-requests: write`), the model keys from the
job's environment (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, base URLs), a throwaway store under
`RUNNER_TEMP` (so the ticket cap counts this run's calls only).

Writes the outputs `conclusion` (success, failure or skipped) and `reason`, and the check's
summary to the step summary. Exit 0 when the panel passed or the PR is not one ourobot reviews
(`guards.apply_to: bot` and not an `ourobot/...` branch), 1 when it failed.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

from app.action.files import append_to
from app.errors import UserError
from app.jobs.context import JobContext
from app.jobs.review_check import ReviewOutcome, ReviewRequest, run_review
from app.jobs.review_publish import load_publication

EXIT_OK = 0
EXIT_FAILED = 1
PULL_EVENTS = ("pull_request", "pull_request_target")


def run_review_action(env: Mapping[str, str]) -> int:
    from app.action.command import build_context, read_event

    name, payload = read_event(env)
    request = review_request(name, payload)
    show_progress()
    ctx = build_context(env)
    try:
        outcome = run_review(ctx, request)
        report(env, ctx, outcome)
    finally:
        ctx.store.close()
    print(f"ourobot review: {outcome.detail}")
    return EXIT_FAILED if outcome.conclusion == "failure" else EXIT_OK


class _ActionsLog(logging.Handler):
    """Log records as lines on stdout (whatever stdout is when they are written)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"ourobot {record.getMessage()}", file=sys.stdout, flush=True)


def show_progress() -> None:
    """The review job's log lines (one per model as its verdict arrives) on stdout, which is
    the Actions log: without them the step says nothing for the minutes a panel can take."""
    logger = logging.getLogger("app.jobs.review_check")
    if not any(isinstance(handler, _ActionsLog) for handler in logger.handlers):
        logger.addHandler(_ActionsLog())
    logger.setLevel(logging.INFO)


def review_request(event: str, payload: Mapping[str, Any]) -> ReviewRequest:
    """The review the event asks for; `UserError` for an event that names no pull request."""
    pull = payload.get("pull_request")
    repository = payload.get("repository")
    if event not in PULL_EVENTS or not isinstance(pull, Mapping):
        raise UserError(f"ourobot action review needs a pull_request event, got {event!r}")
    repo = repository.get("full_name") if isinstance(repository, Mapping) else None
    head = pull.get("head")
    head_sha = head.get("sha") if isinstance(head, Mapping) else None
    number = pull.get("number")
    if not isinstance(repo, str) or not isinstance(head_sha, str) or not isinstance(number, int):
        raise UserError("the event's pull_request lacks its number, head sha or repository")
    title, body = pull.get("title"), pull.get("body")
    return ReviewRequest(
        installation_id=None,
        repo=repo,
        number=number,
        head_sha=head_sha,
        trigger="action",
        title=title if isinstance(title, str) else None,
        body=body if isinstance(body, str) else "",
    )


def report(env: Mapping[str, str], ctx: JobContext, outcome: ReviewOutcome) -> None:
    """Outputs and step summary for the workflow."""
    conclusion = outcome.conclusion or ("skipped" if outcome.status == "skipped" else "")
    append_to(env.get("GITHUB_OUTPUT"), f"conclusion={conclusion}\nreason={outcome.reason or ''}\n")
    publication = load_publication(ctx.store, outcome.run_key) if outcome.run_key else None
    summary = (
        publication.check_summary if publication else f"## ourobot review\n\n{outcome.detail}\n"
    )
    append_to(env.get("GITHUB_STEP_SUMMARY"), summary)
