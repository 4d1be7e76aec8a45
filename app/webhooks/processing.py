"""The processing step: claim a recorded delivery, route it, enqueue its jobs, mark it done.

Celery's `ourobot.process_delivery` task (`tasks/`) and the embedded runner both call
`process_delivery`; the router it is given is `app.handlers.routes.build_router`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from app.jobs.context import JobContext
from app.jobs.registry import Job
from app.webhooks.inbox import Inbox

logger = logging.getLogger(__name__)

# Claiming an inbox row holds it this long; routing takes well under a second, so a holder
# that has not finished by then died, and the sweeper hands the row to someone else.
DELIVERY_LEASE_S = 120.0
# A delivery failing this many times is marked failed and left for a person to look at.
MAX_DELIVERY_ATTEMPTS = 10


class RouterLike(Protocol):
    """What `process_delivery` needs of `app.handlers.router.Router`."""

    def route(
        self, event: str, action: str, payload: Mapping[str, Any], *, delivery_id: str
    ) -> list[Job]: ...


def process_delivery(
    ctx: JobContext, router: RouterLike, row_id: int, enqueue: Callable[[Job], None]
) -> bool:
    """Claim inbox row `row_id`, route it, enqueue its jobs, mark it done.

    Returns False when the row is not claimable (done, failed, or leased by another run). On
    an exception the row goes back to pending (or failed after MAX_DELIVERY_ATTEMPTS) and the
    exception propagates; the sweeper re-submits pending rows. Enqueueing a row's jobs twice is
    harmless because jobs are idempotent.
    """
    inbox = Inbox(ctx.store)
    row = inbox.claim(row_id, DELIVERY_LEASE_S)
    if row is None:
        logger.debug("inbox row %d is not claimable; skipped", row_id)
        return False
    try:
        jobs = router.route(row.event, row.action, row.payload(), delivery_id=row.delivery_id)
        for planned in jobs:
            enqueue(planned)
    except Exception as exc:
        final = row.attempts >= MAX_DELIVERY_ATTEMPTS
        inbox.fail(row_id, f"{type(exc).__name__}: {exc}"[:1000], final=final)
        logger.warning(
            "inbox row %d (%s %s) failed on attempt %d%s: %s",
            row_id,
            row.event,
            row.delivery_id,
            row.attempts,
            " (final)" if final else "",
            exc,
        )
        raise
    inbox.finish(row_id)
    logger.info("inbox row %d (%s %s): %d job(s)", row_id, row.event, row.delivery_id, len(jobs))
    return True
