"""Recovering deliveries lost on the way in: the inbox sweeper and GitHub redelivery.

Two faults lose an event unless something looks for it afterwards:
- the receiver stored a delivery but its dispatch never reached a worker (broker down, worker
  killed mid-claim): `sweep_overdue` re-submits inbox rows that stayed unfinished;
- the receiver never answered (down, or slower than GitHub's 10 s): GitHub does not retry on
  its own, so `redeliver_failed` lists the App's recent hook deliveries and asks GitHub to
  redeliver each failed one the inbox does not have.

Both run periodically (Celery beat in Redis mode, a timer in embedded mode). Neither needs to be
exact: a re-submitted row is claimed at most once, and a redelivered event is de-duplicated by
the inbox.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from githubkit import AppAuthStrategy, GitHub
from githubkit_schemas.latest.models import HookDeliveryItem
from sqlalchemy import select

from app.controls.halt import Halted, check_halt
from app.jobs.context import JobContext, once
from app.jobs.registry import job
from app.store import Store
from app.store.schema import webhook_inbox
from app.webhooks.inbox import Inbox

logger = logging.getLogger(__name__)

REDELIVERY_JOB = "redeliver_failed_webhooks"
SWEEP_LIMIT = 100

# GitHub can redeliver only deliveries of the last three days.
REDELIVERY_WINDOW = timedelta(days=3)
# A delivery whose redeliveries keep failing is tried this often, then left alone.
MAX_REDELIVERIES = 3
PAGE_SIZE = 100
MAX_PAGES = 20


def sweep_overdue(
    store: Store, submit: Callable[[int], None], *, older_than_s: float, limit: int = SWEEP_LIMIT
) -> list[int]:
    """Submit inbox rows unfinished for `older_than_s` (or past their lease) again."""
    rows = Inbox(store).overdue(older_than_s, limit)
    for row_id in rows:
        submit(row_id)
    if rows:
        logger.info("sweeper re-submitted %d overdue inbox row(s): %s", len(rows), rows)
    return rows


@dataclass(frozen=True)
class RedeliveryReport:
    """What one redelivery pass did. `execution` is the ledger's execution axis."""

    execution: Literal["ok", "infra"]
    redelivered: tuple[int, ...] = ()  # hook delivery ids GitHub was asked to redeliver
    reason: str = ""


@job(REDELIVERY_JOB)
def redeliver_failed_webhooks(ctx: JobContext) -> None:
    """The periodic job: run `redeliver_failed` and log what it did."""
    report = redeliver_failed(ctx)
    if report.execution == "infra":
        logger.warning("webhook redelivery skipped (infra): %s", report.reason)
    elif report.redelivered:
        logger.info("asked GitHub to redeliver deliveries %s", list(report.redelivered))


def redeliver_failed(ctx: JobContext, *, now: datetime | None = None) -> RedeliveryReport:
    """Ask GitHub to redeliver recent failed deliveries the inbox does not hold.

    A delivery (by its GUID) qualifies when none of its attempts succeeded (2xx) and the inbox
    has no row for it. Each new failed attempt earns one redelivery, up to MAX_REDELIVERIES;
    the `effects` key `redeliver:<guid>:<failed attempts>` makes each ask happen once however
    often this runs. Without App credentials it does nothing and says so (`infra`).
    """
    if not ctx.settings.has_app_credentials():
        return RedeliveryReport("infra", reason="no GitHub App credentials configured")
    client = ctx.github.app()
    since = (now or datetime.now(UTC)) - REDELIVERY_WINDOW
    failed = _unrecovered_failures(ctx.store, _recent_deliveries(client, since))
    asked: list[int] = []
    for guid, attempts in failed.items():
        if len(attempts) > MAX_REDELIVERIES:
            continue
        latest = max(attempts, key=lambda item: item.delivered_at)
        try:
            check_halt(ctx, latest.installation_id)
        except Halted:
            continue
        with once(ctx, f"redeliver:{guid}:{len(attempts)}", detail=str(latest.id)) as first:
            if first:
                client.rest.apps.redeliver_webhook_delivery(latest.id)
                asked.append(latest.id)
    return RedeliveryReport("ok", redelivered=tuple(asked))


def _recent_deliveries(
    client: GitHub[AppAuthStrategy], since: datetime
) -> Iterator[HookDeliveryItem]:
    """The App's deliveries newer than `since`, newest first (GitHub's order)."""
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        if cursor is None:
            response = client.rest.apps.list_webhook_deliveries(per_page=PAGE_SIZE)
        else:
            response = client.rest.apps.list_webhook_deliveries(per_page=PAGE_SIZE, cursor=cursor)
        for item in response.parsed_data:
            if item.delivered_at < since:
                return
            yield item
        cursor = _next_cursor(response.raw_response.links.get("next", {}).get("url"))
        if cursor is None:
            return


def _next_cursor(url: str | None) -> str | None:
    if not url:
        return None
    values = parse_qs(urlsplit(url).query).get("cursor")
    return values[0] if values else None


def _unrecovered_failures(
    store: Store, items: Iterator[HookDeliveryItem]
) -> dict[str, list[HookDeliveryItem]]:
    """Failed attempts by GUID, for GUIDs with no successful attempt and no inbox row."""
    attempts: dict[str, list[HookDeliveryItem]] = defaultdict(list)
    for item in items:
        attempts[item.guid].append(item)
    unsuccessful = {
        guid: tries
        for guid, tries in attempts.items()
        if not any(_succeeded(item) for item in tries)
    }
    known = _guids_in_inbox(store, list(unsuccessful))
    return {guid: tries for guid, tries in unsuccessful.items() if guid not in known}


def _succeeded(item: HookDeliveryItem) -> bool:
    return 200 <= item.status_code < 300


def _guids_in_inbox(store: Store, guids: Sequence[str]) -> set[str]:
    if not guids:
        return set()
    column = webhook_inbox.c.delivery_id
    with store.read_session() as session:
        found = session.execute(select(column).where(column.in_(guids))).scalars()
        return {str(guid) for guid in found}
