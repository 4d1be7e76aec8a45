"""The durable webhook inbox: every verified delivery is stored before GitHub gets its 202.

GitHub sends an event once and never retries on its own, so a delivery that is only in memory
or only in a broker can be lost. The receiver records it here first; the dispatcher (Celery or
the embedded runner) is only a hint to process it soon, and the sweeper re-submits whatever is
`overdue`. Rows move pending -> running (a claim with a lease) -> done, or back to pending
after a retryable failure, or to failed when a worker gives up. A claim whose lease ran out
(a worker died mid-task) can be claimed again, so no single fault loses a delivery.

Deduplication is the table's unique key (delivery id, event, action): GitHub reuses the
delivery id when a delivery is redelivered, and shares it among the hooks of one event.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, Dialect, Row, and_, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import ReturningInsert

from app.store import Store
from app.store.ids import checked_id
from app.store.schema import webhook_bodies, webhook_inbox
from app.webhooks import body_encoding, json_body

PENDING = "pending"
RUNNING = "running"
DONE = "done"
FAILED = "failed"

# A stored error is for a person reading the row, not a full log.
MAX_ERROR_CHARS = 2000

_columns = webhook_inbox.c
# A row without its body (the body is in `webhook_bodies`, read apart).
_HEAD_COLUMNS = (
    _columns.id,
    _columns.delivery_id,
    _columns.event,
    _columns.action,
    _columns.installation_id,
    _columns.state,
    _columns.attempts,
    _columns.received_at,
)


@dataclass(frozen=True)
class Delivery:
    """A delivery whose signature the receiver verified; `body` is the exact raw bytes.

    `payload` is the body as the receiver parsed it, when it did: never stored, it only lets
    processing in the same process (embedded mode) skip parsing the body a second time.
    """

    delivery_id: str
    event: str
    action: str
    installation_id: int | None
    body: bytes
    payload: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        checked_id("installation id", self.installation_id)


@dataclass(frozen=True)
class InboxRow:
    """A stored delivery as a worker sees it."""

    id: int
    delivery_id: str
    event: str
    action: str
    installation_id: int | None
    body: bytes
    state: str
    attempts: int
    received_at: datetime

    def payload(self) -> dict[str, Any]:
        """The JSON object GitHub sent (the receiver stored only objects)."""
        parsed = json_body.loads(self.body)
        if not isinstance(parsed, dict):
            raise ValueError(f"inbox row {self.id}: body is not a JSON object")
        return parsed


class Inbox:
    """The webhook_inbox table. Every method is one short transaction; safe across processes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(self, delivery: Delivery) -> int | None:
        """Store a delivery: its new row id, or None if (delivery id, event, action) is known."""
        return self.record_many([delivery])[0]

    def record_many(self, deliveries: Sequence[Delivery]) -> list[int | None]:
        """Store several deliveries in one statement and one transaction (one disk sync).

        The answer is per delivery, in order: a row id, or None for a duplicate, including a
        duplicate of an earlier delivery in the same batch.
        """
        if not deliveries:
            return []
        now = datetime.now(UTC)
        # Compressed before the write transaction, which other writers wait behind.
        encoded = [body_encoding.encode(delivery.body) for delivery in deliveries]
        engine = self.store.engine
        # One transaction (BEGIN IMMEDIATE on SQLite, committed when the block ends) on a plain
        # connection, not an ORM session: this is the receiver's hot path.
        with engine.begin() as connection:
            if engine.dialect.name == "sqlite":
                new_ids = _insert_on_sqlite(connection, deliveries, encoded, now)
            else:
                new_ids = _insert_with_core(connection, deliveries, encoded, now)
        # Skipped rows return nothing, so answers are matched by key, not by position; `pop`
        # gives a key's id to one delivery and None to any repeat of it in the same batch.
        return [new_ids.pop(_key(delivery), None) for delivery in deliveries]

    def get(self, row_id: int) -> InboxRow | None:
        with self.store.read_session() as session:
            found = session.execute(
                select(*_HEAD_COLUMNS, webhook_bodies.c.body, webhook_bodies.c.encoding)
                .join(webhook_bodies, webhook_bodies.c.inbox_id == _columns.id)
                .where(_columns.id == row_id)
            ).one_or_none()
        if found is None:
            return None
        return _to_row(found, body_encoding.decode(bytes(found.body), found.encoding))

    def claim(self, row_id: int, lease_s: float) -> InboxRow | None:
        """Take a row to work on: pending, or running with an expired lease -> running.

        Counts the attempt. None when the row is missing, finished, failed, or leased by
        someone else; one atomic UPDATE, so two claimers never both win.
        """
        claimed = self.claim_many([row_id], lease_s)
        return claimed[0] if claimed else None

    def claim_many(
        self, row_ids: list[int], lease_s: float, *, bodies: bool = True
    ) -> list[InboxRow]:
        """`claim` for several rows in one statement; returns the rows this call won.

        With `bodies=False` the rows come back with an empty body and the write transaction
        stays short (a batch of bodies is megabytes): read the ones needed with `bodies_of`,
        which takes no write lock.
        """
        if not row_ids:
            return []
        now = datetime.now(UTC)
        claimable = _claimable(now)
        with self.store.session() as session:
            claimed = session.execute(
                update(webhook_inbox)
                .where(_columns.id.in_(row_ids), claimable)
                .values(
                    state=RUNNING,
                    attempts=_columns.attempts + 1,
                    lease_until=now + timedelta(seconds=lease_s),
                )
                .returning(*_HEAD_COLUMNS)
            ).all()
            found = _bodies(session, [row.id for row in claimed]) if bodies else {}
        order = {row_id: index for index, row_id in enumerate(row_ids)}
        return sorted(
            (_to_row(row, found.get(row.id, b"")) for row in claimed),
            key=lambda row: order[row.id],
        )

    def claimable_heads(self, row_ids: list[int]) -> list[InboxRow]:
        """The rows among these that could be claimed now, without their bodies; claims
        nothing and takes no write lock (the answer can be stale by the time it is used)."""
        if not row_ids:
            return []
        with self.store.read_session() as session:
            found = session.execute(
                select(*_HEAD_COLUMNS).where(
                    _columns.id.in_(row_ids), _claimable(datetime.now(UTC))
                )
            ).all()
        order = {row_id: index for index, row_id in enumerate(row_ids)}
        return sorted((_to_row(row) for row in found), key=lambda row: order[row.id])

    def finish_unclaimed(self, row_ids: list[int]) -> list[int]:
        """Mark done, in one statement, those of these rows that are still claimable: rows
        whose processing was found to have nothing to do. Returns the ids it finished; a row
        someone else claimed meanwhile is theirs and is left alone."""
        if not row_ids:
            return []
        now = datetime.now(UTC)
        # Core on a plain connection, as `record_many`: the embedded runner calls this once a
        # batch, between the receiver's commits; an ORM session cost a quarter more CPU
        # (1.1-1.4 ms against 0.9-1.0 ms for 100 rows).
        with self.store.engine.begin() as connection:
            finished = connection.execute(
                update(webhook_inbox)
                .where(_columns.id.in_(row_ids), _claimable(now))
                .values(
                    state=DONE,
                    attempts=_columns.attempts + 1,
                    lease_until=None,
                    finished_at=now,
                )
                .returning(_columns.id)
            ).scalars()
            return sorted(finished)

    def bodies_of(self, row_ids: list[int]) -> dict[int, bytes]:
        """The stored bodies of these rows (those that exist), read without the write lock."""
        if not row_ids:
            return {}
        with self.store.read_session() as session:
            return _bodies(session, row_ids)

    def finish_many(self, row_ids: list[int]) -> None:
        """`finish` for several rows in one statement."""
        if not row_ids:
            return
        with self.store.session() as session:
            session.execute(
                update(webhook_inbox)
                .where(_columns.id.in_(row_ids))
                .values(state=DONE, lease_until=None, finished_at=datetime.now(UTC))
            )

    def finish(self, row_id: int) -> None:
        """The row's work is done; nothing will run it again."""
        with self.store.session() as session:
            session.execute(
                update(webhook_inbox)
                .where(_columns.id == row_id)
                .values(state=DONE, lease_until=None, finished_at=datetime.now(UTC))
            )

    def fail(self, row_id: int, error: str, *, final: bool) -> None:
        """Record a failed attempt: pending again (retry later), or failed when `final`.

        A row already done stays done: a late failure report from a worker whose lease had
        expired must not resurrect work another worker completed.
        """
        now = datetime.now(UTC)
        with self.store.session() as session:
            session.execute(
                update(webhook_inbox)
                .where(_columns.id == row_id, _columns.state != DONE)
                .values(
                    state=FAILED if final else PENDING,
                    lease_until=None,
                    last_error=error[:MAX_ERROR_CHARS],
                    finished_at=now if final else None,
                )
            )

    def overdue(self, older_than_s: float, limit: int = 100) -> list[int]:
        """Rows the sweeper should submit again, oldest first.

        Pending rows received more than `older_than_s` ago (their dispatch was lost or failed)
        and running rows past their lease (their worker died).
        """
        now = datetime.now(UTC)
        stale_pending = and_(
            _columns.state == PENDING,
            _columns.received_at < now - timedelta(seconds=older_than_s),
        )
        lost_running = and_(_columns.state == RUNNING, _columns.lease_until < now)
        with self.store.read_session() as session:
            ids = session.execute(
                select(_columns.id)
                .where(or_(stale_pending, lost_running))
                .order_by(_columns.id)
                .limit(limit)
            ).scalars()
            return list(ids)


