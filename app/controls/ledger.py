"""The ledger: an append-only record of what ourobot did, with typed outcomes, and model spend.

Every delivery, cycle, review verdict, merge and refusal is one `ledger` row whose outcome sits
on four separate axes (DESIGN.md §4, invariant 6), so "the review ran fine and rejected the
change" and "the review could not run" are never the same word:

    execution  ok | error | timeout | budget | infra      did the work run?
    objective  met | unmet | unknown                      did it achieve what it was for?
    review     approved | rejected | incomplete | skipped what the review panel said
    artifact   none | pr | merged                         what it left behind

Every model call (and every call a spend cap refused) is one `model_calls` row with its
tokens and its cost in micro-dollars at the price then in force; the spend caps sum these rows.
Nothing here updates or deletes a row: corrections are new rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from sqlalchemy import func, insert, select

from app.controls.pricing import Price
from app.store import Store
from app.store.ids import checked_id
from app.store.schema import ARTIFACTS, CALL_OUTCOMES, EXECUTIONS, OBJECTIVES, REVIEWS
from app.store.schema import ledger as ledger_table
from app.store.schema import model_calls as model_calls_table
from reviewers.model_client import Usage

Execution = Literal["ok", "error", "timeout", "budget", "infra"]
Objective = Literal["met", "unmet", "unknown"]
ReviewAxis = Literal["approved", "rejected", "incomplete", "skipped"]
Artifact = Literal["none", "pr", "merged"]
CallOutcome = Literal["ok", "error", "timeout", "budget"]
Kind = Literal[
    "delivery", "cycle", "review", "scope-review", "merge", "refusal", "override", "plan", "scout"
]

# The words in code and in the database's CHECK constraints must be the same words.
assert get_args(Execution) == EXECUTIONS
assert get_args(Objective) == OBJECTIVES
assert get_args(ReviewAxis) == REVIEWS
assert get_args(Artifact) == ARTIFACTS
assert get_args(CallOutcome) == CALL_OUTCOMES


@dataclass(frozen=True)
class Outcome:
    """One outcome on the four axes."""

    execution: Execution
    objective: Objective = "unknown"
    review: ReviewAxis = "skipped"
    artifact: Artifact = "none"


@dataclass(frozen=True)
class Subject:
    """What a row is about: a key naming the thing, and where it lives."""

    key: str  # e.g. a review run's effect key
    installation_id: int | None = None
    repo: str | None = None
    number: int | None = None  # issue or pull request
    ticket: str | None = None  # "owner/repo#N": what spend is counted against
    head_sha: str | None = None

    def __post_init__(self) -> None:
        checked_id("installation id", self.installation_id)
        checked_id("issue or pull request number", self.number, "int")


@dataclass(frozen=True)
class Entry:
    id: int
    at: datetime
    kind: str
    subject: str
    outcome: Outcome
    repo: str | None
    number: int | None
    ticket: str | None
    head_sha: str | None
    error_class: str | None
    detail: Mapping[str, Any]


@dataclass(frozen=True)
class ModelCall:
    """One model call as the ledger keeps it."""

    role: str  # "reviewer", "implementer", ...
    model: str
    outcome: CallOutcome
    usage: Usage = field(default_factory=Usage)
    cost_micro_usd: int = 0
    answered_by: str | None = None
    error_kind: str | None = None
    price: Price | None = None


@dataclass(frozen=True)
class CallRow:
    id: int
    at: datetime
    subject: str
    call: ModelCall
    ticket: str | None
    installation_id: int | None


def start_of_utc_day(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def entry_of(row: Any) -> Entry:
    """A `ledger` table row as an `Entry` (its detail parsed from JSON)."""
    return Entry(
        id=row.id,
        at=row.at,
        kind=row.kind,
        subject=row.subject,
        outcome=Outcome(row.execution, row.objective, row.review, row.artifact),
        repo=row.repo,
        number=row.number,
        ticket=row.ticket,
        head_sha=row.head_sha,
        error_class=row.error_class,
        detail=json.loads(row.detail) if row.detail else {},
    )


class Ledger:
    """Append and query. Safe to share between threads (each call is its own transaction)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(
        self,
        kind: Kind,
        subject: Subject,
        outcome: Outcome,
        *,
        error_class: str | None = None,
        detail: Mapping[str, Any] | None = None,
        once: bool = False,
        at: datetime | None = None,
    ) -> int | None:
        """Append one row; its id. With `once`, nothing is appended (None) when a row of this
        kind for this subject exists: a job that runs twice records its outcome once."""
        values = {
            "at": at or datetime.now(UTC),
            "kind": kind,
            "subject": subject.key,
            "installation_id": subject.installation_id,
            "repo": subject.repo,
            "number": subject.number,
            "ticket": subject.ticket,
            "head_sha": subject.head_sha,
            "execution": outcome.execution,
            "objective": outcome.objective,
            "review": outcome.review,
            "artifact": outcome.artifact,
            "error_class": error_class,
            "detail": json.dumps(dict(detail), sort_keys=True) if detail else None,
        }
        with self.store.session() as session:
            if once:
                found = session.execute(
                    select(ledger_table.c.id).where(
                        ledger_table.c.kind == kind, ledger_table.c.subject == subject.key
                    )
                ).first()
                if found is not None:
                    return None
            row = session.execute(insert(ledger_table).values(values).returning(ledger_table.c.id))
            return int(row.scalar_one())

    def record_call(self, subject: Subject, call: ModelCall, *, at: datetime | None = None) -> int:
        """Append one model call with its usage and cost."""
        price = None
        if call.price is not None:
            price = json.dumps({"source": call.price.source, **call.price.prices.as_dict()})
        values = {
            "at": at or datetime.now(UTC),
            "subject": subject.key,
            "role": call.role,
            "model": call.model,
            "answered_by": call.answered_by,
            "installation_id": subject.installation_id,
            "repo": subject.repo,
            "ticket": subject.ticket,
            "outcome": call.outcome,
            "error_kind": call.error_kind,
            "input_tokens": call.usage.input_tokens,
            "output_tokens": call.usage.output_tokens,
            "cache_read_tokens": call.usage.cache_read_tokens,
            "cache_write_tokens": call.usage.cache_write_tokens,
            "cost_micro_usd": call.cost_micro_usd,
            "price": price,
        }
        with self.store.session() as session:
            row = session.execute(
                insert(model_calls_table).values(values).returning(model_calls_table.c.id)
            )
            return int(row.scalar_one())

    # ---- the spend caps' questions ----------------------------------------------------------

    def spent_on_ticket(self, ticket: str) -> int:
        """Micro-dollars spent on `ticket` so far, by every role."""
        query = select(func.coalesce(func.sum(model_calls_table.c.cost_micro_usd), 0)).where(
            model_calls_table.c.ticket == ticket
        )
        with self.store.read_session() as session:
            return int(session.execute(query).scalar_one())

    def spent_by_installation(self, installation_id: int | None, since: datetime) -> int:
        """Micro-dollars spent for one installation (None: the Action / CLI) since `since`."""
        column = model_calls_table.c.installation_id
        owner = column.is_(None) if installation_id is None else column == installation_id
        query = select(func.coalesce(func.sum(model_calls_table.c.cost_micro_usd), 0)).where(
            owner, model_calls_table.c.at >= since
        )
        with self.store.read_session() as session:
            return int(session.execute(query).scalar_one())

    def spent_today(self, installation_id: int | None, *, now: datetime | None = None) -> int:
        """Micro-dollars spent for one installation since midnight UTC."""
        return self.spent_by_installation(
            installation_id, start_of_utc_day(now or datetime.now(UTC))
        )

    # ---- reading back -----------------------------------------------------------------------

    def entries(
        self, *, kind: str | None = None, subject: str | None = None, repo: str | None = None
    ) -> list[Entry]:
        query = select(ledger_table).order_by(ledger_table.c.id)
        if kind is not None:
            query = query.where(ledger_table.c.kind == kind)
        if subject is not None:
            query = query.where(ledger_table.c.subject == subject)
        if repo is not None:
            query = query.where(ledger_table.c.repo == repo)
        with self.store.read_session() as session:
            rows = session.execute(query).all()
        return [entry_of(row) for row in rows]

    def calls(self, *, subject: str | None = None, ticket: str | None = None) -> list[CallRow]:
        query = select(model_calls_table).order_by(model_calls_table.c.id)
        if subject is not None:
            query = query.where(model_calls_table.c.subject == subject)
        if ticket is not None:
            query = query.where(model_calls_table.c.ticket == ticket)
        with self.store.read_session() as session:
            rows = session.execute(query).all()
        return [
            CallRow(
                id=row.id,
                at=row.at,
                subject=row.subject,
                call=ModelCall(
                    role=row.role,
                    model=row.model,
                    outcome=row.outcome,
                    usage=Usage(
                        row.input_tokens,
                        row.output_tokens,
                        row.cache_read_tokens,
                        row.cache_write_tokens,
                    ),
                    cost_micro_usd=row.cost_micro_usd,
                    answered_by=row.answered_by,
                    error_kind=row.error_kind,
                ),
                ticket=row.ticket,
                installation_id=row.installation_id,
            )
            for row in rows
        ]

    def error_counts(self, *, since: datetime | None = None) -> dict[str, int]:
        """The pattern register's raw numbers: ledger rows per error class."""
        query = (
            select(ledger_table.c.error_class, func.count())
            .where(ledger_table.c.error_class.is_not(None))
            .group_by(ledger_table.c.error_class)
        )
        if since is not None:
            query = query.where(ledger_table.c.at >= since)
        with self.store.read_session() as session:
            return {str(name): int(count) for name, count in session.execute(query).all()}
