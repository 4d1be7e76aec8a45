"""The loop's own record of its runs: what a retry needs to finish without doing anything twice,
and what the per-repository cap on cycles per hour counts.

A run's row is keyed by its trigger (the delivery that labeled the issue, the comment that
asked), so the retry of a killed run finds the row its first attempt wrote: the cycle's result
once it was computed (the model is not asked again), whether the branch was pushed, the pull
request it opened and the status comment's id (edited, never posted again).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.store import Store
from app.store.schema import loop_cycles

HOUR = timedelta(hours=1)
# A cycle on the repository's Actions runner, from before GitHub is asked until its report
# (`app.jobs.actions_dispatch`): the ticket is busy, and the timeout sweep looks at it.
WAITING_STATES = ("dispatching", "dispatched")


@dataclass
class CycleRecord:
    key: str
    repo: str
    number: int
    kind: str  # "cycle" | "fix"
    state: str  # "started" | "dispatching" | "dispatched" | "cycled" | "pushed" | "done"
    result: dict[str, Any] | None
    pr_number: int | None
    comment_id: int | None
    started_at: datetime | None = None


@dataclass(frozen=True)
class CycleRecords:
    store: Store

    def started_within_hour(self, repo: str, *, now: datetime | None = None) -> int:
        since = (now or datetime.now(UTC)) - HOUR
        with self.store.read_session() as session:
            count = session.execute(
                select(func.count())
                .select_from(loop_cycles)
                .where(loop_cycles.c.repo == repo.lower(), loop_cycles.c.started_at >= since)
            ).scalar_one()
        return int(count)

    def get(self, key: str) -> CycleRecord | None:
        with self.store.read_session() as session:
            row = session.execute(select(loop_cycles).where(loop_cycles.c.key == key)).first()
        if row is None:
            return None
        return CycleRecord(
            row.key,
            row.repo,
            row.number,
            row.kind,
            row.state,
            json.loads(row.result) if row.result else None,
            row.pr_number,
            row.comment_id,
            row.started_at,
        )

    def start(self, key: str, repo: str, number: int, kind: str) -> CycleRecord:
        """The run's row: created now, or the one its earlier attempt left."""
        try:
            with self.store.session() as session:
                session.execute(
                    insert(loop_cycles).values(
                        key=key,
                        repo=repo.lower(),
                        number=number,
                        kind=kind,
                        started_at=datetime.now(UTC),
                        state="started",
                    )
                )
        except IntegrityError:
            pass
        found = self.get(key)
        assert found is not None
        return found

    def count(self, repo: str, number: int, kind: str, *, besides: str | None = None) -> int:
        """Runs of `kind` for this issue or pull request, other than the run `besides`."""
        with self.store.read_session() as session:
            count = session.execute(
                select(func.count())
                .select_from(loop_cycles)
                .where(
                    loop_cycles.c.repo == repo.lower(),
                    loop_cycles.c.number == number,
                    loop_cycles.c.kind == kind,
                    loop_cycles.c.key != (besides or ""),
                )
            ).scalar_one()
        return int(count)

    def waiting(self, repo: str, number: int) -> CycleRecord | None:
        """The ticket's cycle that waits for an Actions run's report, if one does."""
        found = [r for r in self.all_waiting(repo=repo) if r.number == number]
        return found[0] if found else None

    def all_waiting(self, *, repo: str | None = None) -> list[CycleRecord]:
        """Every cycle waiting for an Actions run's report (`app.jobs.actions_dispatch`)."""
        query = select(loop_cycles.c.key).where(loop_cycles.c.state.in_(WAITING_STATES))
        if repo is not None:
            query = query.where(loop_cycles.c.repo == repo.lower())
        with self.store.read_session() as session:
            keys = [row.key for row in session.execute(query.order_by(loop_cycles.c.started_at))]
        return [record for key in keys if (record := self.get(key)) is not None]

    def advance(self, record: CycleRecord, *, only_from: tuple[str, ...]) -> bool:
        """Save `record` only if its row is still in one of `only_from` (compare and set):
        of two runs moving one record on (a report and its timeout), one wins."""
        with self.store.session() as session:
            changed = session.execute(
                update(loop_cycles)
                .where(loop_cycles.c.key == record.key, loop_cycles.c.state.in_(only_from))
                .values(
                    state=record.state,
                    result=json.dumps(record.result) if record.result is not None else None,
                    pr_number=record.pr_number,
                    comment_id=record.comment_id,
                )
                .returning(loop_cycles.c.key)
            ).first()
        return changed is not None

    def save(self, record: CycleRecord) -> None:
        with self.store.session() as session:
            session.execute(
                update(loop_cycles)
                .where(loop_cycles.c.key == record.key)
                .values(
                    state=record.state,
                    result=json.dumps(record.result) if record.result is not None else None,
                    pr_number=record.pr_number,
                    comment_id=record.comment_id,
                )
            )