@functools.cache
def _insert_unless_known(dialect: str) -> ReturningInsert[int, str, str, str]:
    """INSERT ... ON CONFLICT DO NOTHING RETURNING the new rows' ids and keys.

    Built once per dialect; values come as parameters, which SQLAlchemy sends as one
    multi-row INSERT. Building a statement per delivery took most of the insert's CPU time.
    """
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return (
        insert(webhook_inbox)
        .on_conflict_do_nothing(
            index_elements=[_columns.delivery_id, _columns.event, _columns.action]
        )
        .returning(_columns.id, _columns.delivery_id, _columns.event, _columns.action)
    )


def _key(delivery: Delivery) -> _Key:
    return (delivery.delivery_id, delivery.event, delivery.action)


def _insert_values(delivery: Delivery, now: datetime) -> dict[str, Any]:
    return {
        "delivery_id": delivery.delivery_id,
        "event": delivery.event,
        "action": delivery.action,
        "installation_id": delivery.installation_id,
        "received_at": now,
        "state": PENDING,
        "attempts": 0,
    }


_Key = tuple[str, str, str]
_Stored = tuple[bytes, str]  # a body as stored, and its encoding


def _insert_with_core(
    connection: Connection, deliveries: Sequence[Delivery], encoded: list[_Stored], now: datetime
) -> dict[_Key, int]:
    values = [_insert_values(delivery, now) for delivery in deliveries]
    inserted = connection.execute(_insert_unless_known(connection.dialect.name), values)
    new_ids = {(row[1], row[2], row[3]): row[0] for row in inserted}
    if new_ids:
        connection.execute(
            insert(webhook_bodies),
            [
                {"inbox_id": row_id, "body": body, "encoding": encoding}
                for row_id, body, encoding in _new_bodies(deliveries, encoded, new_ids)
            ],
        )
    return new_ids


