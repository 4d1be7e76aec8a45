"""The pattern register: recurring failure classes, counted from the ledger, so repairs target
classes rather than single incidents (DESIGN.md §4, invariant 6).

A class is derived from what a row already says, by fixed rules and nothing else:
- a row's `error_class` (`review:fetch`, `iterations`, `budget`, `merge-tree-mismatch`, ...) is
  its class;
- every refusal a cycle records (`detail.refusals[].rule`: the iteration guard, a protected
  path, test-tamper) is one failure of class `refusal:<rule>`, and so is a `refusal` row's rule;
  the ticket job's rows list them per iteration (`detail.iterations[].refusals`, "rule path"),
  where each rule counts once per iteration;
- a merge attempt that did not merge is `merge:<status>` (`conflict`, `head-moved`, ...);
- a cycle that ended `blocked` or `needs-human` with no class of its own is `cycle:<outcome>`.
Each class keeps its count and its first and last example, oldest first by first sighting.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select

from app.controls.ledger import Entry, entry_of
from app.store import Store
from app.store.schema import ledger as ledger_table

EXAMPLE_CHARS = 300
RECURRING = 2


@dataclass(frozen=True)
class Example:
    ledger_id: int
    at: datetime
    repo: str | None
    number: int | None
    subject: str
    text: str  # what the row said about this failure (untrusted: shown escaped)


@dataclass(frozen=True)
class Pattern:
    error_class: str
    count: int
    first: Example
    last: Example

    @property
    def status(self) -> str:
        return "recurring" if self.count >= RECURRING else "seen-once"


def failures(entry: Entry) -> Iterator[tuple[str, str]]:
    """The (class, text) failures one ledger row stands for, by the rules above."""
    detail = entry.detail
    if entry.error_class:
        yield entry.error_class, _text(detail.get("reason") or detail.get("problem") or "")
    refusals = detail.get("refusals")
    if isinstance(refusals, list):
        for refusal in refusals:
            if isinstance(refusal, dict) and isinstance(refusal.get("rule"), str):
                where = f"{refusal.get('path') or ''}: " if refusal.get("path") else ""
                yield f"refusal:{refusal['rule']}", _text(f"{where}{refusal.get('reason', '')}")
    yield from _iteration_refusals(detail.get("iterations"))
    if entry.kind == "refusal" and not entry.error_class and isinstance(detail.get("rule"), str):
        yield f"refusal:{detail['rule']}", _text(detail.get("reason", ""))
    if entry.kind == "merge" and entry.outcome.artifact != "merged":
        status = detail.get("status")
        if isinstance(status, str) and status != "merged":
            yield f"merge:{status}", _text(detail.get("message") or detail.get("reason") or "")
    outcome = detail.get("outcome")
    if entry.kind == "cycle" and not entry.error_class and outcome in ("blocked", "needs-human"):
        yield f"cycle:{outcome}", _text(detail.get("reason", ""))


def _iteration_refusals(iterations: object) -> Iterator[tuple[str, str]]:
    for iteration in iterations if isinstance(iterations, list) else ():
        refusals = iteration.get("refusals") if isinstance(iteration, dict) else None
        paths: dict[str, list[str]] = {}
        for refusal in refusals if isinstance(refusals, list) else ():
            if isinstance(refusal, str) and refusal.split():
                rule, _, path = refusal.strip().partition(" ")
                paths.setdefault(rule, [])
                if path.strip() not in ("", "-"):
                    paths[rule].append(path.strip())
        for rule, where in paths.items():
            yield (
                f"refusal:{rule}",
                _text(f"iteration {iteration.get('number')}: {', '.join(where)}"),
            )


def register(entries: Iterable[Entry]) -> list[Pattern]:
    """Count `entries` (oldest first) into classes."""
    counts: dict[str, int] = {}
    first: dict[str, Example] = {}
    last: dict[str, Example] = {}
    for entry in entries:
        for name, text in failures(entry):
            example = Example(entry.id, entry.at, entry.repo, entry.number, entry.subject, text)
            counts[name] = counts.get(name, 0) + 1
            first.setdefault(name, example)
            last[name] = example
    return [Pattern(name, counts[name], first[name], last[name]) for name in first]


def read_register(
    store: Store, *, repo: str | None = None, since: datetime | None = None
) -> list[Pattern]:
    """The register over the store's ledger (optionally one repository, or since a time)."""
    table = ledger_table
    # Only rows that can stand for a failure: the rules above look at nothing else.
    query = (
        select(table)
        .where(
            or_(
                table.c.error_class.is_not(None),
                table.c.kind.in_(("cycle", "refusal")),
                (table.c.kind == "merge") & (table.c.artifact != "merged"),
            )
        )
        .order_by(table.c.at, table.c.id)
    )
    if repo is not None:
        query = query.where(table.c.repo == repo)
    if since is not None:
        query = query.where(table.c.at >= since)
    with store.read_session() as session:
        rows = session.execute(query).all()
    return register(entry_of(row) for row in rows)


def pattern_dict(pattern: Pattern) -> dict[str, Any]:
    return {
        "error_class": pattern.error_class,
        "count": pattern.count,
        "status": pattern.status,
        "first": _example_dict(pattern.first),
        "last": _example_dict(pattern.last),
    }


def _example_dict(example: Example) -> dict[str, Any]:
    return {
        "ledger_id": example.ledger_id,
        "at": example.at.isoformat(),
        "repo": example.repo,
        "number": example.number,
        "subject": example.subject,
        "text": example.text,
    }


def _text(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"
