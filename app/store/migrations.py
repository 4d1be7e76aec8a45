"""Versioned schema migrations: an ordered list, applied one transaction each, recorded.

To change the schema, append a `Migration` with the next version to `MIGRATIONS` and describe
the resulting tables in `schema.py`. Never edit or reorder an applied migration: databases in
the field have recorded it by version and name. A migration builds its own `Table` objects (the
tables as of its version), never `schema.metadata`, which describes only the newest schema.

The server and the workers start together and all call `migrate`. Each step re-reads the
recorded version under a database-wide lock (a PostgreSQL advisory transaction lock, SQLite's
`BEGIN IMMEDIATE`), so every migration runs exactly once whoever gets there first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Connection,
    Engine,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    insert,
    inspect,
    select,
)

from app.errors import ConfigError
from app.store.engine import BEGIN_DEFERRED, BEGIN_IMMEDIATE, SQLITE_BEGIN
from app.store.schema import NAMING_CONVENTION, UtcDateTime, schema_version

logger = logging.getLogger(__name__)

# Key of the PostgreSQL advisory lock serialising migrations: "ourobot" in ASCII.
MIGRATION_LOCK_KEY = 0x6F75726F626F74
MAX_NAME_LENGTH = 200  # the width of schema_version.name


@dataclass(frozen=True)
class Migration:
    """One schema step. `upgrade` runs inside the transaction that records it."""

    version: int
    name: str
    upgrade: Callable[[Connection], None]


def _v1_schema_version_and_kv(connection: Connection) -> None:
    tables = MetaData(naming_convention=NAMING_CONVENTION)
    Table(
        "schema_version",
        tables,
        Column("version", Integer, primary_key=True, autoincrement=False),
        Column("name", String(MAX_NAME_LENGTH), nullable=False),
        Column("applied_at", UtcDateTime, nullable=False),
    )
    Table(
        "kv",
        tables,
        Column("key", Text, primary_key=True),
        Column("value", Text, nullable=False),
        Column("updated_at", UtcDateTime, nullable=False),
    )
    tables.create_all(connection, checkfirst=False)


def _v2_webhook_inbox_halts_effects(connection: Connection) -> None:
    tables = MetaData(naming_convention=NAMING_CONVENTION)
    Table(
        "webhook_inbox",
        tables,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("delivery_id", Text, nullable=False),
        Column("event", Text, nullable=False),
        Column("action", Text, nullable=False, server_default=""),
        Column("installation_id", BigInteger, nullable=True),
        Column("body", LargeBinary, nullable=False),
        Column("received_at", UtcDateTime, nullable=False),
        Column("state", Text, nullable=False),
        Column("attempts", Integer, nullable=False, server_default="0"),
        Column("lease_until", UtcDateTime, nullable=True),
        Column("finished_at", UtcDateTime, nullable=True),
        Column("last_error", Text, nullable=True),
        UniqueConstraint("delivery_id", "event", "action"),
        Index("ix_webhook_inbox_state_received_at", "state", "received_at"),
    )
    Table(
        "halts",
        tables,
        Column("scope", Text, primary_key=True),
        Column("reason", Text, nullable=False),
        Column("set_by", Text, nullable=False),
        Column("set_at", UtcDateTime, nullable=False),
    )
    Table(
        "effects",
        tables,
        Column("key", Text, primary_key=True),
        Column("created_at", UtcDateTime, nullable=False),
        Column("detail", Text, nullable=True),
    )
    tables.create_all(connection, checkfirst=False)


def _v3_ledger_model_calls_review_results(connection: Connection) -> None:
    # The outcome words as of this version, spelled out: a later schema may add words with
    # a migration of its own, never by changing what this one created.
    def one_of(column: str, *values: str) -> str:
        return f"{column} IN ({', '.join(repr(value) for value in values)})"

    tables = MetaData(naming_convention=NAMING_CONVENTION)
    Table(
        "ledger",
        tables,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("at", UtcDateTime, nullable=False),
        Column("kind", Text, nullable=False),
        Column("subject", Text, nullable=False),
        Column("installation_id", BigInteger, nullable=True),
        Column("repo", Text, nullable=True),
        Column("number", Integer, nullable=True),
        Column("ticket", Text, nullable=True),
        Column("head_sha", Text, nullable=True),
        Column("execution", Text, nullable=False),
        Column("objective", Text, nullable=False),
        Column("review", Text, nullable=False),
        Column("artifact", Text, nullable=False),
        Column("error_class", Text, nullable=True),
        Column("detail", Text, nullable=True),
        CheckConstraint(
            one_of("execution", "ok", "error", "timeout", "budget", "infra"), name="execution"
        ),
        CheckConstraint(one_of("objective", "met", "unmet", "unknown"), name="objective"),
        CheckConstraint(
            one_of("review", "approved", "rejected", "incomplete", "skipped"), name="review"
        ),
        CheckConstraint(one_of("artifact", "none", "pr", "merged"), name="artifact"),
        Index("ix_ledger_subject", "subject"),
        Index("ix_ledger_repo_number", "repo", "number"),
    )
    Table(
        "model_calls",
        tables,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("at", UtcDateTime, nullable=False),
        Column("subject", Text, nullable=False),
        Column("role", Text, nullable=False),
        Column("model", Text, nullable=False),
        Column("answered_by", Text, nullable=True),
        Column("installation_id", BigInteger, nullable=True),
        Column("repo", Text, nullable=True),
        Column("ticket", Text, nullable=True),
        Column("outcome", Text, nullable=False),
        Column("error_kind", Text, nullable=True),
        Column("input_tokens", Integer, nullable=False),
        Column("output_tokens", Integer, nullable=False),
        Column("cache_read_tokens", Integer, nullable=False),
        Column("cache_write_tokens", Integer, nullable=False),
        Column("cost_micro_usd", BigInteger, nullable=False),
        Column("price", Text, nullable=True),
        CheckConstraint(one_of("outcome", "ok", "error", "timeout", "budget"), name="outcome"),
        CheckConstraint("cost_micro_usd >= 0", name="cost"),
        Index("ix_model_calls_ticket", "ticket"),
        Index("ix_model_calls_installation_id_at", "installation_id", "at"),
    )
    Table(
        "review_results",
        tables,
        Column("key", Text, primary_key=True),
        Column("created_at", UtcDateTime, nullable=False),
        Column("repo", Text, nullable=False),
        Column("number", Integer, nullable=False),
        Column("head_sha", Text, nullable=False),
        Column("panel", Text, nullable=False),
        Column("conclusion", Text, nullable=False),
        Column("reason", Text, nullable=False),
        Column("publication", Text, nullable=False),
        Index("ix_review_results_repo_head_sha", "repo", "head_sha"),
    )
    tables.create_all(connection, checkfirst=False)


def _v4_webhook_bodies(connection: Connection) -> None:
    # SQLite rewrote each 10-25 KB body whenever an inbox row's state changed (claim, finish):
    # the bodies move out, and the inbox rows become small.
    tables = MetaData(naming_convention=NAMING_CONVENTION)
    Table("webhook_inbox", tables, Column("id", Integer, primary_key=True))
    bodies = Table(
        "webhook_bodies",
        tables,
        Column(
            "inbox_id",
            Integer,
            ForeignKey("webhook_inbox.id", ondelete="CASCADE"),
            primary_key=True,
            autoincrement=False,
        ),
        Column("body", LargeBinary, nullable=False),
    )
    bodies.create(connection, checkfirst=False)
    connection.exec_driver_sql(
        "INSERT INTO webhook_bodies (inbox_id, body) SELECT id, body FROM webhook_inbox"
    )
    connection.exec_driver_sql("ALTER TABLE webhook_inbox DROP COLUMN body")


def _v5_body_encoding(connection: Connection) -> None:
    # Bodies are stored compressed from now on (app.webhooks.body_encoding); the rows already there
    # stay as they are, and say so.
    connection.exec_driver_sql(
        "ALTER TABLE webhook_bodies ADD COLUMN encoding TEXT NOT NULL DEFAULT 'identity'"
    )


def _v6_ticket_leases_and_loop_cycles(connection: Connection) -> None:
    tables = MetaData(naming_convention=NAMING_CONVENTION)
    Table(
        "ticket_leases",
        tables,
        Column("repo", Text, primary_key=True),
        Column("number", Integer, primary_key=True, autoincrement=False),
        Column("holder", Text, nullable=False),
        Column("fence", Integer, nullable=False),
        Column("expires_at", UtcDateTime, nullable=False),
    )
    Table(
        "loop_cycles",
        tables,
        Column("key", Text, primary_key=True),
        Column("repo", Text, nullable=False),
        Column("number", Integer, nullable=False),
        Column("kind", Text, nullable=False),
        Column("started_at", UtcDateTime, nullable=False),
        Column("state", Text, nullable=False),
        Column("result", Text, nullable=True),
        Column("pr_number", Integer, nullable=True),
        Column("comment_id", BigInteger, nullable=True),
        Index("ix_loop_cycles_repo_started_at", "repo", "started_at"),
    )
    tables.create_all(connection, checkfirst=False)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "schema_version and kv", _v1_schema_version_and_kv),
    Migration(2, "webhook_inbox, halts and effects", _v2_webhook_inbox_halts_effects),
    Migration(3, "ledger, model_calls and review_results", _v3_ledger_model_calls_review_results),
    Migration(4, "webhook bodies in a table of their own", _v4_webhook_bodies),
    Migration(5, "webhook bodies say how they are encoded", _v5_body_encoding),
    Migration(6, "ticket leases and loop cycles", _v6_ticket_leases_and_loop_cycles),
)


def latest_version(migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """The schema version this code brings a database to."""
    return len(migrations)


def current_version(engine: Engine) -> int:
    """The database's schema version: 0 for a database ourobot has never migrated."""
    with engine.connect() as connection:
        connection.execution_options(**{SQLITE_BEGIN: BEGIN_DEFERRED})
        with connection.begin():
            recorded = _recorded(connection)
    return max(recorded, default=0)


