"""One writer per ticket: a lease on (repo, issue) with a fencing token.

A cycle or a fix round takes the lease before it does anything and holds it until it ends.
The lease expires (a killed worker cannot keep it forever) and every grant increases the
ticket's `fence`. A holder asks `check` with the fence it was granted before each write; a
holder whose lease expired and was granted to someone else gets `StaleLease` and writes
nothing, however late it wakes up.

A holder is named by the run's key, not by the process: the retry of a killed run has the
same key, so it takes its own lease back at once (with a new fence) instead of waiting for it
to expire, while a second trigger for the same ticket finds it held.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from app.store import Store
from app.store.schema import ticket_leases


class StaleLease(Exception):
    """This holder's lease on the ticket was granted to another run: write nothing."""


@dataclass(frozen=True)
class Lease:
    repo: str
    number: int
    holder: str
    fence: int


@dataclass(frozen=True)
class TicketLeases:
    store: Store

    def acquire(self, repo: str, number: int, holder: str, *, ttl_s: float) -> Lease | None:
        """The lease for `holder`, or None while another holder's lease is in force."""
        now = datetime.now(UTC)
        expires = now + timedelta(seconds=ttl_s)
        key = and_(ticket_leases.c.repo == repo.lower(), ticket_leases.c.number == number)
        with self.store.session() as session:
            granted = session.execute(
                update(ticket_leases)
                .where(key)
                .where(or_(ticket_leases.c.holder == holder, ticket_leases.c.expires_at < now))
                .values(holder=holder, fence=ticket_leases.c.fence + 1, expires_at=expires)
                .returning(ticket_leases.c.fence)
            ).first()
            if granted is not None:
                return Lease(repo, number, holder, int(granted[0]))
            if session.execute(select(ticket_leases.c.fence).where(key)).first() is not None:
                return None
        try:
            with self.store.session() as session:
                session.execute(
                    insert(ticket_leases).values(
                        repo=repo.lower(),
                        number=number,
                        holder=holder,
                        fence=1,
                        expires_at=expires,
                    )
                )
        except IntegrityError:  # another run inserted it first: theirs
            return None
        return Lease(repo, number, holder, 1)

    def check(self, lease: Lease) -> None:
        """Raise `StaleLease` unless `lease` is still the one in force."""
        with self.store.read_session() as session:
            row = session.execute(
                select(ticket_leases.c.holder, ticket_leases.c.fence).where(
                    ticket_leases.c.repo == lease.repo.lower(),
                    ticket_leases.c.number == lease.number,
                )
            ).first()
        if row is None or row.holder != lease.holder or int(row.fence) != lease.fence:
            raise StaleLease(
                f"the lease on {lease.repo}#{lease.number} (fence {lease.fence}) was taken over"
            )

    def release(self, lease: Lease) -> None:
        """Give the lease up, only if it is still ours. The row stays (expired), so the fence
        keeps growing: a fence is never granted twice."""
        with self.store.session() as session:
            session.execute(
                update(ticket_leases)
                .where(
                    ticket_leases.c.repo == lease.repo.lower(),
                    ticket_leases.c.number == lease.number,
                    ticket_leases.c.holder == lease.holder,
                    ticket_leases.c.fence == lease.fence,
                )
                .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
            )
