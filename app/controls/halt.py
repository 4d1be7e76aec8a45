"""Halts: the operator's stop switch, outside anything a model or a pull request can change.

A halt is recorded durably in the store (the authority) and mirrored in Redis (so other
processes see it without a query and it survives a worker restart). Checks read the store:
a Redis that lost its data can never lift a halt. Scopes are "global" (an operator's panic)
and "installation:<id>" (a repository admin's panic).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import delete, or_, select
from sqlalchemy.dialects import postgresql, sqlite

from app.store import Store
from app.store.schema import halts

if TYPE_CHECKING:
    from redis import Redis

log = logging.getLogger(__name__)

GLOBAL = "global"
REDIS_PREFIX = "ourobot:halt:"


def installation_scope(installation_id: int) -> str:
    return f"installation:{installation_id}"


@dataclass(frozen=True)
class Halt:
    scope: str
    reason: str
    set_by: str
    set_at: datetime


class Halted(Exception):
    """Raised before a side effect while a halt is in force; tasks stop and do not retry."""

    def __init__(self, halt: Halt) -> None:
        super().__init__(f"halted ({halt.scope}) by {halt.set_by}: {halt.reason}")
        self.halt = halt


class HaltRegistry:
    """Set, lift and check halts. One per process; cheap to call before every side effect."""

    def __init__(self, store: Store, redis: Redis | None = None) -> None:
        self.store = store
        self.redis = redis

    def set(self, scope: str, *, reason: str, set_by: str) -> Halt:
        halt = Halt(scope=scope, reason=reason[:500], set_by=set_by, set_at=datetime.now(UTC))
        row = {"scope": scope, "reason": halt.reason, "set_by": set_by, "set_at": halt.set_at}
        with self.store.session() as session:
            dialect = session.get_bind().dialect.name
            insert = postgresql.insert(halts) if dialect == "postgresql" else sqlite.insert(halts)
            session.execute(
                insert.values(row).on_conflict_do_update(index_elements=[halts.c.scope], set_=row)
            )
        self._mirror(scope, halt.reason)
        log.warning("halt set: %s by %s", scope, set_by)
        return halt

    def clear(self, scope: str) -> bool:
        """Lift one halt; says whether there was one."""
        with self.store.session() as session:
            removed = session.execute(
                delete(halts).where(halts.c.scope == scope).returning(halts.c.scope)
            ).first()
        self._mirror(scope, None)
        if removed is not None:
            log.warning("halt lifted: %s", scope)
        return removed is not None

    def active(self, installation_id: int | None) -> Halt | None:
        """The halt that applies to work for this installation (global first), if any."""
        scopes = [GLOBAL]
        if installation_id is not None:
            scopes.append(installation_scope(installation_id))
        with self.store.read_session() as session:
            rows = session.execute(
                select(halts).where(or_(*(halts.c.scope == s for s in scopes)))
            ).all()
        found = {row.scope: Halt(row.scope, row.reason, row.set_by, row.set_at) for row in rows}
        return found.get(GLOBAL) or next(iter(found.values()), None)

    def check(self, installation_id: int | None) -> None:
        """Raise `Halted` if work for this installation must stop."""
        halt = self.active(installation_id)
        if halt is not None:
            raise Halted(halt)

    def all(self) -> list[Halt]:
        with self.store.read_session() as session:
            rows = session.execute(select(halts).order_by(halts.c.set_at)).all()
        return [Halt(row.scope, row.reason, row.set_by, row.set_at) for row in rows]

    def _mirror(self, scope: str, reason: str | None) -> None:
        # The mirror is a courtesy for other processes; the store stays the authority.
        if self.redis is None:
            return
        try:
            if reason is None:
                self.redis.delete(REDIS_PREFIX + scope)
            else:
                self.redis.set(REDIS_PREFIX + scope, reason)
            self.redis.publish(REDIS_PREFIX + "changes", scope)
        except Exception as exc:  # a Redis outage must not undo or block a durable halt
            log.warning("halt mirror to redis failed for %s: %s", scope, exc)


class _HasStoreAndRedis(Protocol):
    store: Store
    redis: Redis | None


def check_halt(ctx: _HasStoreAndRedis, installation_id: int | None) -> None:
    """Raise `Halted` if work for this installation must stop (tasks call it before effects)."""
    HaltRegistry(ctx.store, ctx.redis).check(installation_id)


def halt_cause(exc: BaseException) -> Halted | None:
    """The `Halted` behind `exc`, if any: githubkit wraps what a request hook raises."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Halted):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
