"""The current shape of ourobot's tables, as SQLAlchemy Core `Table`s that queries use.

This describes the schema as of the newest migration. Migrations never build tables from these
objects (an old migration must create the tables of its own version, not today's); instead a test
checks that a fully migrated database matches this metadata, so the two cannot drift apart.
Adding a table: append a migration in `migrations.py` and describe the result here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.types import TypeDecorator

# Deterministic constraint names, so a later migration can drop or alter one by name.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python, whatever the backend.

    SQLite keeps no offset and hands back naive values; PostgreSQL hands back the session's
    zone. Refusing naive input keeps a local wall-clock time from being stored as if it were UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value.isoformat()} given where UTC is required")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime from the database, got {type(value).__name__}")
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


metadata = MetaData(naming_convention=NAMING_CONVENTION)

# One row per applied migration; the highest version is the schema's version.
schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("applied_at", UtcDateTime, nullable=False),
)

# Operator key/value settings that must be shared by the server and every worker.
kv = Table(
    "kv",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

# Webhook deliveries as received: the durable inbox the receiver writes before answering 202.
# A delivery is identified by (X-GitHub-Delivery, X-GitHub-Event, action): GitHub reuses the
# delivery id on redelivery and shares it across the hooks of one event.
# state: pending | running | done | failed. The body lives in `webhook_bodies`.
webhook_inbox = Table(
    "webhook_inbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("delivery_id", Text, nullable=False),
    Column("event", Text, nullable=False),
    Column("action", Text, nullable=False, server_default=""),
    Column("installation_id", BigInteger, nullable=True),
    Column("received_at", UtcDateTime, nullable=False),
    Column("state", Text, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("lease_until", UtcDateTime, nullable=True),
    Column("finished_at", UtcDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    UniqueConstraint("delivery_id", "event", "action"),
    # The sweeper's question: which unfinished rows are old or past their lease?
    Index("ix_webhook_inbox_state_received_at", "state", "received_at"),
)

# The raw bytes whose signature was verified, one row per inbox row. A table of their own:
# SQLite rewrites a whole record, overflow pages and all, when any column of it changes size,
# so every claim and finish of an inbox row used to write its body out again.
webhook_bodies = Table(
    "webhook_bodies",
    metadata,
    Column(
        "inbox_id",
        Integer,
        ForeignKey("webhook_inbox.id", ondelete="CASCADE"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("body", LargeBinary, nullable=False),
    # How `body` is stored (app.webhooks.body_encoding): "identity" or "lz4".
    Column("encoding", Text, nullable=False, server_default="identity"),
)

# Halts in force: "global" or "installation:<id>". Only an operator or the CLI lifts one.
halts = Table(
    "halts",
    metadata,
    Column("scope", Text, primary_key=True),
    Column("reason", Text, nullable=False),
    Column("set_by", Text, nullable=False),
    Column("set_at", UtcDateTime, nullable=False),
)

# Keyed side effects: a task records "did X" under a key so running it twice does X once.
effects = Table(
    "effects",
    metadata,
    Column("key", Text, primary_key=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("detail", Text, nullable=True),
)

# The values of the ledger's typed outcome axes (DESIGN.md §4, invariant 6). The check
# constraints below are built from these, in migration 3 too.
EXECUTIONS = ("ok", "error", "timeout", "budget", "infra")
OBJECTIVES = ("met", "unmet", "unknown")
REVIEWS = ("approved", "rejected", "incomplete", "skipped")
ARTIFACTS = ("none", "pr", "merged")
CALL_OUTCOMES = ("ok", "error", "timeout", "budget")


def one_of(column: str, values: tuple[str, ...]) -> str:
    """A CHECK expression: `column` holds one of `values` (fixed words, never user input)."""
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


# The append-only ledger: every delivery, cycle, review verdict, merge and refusal, with its
# outcome on four separate axes. `subject` names the thing (e.g. a review run's key);
# `error_class` feeds the pattern register; `detail` is JSON.
ledger = Table(
    "ledger",
    metadata,
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
    CheckConstraint(one_of("execution", EXECUTIONS), name="execution"),
    CheckConstraint(one_of("objective", OBJECTIVES), name="objective"),
    CheckConstraint(one_of("review", REVIEWS), name="review"),
    CheckConstraint(one_of("artifact", ARTIFACTS), name="artifact"),
    Index("ix_ledger_subject", "subject"),
    Index("ix_ledger_repo_number", "repo", "number"),
)

# Every model call (and every call the spend cap refused), with its usage and what it cost in
# micro-dollars at the price then in force (`price` is that price, JSON). The spend caps sum it.
model_calls = Table(
    "model_calls",
    metadata,
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
    CheckConstraint(one_of("outcome", CALL_OUTCOMES), name="outcome"),
    CheckConstraint("cost_micro_usd >= 0", name="cost"),
    Index("ix_model_calls_ticket", "ticket"),
    Index("ix_model_calls_installation_id_at", "installation_id", "at"),
)

# A review run's result, rendered for publishing, kept so that a rerun after a crash publishes
# the same verdict instead of asking the models again. `key` is the run's effect key.
review_results = Table(
    "review_results",
    metadata,
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

# One writer per ticket: the lease on (repo, issue number). `fence` grows with every grant, and
# a holder's writes carry the fence it was granted, so a stale holder's late write is refused.
ticket_leases = Table(
    "ticket_leases",
    metadata,
    Column("repo", Text, primary_key=True),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("holder", Text, nullable=False),
    Column("fence", Integer, nullable=False),
    Column("expires_at", UtcDateTime, nullable=False),
)

# The loop's cycles and fix rounds: one row per run (`key` names the trigger, so a retry finds
# its own row), what became of it (`state`: started, pushed, done), the result to publish again
# after a crash, and the pull request and status comment it made. The per-hour cap counts rows.
loop_cycles = Table(
    "loop_cycles",
    metadata,
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
