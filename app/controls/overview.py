"""What ourobot is doing now, read from the store (and Redis when there is one): the operator's
`ourobot status`, the status page and `/ourobot status` all show this one snapshot.

- queues: inbox rows by state (the durable inbox is the queue of record), the oldest row still
  pending, and in Redis mode the length of the Celery queue;
- halts in force;
- leases: inbox rows a worker holds and tickets' fenced leases (until when), and in Redis mode
  the effect leases and turns jobs hold (their keys and seconds left); embedded mode keeps
  those two in the server's memory;
- open cycles: the loop's runs (cycles and fix rounds) still under way, and tickets whose
  newest cycle row left a pull request that has not merged;
- spend today (UTC) per installation against the daily cap, and the per-ticket cap; which
  models cost nothing (priced 0 by the operator: scripted or local ones) and which were charged
  at the dearest price because nobody priced them, so neither reads as real dollars;
- spend per day over the last days, for the page's chart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from app.controls.halt import Halt, HaltRegistry
from app.controls.ledger import entry_of, start_of_utc_day
from app.controls.pricing import PRICE_FIELDS
from app.settings import Settings
from app.store import Store
from app.store.schema import ledger as ledger_table
from app.store.schema import loop_cycles, model_calls, ticket_leases, webhook_inbox

if TYPE_CHECKING:
    from redis import Redis

LEASE_PATTERNS = ("ourobot:effect-lease:*", "ourobot:turn:*")
MAX_LEASES = 100
CHART_DAYS = 14


@dataclass(frozen=True)
class Lease:
    kind: str  # "inbox" | "effect" | "turn"
    key: str
    until: datetime | None = None
    seconds_left: int | None = None


@dataclass(frozen=True)
class OpenCycle:
    ticket: str
    repo: str | None
    pr: int | None
    at: datetime
    outcome: str


@dataclass(frozen=True)
class DaySpend:
    day: str  # YYYY-MM-DD (UTC)
    micro_usd: int


@dataclass(frozen=True)
class Overview:
    at: datetime
    mode: str  # "embedded" | "redis"
    inbox: dict[str, int]
    oldest_pending: datetime | None
    broker_queue: int | None  # None: embedded, or Redis not reachable
    halts: list[Halt]
    leases: list[Lease]
    open_cycles: list[OpenCycle]
    spend_today: dict[str, int]  # installation id ("none": Action/CLI) -> micro-dollars
    cap_usd_per_day: float | None
    cap_usd_per_ticket: float
    days: list[DaySpend] = field(default_factory=list)
    free_today: dict[str, int] = field(default_factory=dict)  # model -> calls priced at 0
    unpriced_today: dict[str, int] = field(default_factory=dict)  # model -> micro-dollars
    notes: list[str] = field(default_factory=list)


def read_overview(
    settings: Settings,
    store: Store,
    redis: Redis | None = None,
    *,
    queue_names: Sequence[str] = (),
    now: datetime | None = None,
    days: int = CHART_DAYS,
) -> Overview:
    moment = now or datetime.now(UTC)
    notes: list[str] = []
    broker, redis_leases = None, []
    if redis is not None:
        try:
            broker = sum(int(redis.llen(name)) for name in queue_names)
            redis_leases = _redis_leases(redis)
        except Exception as exc:  # a status read must still show what the store knows
            notes.append(f"redis not readable: {type(exc).__name__}: {exc}")
    inbox, oldest, inbox_leases = _inbox(store)
    store_leases = inbox_leases + _ticket_leases(store, moment)
    return Overview(
        at=moment,
        mode="embedded" if settings.embedded else "redis",
        inbox=inbox,
        oldest_pending=oldest,
        broker_queue=broker,
        halts=HaltRegistry(store).all(),
        leases=store_leases + redis_leases,
        open_cycles=running_cycles(store) + open_cycles(store),
        spend_today=_spend_since(store, start_of_utc_day(moment)),
        cap_usd_per_day=settings.cap_usd_per_day,
        cap_usd_per_ticket=settings.cap_usd_per_ticket,
        days=spend_per_day(store, moment, days),
        notes=notes,
        **_how_priced_since(store, start_of_utc_day(moment)),
    )


def _inbox(store: Store) -> tuple[dict[str, int], datetime | None, list[Lease]]:
    table = webhook_inbox
    with store.read_session() as session:
        grouped = session.execute(select(table.c.state, func.count()).group_by(table.c.state))
        counts: dict[str, int] = {str(state): int(n) for state, n in grouped.all()}
        oldest = session.execute(
            select(func.min(table.c.received_at)).where(table.c.state == "pending")
        ).scalar_one()
        held = session.execute(
            select(table.c.delivery_id, table.c.event, table.c.lease_until)
            .where(table.c.state == "running")
            .order_by(table.c.lease_until)
            .limit(MAX_LEASES)
        ).all()
    states = {state: counts.get(state, 0) for state in ("pending", "running", "done", "failed")}
    leases = [Lease("inbox", f"{row.event} {row.delivery_id}", row.lease_until) for row in held]
    return states, oldest, leases


def _ticket_leases(store: Store, now: datetime) -> list[Lease]:
    """Tickets a cycle holds now (a lease past its expiry is nobody's)."""
    table = ticket_leases
    with store.read_session() as session:
        rows = session.execute(
            select(table.c.repo, table.c.number, table.c.expires_at)
            .where(table.c.expires_at > now)
            .order_by(table.c.expires_at)
            .limit(MAX_LEASES)
        ).all()
    return [Lease("ticket", f"{row.repo}#{row.number}", row.expires_at) for row in rows]


def running_cycles(store: Store) -> list[OpenCycle]:
    """The loop's runs not finished yet: `started` (working) or `pushed` (opening the PR)."""
    table = loop_cycles
    with store.read_session() as session:
        rows = session.execute(
            select(table).where(table.c.state != "done").order_by(table.c.started_at)
        ).all()
    return [
        OpenCycle(f"{row.repo}#{row.number}", row.repo, row.pr_number, row.started_at,
                  f"{row.kind} {row.state}")
        for row in rows
    ]  # fmt: skip


def _redis_leases(redis: Redis) -> list[Lease]:
    found: list[Lease] = []
    for pattern in LEASE_PATTERNS:
        for raw in redis.scan_iter(match=pattern, count=200):
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            kind = "effect" if name.startswith("ourobot:effect-lease:") else "turn"
            key = name.split(":", 2)[2]
            ttl = int(redis.ttl(name))
            found.append(Lease(kind, key, None, ttl if ttl >= 0 else None))
            if len(found) >= MAX_LEASES:
                return found
    return sorted(found, key=lambda lease: (lease.kind, lease.key))


def open_cycles(store: Store) -> list[OpenCycle]:
    """Tickets whose newest cycle row says a pull request is waiting, and it has not merged."""
    table = ledger_table
    with store.read_session() as session:
        cycles = session.execute(
            select(table).where(table.c.kind == "cycle").order_by(table.c.id)
        ).all()
        merged = session.execute(
            select(table.c.repo, table.c.number).where(
                table.c.kind == "merge", table.c.artifact == "merged"
            )
        ).all()
    landed = {(repo, number) for repo, number in merged}
    newest: dict[str, Any] = {}
    for row in cycles:
        newest[row.ticket or row.subject] = entry_of(row)
    found = []
    for ticket, entry in newest.items():
        pr = entry.detail.get("pr")
        pr = pr if isinstance(pr, int) else None
        if entry.outcome.artifact != "pr" or (entry.repo, pr) in landed:
            continue
        found.append(
            OpenCycle(ticket, entry.repo, pr, entry.at, str(entry.detail.get("outcome", "")))
        )
    return found


def _spend_since(store: Store, since: datetime) -> dict[str, int]:
    table = model_calls
    query = (
        select(table.c.installation_id, func.sum(table.c.cost_micro_usd))
        .where(table.c.at >= since)
        .group_by(table.c.installation_id)
    )
    with store.read_session() as session:
        rows = session.execute(query).all()
    return {("none" if owner is None else str(owner)): int(total or 0) for owner, total in rows}


def _how_priced_since(store: Store, since: datetime) -> dict[str, dict[str, int]]:
    """`free_today` (calls per model priced at 0) and `unpriced_today` (micro-dollars per
    model charged at the dearest price: no price was known), from each call's recorded price."""
    table = model_calls
    query = select(table.c.model, table.c.answered_by, table.c.price, table.c.cost_micro_usd)
    with store.read_session() as session:
        rows = session.execute(query.where(table.c.at >= since)).all()
    free: dict[str, int] = {}
    unpriced: dict[str, int] = {}
    for model, answered_by, price_json, cost in rows:
        price = json.loads(price_json) if price_json else None
        if not isinstance(price, dict):
            continue
        name = str(answered_by or model)
        if price.get("source") == "unknown":
            unpriced[name] = unpriced.get(name, 0) + int(cost)
        elif not any(price.get(kind) for kind in PRICE_FIELDS):
            free[name] = free.get(name, 0) + 1
    return {"free_today": free, "unpriced_today": unpriced}


def spend_per_day(store: Store, now: datetime, days: int) -> list[DaySpend]:
    """Micro-dollars per UTC day, all installations, the last `days` days ending today."""
    today = start_of_utc_day(now)
    first = today - timedelta(days=days - 1)
    with store.read_session() as session:
        rows = session.execute(
            select(model_calls.c.at, model_calls.c.cost_micro_usd).where(model_calls.c.at >= first)
        ).all()
    totals = {(first + timedelta(days=n)).date().isoformat(): 0 for n in range(days)}
    for at, cost in rows:
        day = at.astimezone(UTC).date().isoformat()
        if day in totals:
            totals[day] += int(cost)
    return [DaySpend(day, micro) for day, micro in totals.items()]


def overview_dict(view: Overview) -> dict[str, Any]:
    """The snapshot as `--json` prints it (money in US dollars and in micro-dollars)."""
    return {
        "at": view.at.isoformat(),
        "mode": view.mode,
        "queues": {
            "inbox": view.inbox,
            "oldest_pending": view.oldest_pending.isoformat() if view.oldest_pending else None,
            "broker": view.broker_queue,
        },
        "halts": [
            {
                "scope": h.scope,
                "reason": h.reason,
                "set_by": h.set_by,
                "set_at": h.set_at.isoformat(),
            }
            for h in view.halts
        ],
        "leases": [
            {
                "kind": lease.kind,
                "key": lease.key,
                "until": lease.until.isoformat() if lease.until else None,
                "seconds_left": lease.seconds_left,
            }
            for lease in view.leases
        ],
        "open_cycles": [
            {
                "ticket": c.ticket,
                "repo": c.repo,
                "pr": c.pr,
                "at": c.at.isoformat(),
                "outcome": c.outcome,
            }
            for c in view.open_cycles
        ],
        "spend_today": {
            "by_installation_micro_usd": view.spend_today,
            "total_micro_usd": sum(view.spend_today.values()),
            "cap_usd_per_day": view.cap_usd_per_day,
            "cap_usd_per_ticket": view.cap_usd_per_ticket,
            "free_calls_by_model": view.free_today,
            "unpriced_micro_usd_by_model": view.unpriced_today,
        },
        "spend_per_day": [{"day": d.day, "micro_usd": d.micro_usd} for d in view.days],
        "notes": view.notes,
    }