def _insert_on_sqlite(
    connection: Connection, deliveries: Sequence[Delivery], encoded: list[_Stored], now: datetime
) -> dict[_Key, int]:
    """The same two statements as `_insert_with_core`, through the driver's cursor.

    Still inside SQLAlchemy's transaction (its BEGIN IMMEDIATE, writer turn and commit), but
    without Core's per-statement compile-cache lookup, parameter processing and result
    wrapping: for a batch of nine 15 KB deliveries that was 0.69 ms of CPU against 0.36 ms
    (bench/webhook_ingest.py is where this path is measured).
    """
    received_at = _stored_time(connection.dialect)(now)
    cursor = connection.connection.cursor()
    try:
        new_ids: dict[_Key, int] = {}
        # Bounded rows per statement: older SQLite builds allow 999 bound variables.
        for start in range(0, len(deliveries), _SQLITE_ROWS_PER_INSERT):
            chunk = deliveries[start : start + _SQLITE_ROWS_PER_INSERT]
            values: list[Any] = []
            for delivery in chunk:
                values += (
                    delivery.delivery_id,
                    delivery.event,
                    delivery.action,
                    delivery.installation_id,
                    received_at,
                    PENDING,
                    0,
                )
            cursor.execute(_sqlite_insert_sql(len(chunk)), values)
            new_ids.update({(row[1], row[2], row[3]): row[0] for row in cursor.fetchall()})
        if new_ids:
            cursor.executemany(_SQLITE_INSERT_BODY, _new_bodies(deliveries, encoded, new_ids))
    finally:
        cursor.close()
    return new_ids