def migrate(engine: Engine, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the pending migrations, each in its own locked transaction; return their versions.

    Refuses (ConfigError) a database that is newer than this code, or whose record disagrees
    with it (a missing version, a different name), rather than guessing.
    """
    _check_sequence(migrations)
    applied: list[int] = []
    with engine.connect() as connection:
        connection.execution_options(**{SQLITE_BEGIN: BEGIN_IMMEDIATE})
        while (step := _apply_next(connection, migrations)) is not None:
            applied.append(step.version)
            logger.info("applied schema migration %d (%s)", step.version, step.name)
    return applied


def _apply_next(connection: Connection, migrations: Sequence[Migration]) -> Migration | None:
    with connection.begin():
        _lock(connection)
        recorded = _recorded(connection)
        _check_recorded(recorded, migrations)
        if len(recorded) == len(migrations):
            return None
        step = migrations[len(recorded)]
        step.upgrade(connection)
        connection.execute(
            insert(schema_version).values(
                version=step.version, name=step.name, applied_at=datetime.now(UTC)
            )
        )
    return step


def _lock(connection: Connection) -> None:
    # SQLite needs nothing more: BEGIN IMMEDIATE already holds the database's write lock.
    if connection.dialect.name == "postgresql":
        connection.execute(select(func.pg_advisory_xact_lock(MIGRATION_LOCK_KEY)))


def _recorded(connection: Connection) -> dict[int, str]:
    if not inspect(connection).has_table(schema_version.name):
        return {}
    rows = connection.execute(select(schema_version.c.version, schema_version.c.name))
    return {version: name for version, name in rows}


def _check_recorded(recorded: Mapping[int, str], migrations: Sequence[Migration]) -> None:
    if not recorded:
        return
    newest, known = max(recorded), len(migrations)
    if newest > known:
        raise ConfigError(
            f"database schema is at version {newest}, this ourobot knows up to {known}: "
            "upgrade ourobot"
        )
    expected = set(range(1, newest + 1))
    odd = sorted(expected.symmetric_difference(recorded))
    if odd:
        raise ConfigError(
            f"database schema_version is inconsistent: it records version {newest} but not "
            f"exactly versions 1..{newest} (odd: {', '.join(map(str, odd))}); "
            "it was changed outside ourobot"
        )
    for step in migrations[:newest]:
        if recorded[step.version] != step.name:
            raise ConfigError(
                f"database schema version {step.version} was applied as "
                f"{recorded[step.version]!r}, this ourobot calls it {step.name!r}: "
                "the database was migrated by a different ourobot build"
            )


def _check_sequence(migrations: Sequence[Migration]) -> None:
    """A malformed migration list is a programming error, caught before touching a database."""
    for position, step in enumerate(migrations, start=1):
        if step.version != position:
            raise ValueError(f"migration {step.name!r} has version {step.version}, not {position}")
        if not step.name or len(step.name) > MAX_NAME_LENGTH or "\n" in step.name:
            raise ValueError(f"migration {step.version} needs a one-line name of 1-200 characters")
