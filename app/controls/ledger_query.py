"""Reading the ledger back for an operator: filters by repository, ticket, outcome and time.

The filter words come from a person (`ourobot ledger --outcome merged --since 24h`), so each is
checked here and a bad one is a `UserError` naming it, before any query runs. The four outcome
axes use distinct words (`ok`, `met`, `approved`, `merged`, ...), so `--outcome WORD` names its
axis by itself; `axis=word` is accepted too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, or_, select

from app.controls.ledger import Entry, entry_of
from app.errors import UserError
from app.store import Store
from app.store.schema import ARTIFACTS, EXECUTIONS, OBJECTIVES, REVIEWS
from app.store.schema import ledger as ledger_table

AXES: dict[str, tuple[str, ...]] = {
    "execution": EXECUTIONS,
    "objective": OBJECTIVES,
    "review": REVIEWS,
    "artifact": ARTIFACTS,
}
KINDS = ("delivery", "cycle", "review", "scope-review", "merge", "refusal", "override")
_AXIS_OF = {word: axis for axis, words in AXES.items() for word in words}
_REPO = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
_TICKET = re.compile(
    r"^(?:(?P<repo>[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100})#)?(?P<n>[0-9]{1,9})$"
)
_RELATIVE = re.compile(r"^(?P<n>[0-9]{1,6})(?P<unit>[smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
MAX_LIMIT = 10_000


@dataclass(frozen=True)
class LedgerFilter:
    """Which rows to show; every field None (or empty) means "any"."""

    repo: str | None = None
    number: int | None = None  # a ticket or pull request number in `repo`
    outcomes: tuple[tuple[str, str], ...] = ()  # (axis, word): every one must hold
    kinds: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 200


def parse_repo(text: str) -> str:
    if not _REPO.match(text):
        raise UserError(f"--repo {text!r}: expected owner/name")
    return text


def parse_ticket(text: str, repo: str | None) -> tuple[str, int]:
    """`owner/name#N`, or `N` with --repo: the repository and the number."""
    match = _TICKET.match(text.strip())
    if match is None:
        raise UserError(f"--ticket {text!r}: expected owner/name#N, or N together with --repo")
    found = match.group("repo") or repo
    if found is None:
        raise UserError(f"--ticket {text!r}: a bare number needs --repo owner/name")
    if repo is not None and found.lower() != repo.lower():
        raise UserError(f"--ticket {text!r} names another repository than --repo {repo}")
    return found, int(match.group("n"))


def parse_outcome(text: str) -> tuple[str, str]:
    """`merged`, or `artifact=merged`: the axis and the word."""
    axis, _, word = text.partition("=") if "=" in text else ("", "", text)
    word = word.strip().lower()
    if axis:
        axis = axis.strip().lower()
        if axis not in AXES:
            raise UserError(f"--outcome {text!r}: unknown axis; axes are {', '.join(AXES)}")
        if word not in AXES[axis]:
            raise UserError(f"--outcome {text!r}: {axis} is one of {', '.join(AXES[axis])}")
        return axis, word
    if word not in _AXIS_OF:
        words = ", ".join(w for words in AXES.values() for w in words)
        raise UserError(f"--outcome {text!r}: not an outcome; outcomes are {words}")
    return _AXIS_OF[word], word


def parse_kind(text: str) -> str:
    if text not in KINDS:
        raise UserError(f"--kind {text!r}: kinds are {', '.join(KINDS)}")
    return text


def parse_time(text: str, *, now: datetime, option: str) -> datetime:
    """An ISO date or time (UTC unless it says otherwise), or an age such as 30m, 24h, 7d."""
    relative = _RELATIVE.match(text.strip())
    if relative is not None:
        amount = int(relative.group("n"))
        return now - timedelta(**{_UNITS[relative.group("unit")]: amount})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UserError(
            f"{option} {text!r}: expected an ISO date or time (2026-12-01, "
            "2026-12-01T09:30) or an age (30m, 24h, 7d)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def parse_limit(value: int) -> int:
    if not 1 <= value <= MAX_LIMIT:
        raise UserError(f"--limit {value}: expected 1 to {MAX_LIMIT}")
    return value


def search(store: Store, wanted: LedgerFilter) -> list[Entry]:
    """The newest `limit` rows that match, oldest first (by time, then by id)."""
    table = ledger_table
    query = select(table).order_by(table.c.at.desc(), table.c.id.desc()).limit(wanted.limit)
    if wanted.repo is not None:
        query = query.where(table.c.repo == wanted.repo)
    if wanted.number is not None:
        # A ticket's own rows carry its key; rows about its issue or PR carry the number.
        key = f"{wanted.repo}#{wanted.number}"
        query = query.where(or_(table.c.ticket == key, table.c.number == wanted.number))
    for axis, word in wanted.outcomes:
        query = query.where(table.c[axis] == word)
    if wanted.kinds:
        query = query.where(table.c.kind.in_(wanted.kinds))
    if wanted.since is not None:
        query = query.where(table.c.at >= wanted.since)
    if wanted.until is not None:
        query = query.where(and_(table.c.at < wanted.until))
    with store.read_session() as session:
        rows = session.execute(query).all()
    return [entry_of(row) for row in reversed(rows)]


def entry_dict(entry: Entry) -> dict[str, object]:
    """One row as `--json` and the status page show it."""
    outcome = entry.outcome
    return {
        "id": entry.id,
        "at": entry.at.isoformat(),
        "kind": entry.kind,
        "subject": entry.subject,
        "repo": entry.repo,
        "number": entry.number,
        "ticket": entry.ticket,
        "head_sha": entry.head_sha,
        "outcome": {
            "execution": outcome.execution,
            "objective": outcome.objective,
            "review": outcome.review,
            "artifact": outcome.artifact,
        },
        "error_class": entry.error_class,
        "detail": dict(entry.detail),
    }
