"""Which entry of a list counts: per key (a check's name, a reviewer's login), the one with the
highest id among those that count (ids increase with time).

An entry whose key cannot be read may belong to any key, so it makes a key's answer unknown
when it could be that key's latest (its id is higher, or unreadable). An entry that provably
does not count (a check run on another commit, a COMMENTED review) is set aside before any of
its other fields are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from app.gate.state import Field, Malformed

Counts = Callable[[Field], bool]
"""Whether an entry counts; raises Malformed when a field it needs is broken."""


def _id(entry: Field) -> int:
    return entry.get("id").integer(minimum=1)


def latest_of(entries: Iterable[Field], counts: Counts) -> Field | None:
    """The counting entry with the highest id, or None; raises Malformed when the answer hangs
    on a broken field (an id, a duplicate id, or an entry that may or may not count)."""
    ordered: list[tuple[int, Field]] = []
    seen: dict[int, Field] = {}
    for entry in entries:
        ident = _id(entry)
        if ident in seen:
            raise Malformed(f"{seen[ident].path} and {entry.path} have the same id {ident}")
        seen[ident] = entry
        ordered.append((ident, entry))
    for _, entry in sorted(ordered, key=lambda pair: pair[0], reverse=True):
        if counts(entry):
            return entry
    return None


@dataclass
class Keyed:
    """A list's entries grouped by key; `unkeyed` holds those whose key cannot be read."""

    what: str  # "check run", "status", "review" (for messages)
    groups: dict[str, list[Field]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # key -> the spelling first seen
    unkeyed: list[tuple[Field, Malformed]] = field(default_factory=list)
    # Ids are unique across a whole list on GitHub: two entries sharing one are both suspect.
    clashes: dict[str, Malformed] = field(default_factory=dict)
    _ids: dict[int, tuple[str, Field]] = field(default_factory=dict)

    def add(self, entry: Field, key_field: str, *, fold: bool = False) -> None:
        try:
            label = entry.get(key_field).text()
        except Malformed as exc:
            self.unkeyed.append((entry, exc))
            return
        key = label.casefold() if fold else label
        self.groups.setdefault(key, []).append(entry)
        self.labels.setdefault(key, label)
        ident = entry.get("id").value
        if type(ident) is not int:
            return
        if ident in self._ids:
            other_key, other = self._ids[ident]
            clash = Malformed(f"{other.path} and {entry.path} have the same id {ident}")
            self.clashes.setdefault(key, clash)
            self.clashes.setdefault(other_key, clash)
        else:
            self._ids[ident] = (key, entry)

    def latest(self, key: str, counts: Counts, *, mind_unkeyed: bool = True) -> Field | None:
        """The latest counting entry of `key`, taking the unkeyed entries into account unless
        the caller has already failed on them (`stray`)."""
        if key in self.clashes:
            raise self.clashes[key]
        found = latest_of(self.groups.get(key, ()), counts)
        if not mind_unkeyed:
            return found
        floor = _id(found) if found is not None else 0
        for entry, problem in self.unkeyed:
            ident = entry.get("id")
            if ident.present and type(ident.value) is int and ident.value <= floor:
                continue  # older than the latest: cannot change the answer
            if counts(entry):
                label = self.labels.get(key, key)
                raise Malformed(f"{problem}: it may be the latest {self.what} of {label}")
        return found

    def stray(self, counts: Counts) -> Malformed | None:
        """A problem when some unkeyed entry may count (and so may be a key of its own)."""
        for entry, problem in self.unkeyed:
            try:
                if counts(entry):
                    return Malformed(f"{problem}: cannot tell which {self.what} it is")
            except Malformed as exc:
                return Malformed(f"{problem}; {exc}")
        return None
