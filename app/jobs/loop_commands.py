"""`/ourobot implement` and `/ourobot fix [notes]`: the loop's verbs, run inside the command job.

The command job has already checked the commenter's permission with GitHub (write for both);
these run the same code as the label and the failing check, and answer with one sentence.
"""

from __future__ import annotations

from app.jobs.context import JobContext
from app.jobs.fix_round import fix_reply
from app.jobs.ticket_cycle import TicketRun, run_ticket

LOOP_VERBS = frozenset({"implement", "fix"})


def loop_reply(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    comment_id: int,
    login: str,
    verb: str,
    args: list[str],
    is_pull_request: bool,
    title: str,
    issue_body: str,
    labels: list[str],
) -> str:
    if verb == "fix":
        return fix_reply(
            ctx,
            installation_id=installation_id,
            repo=repo,
            number=number,
            comment_id=comment_id,
            login=login,
            notes=" ".join(args),
            is_pull_request=is_pull_request,
        )
    if is_pull_request:
        return "`/ourobot implement` works an issue, and this is a pull request. Nothing was done."
    run = TicketRun(
        installation_id,
        repo,
        number,
        login,
        f"command:{comment_id}",
        title,
        issue_body,
        tuple(labels),
    )
    return run_ticket(ctx, run)
