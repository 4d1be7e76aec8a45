"""What one implementer iteration destroys, measured from its diff.

The seed's TICKET-004: a small model asked to tidy a 256-line install guide wrote it again as 36
lines, and a reviewer approved it. Work replaces what it removes; destruction does not. So a
line the iteration removes is destroyed only when nothing took its place:

- **moved**: its text (indentation aside) is added elsewhere in the iteration, in the same file
  or another. Each added line stands for one removed line; one in the same hunk is taken first.
- **replaced**: the hunk that removes it adds lines too (a modified line is a deletion and an
  addition in one hunk). Hunks are the ones `git diff` shows with its default three lines of
  context: changes fewer than seven unchanged lines apart are one hunk. A hunk destroys the
  lines it removes beyond the lines it adds.

What is left is *removed without replacement*: `max_deletions_per_iteration` bounds it.

Line for line replacement can destroy too: a model that writes a long file again from memory
returns as many lines, most of them not the old ones. `Loss.kept_percent` is the share of the
old file's telling lines (`is_telling`: blank lines, braces and one-word lines say too little
to tell a rewrite from an edit) still in the iteration's result, in place or moved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.changes import ChangeSet, FileChange, Line, is_telling

# `git diff`'s default context: two changes closer than twice this share a hunk.
CONTEXT = 3


@dataclass(frozen=True)
class Hunk:
    removed: tuple[Line, ...]
    added: tuple[Line, ...]


@dataclass(frozen=True)
class Loss:
    """What one file lost in the iteration."""

    change: FileChange
    unreplaced: int  # lines removed without replacement
    lost_telling: int  # telling lines neither kept in place nor moved

    @property
    def kept_percent(self) -> int | None:
        """The share of the old side's telling lines still there (rounded down), or None when
        the old side's whole length is unknown (a diff) or it has no telling line."""
        old = self.change.old_telling_count
        if not old:
            return None
        return (old - min(self.lost_telling, old)) * 100 // old


def hunks(change: FileChange) -> list[Hunk]:
    """The file's changes grouped as `git diff` shows them. Only the line numbers are read: the
    unchanged lines between two changes pair up one to one on both sides, so walking the old
    side's removed numbers and the new side's added numbers together finds each change."""
    removed = sorted(change.removed, key=lambda line: line.number)
    added = sorted(change.added, key=lambda line: line.number)
    groups: list[tuple[list[Line], list[Line]]] = []
    r = a = 0
    old = new = 1  # the next line of each side not yet walked
    while r < len(removed) or a < len(added):
        gap = max(0, min(_distance(removed, r, old), _distance(added, a, new)))
        old, new = old + gap, new + gap
        r_end, a_end = _run(removed, r, old), _run(added, a, new)
        if (r_end, a_end) == (r, a):
            # Numbers that do not follow on (a hand-made diff): the next line is a change.
            r_end, a_end = (r + 1, a) if r < len(removed) else (r, a + 1)
        if not groups or gap > 2 * CONTEXT:
            groups.append(([], []))
        groups[-1][0].extend(removed[r:r_end])
        groups[-1][1].extend(added[a:a_end])
        old, new = old + r_end - r, new + a_end - a
        r, a = r_end, a_end
    return [Hunk(tuple(gone), tuple(came)) for gone, came in groups]


def _distance(lines: Sequence[Line], index: int, number: int) -> int:
    """How many unchanged lines come before the next of `lines` (past the end: all of them)."""
    return lines[index].number - number if index < len(lines) else _BEYOND


# Farther than any line of a file can be.
_BEYOND = 2**63


def _run(lines: Sequence[Line], index: int, number: int) -> int:
    """The end of the run of `lines` from `index` numbered on from `number`."""
    while index < len(lines) and lines[index].number == number:
        index, number = index + 1, number + 1
    return index


Spot = tuple[int, int]  # (file, hunk) of the iteration


def losses(changes: ChangeSet) -> list[Loss]:
    """Per changed file that lost anything: lines removed without replacement, and telling
    lines gone (neither kept nor moved), in the order of `changes.files`."""
    split = [hunks(change) for change in changes.files]
    pool = _Pool(split)
    pending = [
        ((f, h), line) for f, file_hunks in enumerate(split)
        for h, hunk in enumerate(file_hunks) for line in hunk.removed
    ]  # fmt: skip
    # A line re-indented in its own hunk first, so another file's copy cannot claim its twin.
    pending = [(spot, line) for spot, line in pending if not pool.take(line, spot)]
    unmatched = [(spot, line) for spot, line in pending if not pool.take(line)]
    gone: Counter[Spot] = Counter(spot for spot, _ in unmatched)
    telling: Counter[int] = Counter(spot[0] for spot, line in unmatched if is_telling(line.text))
    found = []
    for f, file_hunks in enumerate(split):
        unreplaced = sum(
            max(0, gone[(f, h)] - (len(hunk.added) - pool.taken[(f, h)]))
            for h, hunk in enumerate(file_hunks)
        )
        if unreplaced or telling[f]:
            found.append(Loss(changes.files[f], unreplaced, telling[f]))
    return found


class _Pool:
    """The iteration's added lines not yet paired with a removed one, by text (indentation
    aside): counted per spot, and kept in order so that "any spot" is found in constant time."""

    def __init__(self, split: Sequence[Sequence[Hunk]]) -> None:
        self.free: dict[str, Counter[Spot]] = {}
        self.order: dict[str, list[Spot]] = {}
        self.taken: Counter[Spot] = Counter()
        for f, file_hunks in enumerate(split):
            for h, hunk in enumerate(file_hunks):
                for line in hunk.added:
                    spots = self.free.setdefault(line.text.strip(), Counter())
                    if not spots[(f, h)]:
                        self.order.setdefault(line.text.strip(), []).append((f, h))
                    spots[(f, h)] += 1

    def take(self, line: Line, wanted: Spot | None = None) -> bool:
        """Pair `line` with a free added line of its text: in `wanted`, or anywhere when None."""
        text = line.text.strip()
        spots = self.free.get(text)
        if spots is None:
            return False
        there = wanted if wanted is not None else self._some(text, spots)
        if there is None or not spots[there]:
            return False
        spots[there] -= 1
        self.taken[there] += 1
        return True

    def _some(self, text: str, spots: Counter[Spot]) -> Spot | None:
        order = self.order[text]
        while order and not spots[order[-1]]:
            order.pop()
        return order[-1] if order else None