def _new_bodies(
    deliveries: Sequence[Delivery], encoded: list[_Stored], new_ids: dict[_Key, int]
) -> list[tuple[int, bytes, str]]:
    """(row id, stored body, encoding) of each new row; the first of repeats in a batch is the
    one stored."""
    bodies: dict[int, _Stored] = {}
    for delivery, stored in zip(deliveries, encoded, strict=True):
        row_id = new_ids.get(_key(delivery))
        if row_id is not None:
            bodies.setdefault(row_id, stored)
    return [(row_id, body, encoding) for row_id, (body, encoding) in bodies.items()]


_SQLITE_ROWS_PER_INSERT = 100
_INSERTED_COLUMNS = (
    "delivery_id", "event", "action", "installation_id", "received_at", "state", "attempts"
)  # fmt: skip
# Identifiers below come from the schema, never from input; values are bound parameters.
_SQLITE_INSERT_BODY = (
    f"INSERT INTO {webhook_bodies.name} ({webhook_bodies.c.inbox_id.name}, "  # noqa: S608
    f"{webhook_bodies.c.body.name}, {webhook_bodies.c.encoding.name}) VALUES (?, ?, ?)"
)


@functools.lru_cache(maxsize=_SQLITE_ROWS_PER_INSERT)
def _sqlite_insert_sql(rows: int) -> str:
    """INSERT ... ON CONFLICT DO NOTHING RETURNING, for `rows` rows, as `_insert_unless_known`
    builds it; column names come from the table, so a renamed column fails here, loudly."""
    names = ", ".join(_columns[name].name for name in _INSERTED_COLUMNS)
    row = "(" + ", ".join("?" * len(_INSERTED_COLUMNS)) + ")"
    key = f"{_columns.delivery_id.name}, {_columns.event.name}, {_columns.action.name}"
    returning = f"{_columns.id.name}, {key}"
    return (
        f"INSERT INTO {webhook_inbox.name} ({names}) VALUES {', '.join([row] * rows)} "  # noqa: S608
        f"ON CONFLICT ({key}) DO NOTHING RETURNING {returning}"
    )


def _stored_time(dialect: Dialect) -> Callable[[datetime], Any]:
    """How the dialect stores `received_at`: the very conversion Core applies, so rows written
    either way compare and read back alike."""
    processor = _columns.received_at.type.dialect_impl(dialect).bind_processor(dialect)
    return processor if processor is not None else (lambda value: value)


def _bodies(session: Session, row_ids: list[int]) -> dict[int, bytes]:
    if not row_ids:
        return {}
    found = session.execute(
        select(webhook_bodies.c.inbox_id, webhook_bodies.c.body, webhook_bodies.c.encoding).where(
            webhook_bodies.c.inbox_id.in_(row_ids)
        )
    ).all()
    return {row.inbox_id: body_encoding.decode(bytes(row.body), row.encoding) for row in found}


def _to_row(found: Row[*tuple[Any, ...]], body: bytes = b"") -> InboxRow:
    return InboxRow(
        id=found.id,
        delivery_id=found.delivery_id,
        event=found.event,
        action=found.action,
        installation_id=found.installation_id,
        body=body,
        state=found.state,
        attempts=found.attempts,
        received_at=found.received_at,
    )


__all__ = ["DONE", "FAILED", "PENDING", "RUNNING", "Delivery", "Inbox", "InboxRow"]


def _claimable(now: datetime) -> ColumnElement[bool]:
    """Pending, or running under a lease that has run out (its holder died)."""
    return or_(
        _columns.state == PENDING,
        and_(_columns.state == RUNNING, _columns.lease_until < now),
    )
