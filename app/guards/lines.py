"""Added and removed lines from two blobs' raw bytes, never from git's own diff.

git's line diff obeys the repository's `.gitattributes` (`-diff` turns a file "binary" and hides
every deleted line; `diff=x` can route it through a textconv or external driver). Reading the
blobs and comparing them here leaves a committed attribute nothing to change.

The comparison is a classic line diff, as git and GitHub show it (a moved block counts as
removed and added): a common prefix and suffix are matched first, then difflib aligns the rest.
A run of lines only added (or only removed) that could as well sit lower, because the lines after
it repeat its first ones (the `}` and blank line closing the function above a new one), is slid
down as far as they do, as git slides it: the new function's lines are then the ones added, from
its header to its own closing `}`, not the `}` above it down to its last statement. The same
lines are added or removed either way, only which copy of a repeated line is.
When that middle part is too large for difflib's worst case, the lines are matched by content
instead (a line is removed when its content occurs fewer times in the new file than in the old
one); that count never exceeds the classic one, and no edit can hide from it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from app.guards.changes import Line, is_telling

# git's own heuristic: a NUL byte in the first 8000 bytes makes a blob binary.
_BINARY_PROBE = 8000
# difflib's cost grows with the product of the two sides' changed regions: up to _EXACT_LIMIT it
# runs without its popular-line heuristic, up to _DIFFLIB_LIMIT with it, beyond that by content.
_EXACT_LIMIT = 1_000_000
_DIFFLIB_LIMIT = 16_000_000


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_PROBE]


# Printable ASCII runs, as `strings` finds them: where a credential sits in a binary file.
_PRINTABLE_RUN = re.compile(rb"[\x20-\x7e]{8,}")


def printable_runs(new: bytes, old: bytes | None = None) -> tuple[str, ...]:
    """The printable runs of `new` that `old` does not hold, in order, each once."""
    before = set(_PRINTABLE_RUN.findall(old)) if old else set()
    runs = (run for run in _PRINTABLE_RUN.findall(new) if run not in before)
    return tuple(dict.fromkeys(run.decode("ascii") for run in runs))


def split_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


@dataclass(frozen=True)
class LineDelta:
    added: tuple[Line, ...]
    removed: tuple[Line, ...]
    old_count: int | None  # None when the old side is binary (it has no lines to lose)
    new_count: int | None
    old_telling: int | None  # of old_count, the lines that say something (`is_telling`)
    added_bytes: int
    removed_bytes: int


def line_delta(old: bytes | None, new: bytes | None) -> LineDelta:
    """Compare two blobs (None = absent). A binary new side adds no lines; a binary old side
    loses none. A text file turned binary still loses every line it no longer contains."""
    old_binary = old is not None and is_binary(old)
    new_binary = new is not None and is_binary(new)
    old_lines = [] if old is None or old_binary else split_lines(old)
    new_lines = [] if new is None else split_lines(new)
    added, removed = _compare(old_lines, new_lines)
    if new_binary:
        added = []
    return LineDelta(
        added=tuple(Line(number, _text(raw), number) for number, raw in added),
        removed=tuple(Line(number, _text(raw), anchor) for number, raw, anchor in removed),
        old_count=None if old_binary else len(old_lines),
        old_telling=None if old_binary else sum(is_telling(_text(raw)) for raw in old_lines),
        new_count=None if new_binary else len(new_lines),
        added_bytes=sum(len(raw) + 1 for _, raw in added),
        removed_bytes=sum(len(raw) + 1 for _, raw, _ in removed),
    )


def _compare(
    old: list[bytes], new: list[bytes]
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes, int]]]:
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    last_new_line = max(len(new), 1)
    if len(old_mid) * len(new_mid) > _DIFFLIB_LIMIT:
        return _by_content(old_mid, new_mid, prefix, last_new_line)
    matcher = SequenceMatcher(
        None, old_mid, new_mid, autojunk=len(old_mid) * len(new_mid) > _EXACT_LIMIT
    )
    opcodes = [
        (tag, prefix + i1, prefix + i2, prefix + j1, prefix + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]
    added: list[tuple[int, bytes]] = []
    removed: list[tuple[int, bytes, int]] = []
    for position, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            continue
        following = opcodes[position + 1 :]
        if not following or following[0][0] == "equal":
            # The equal lines after the run: the rest of the middle's equal block, then the
            # common suffix (a run slides through both, never into the next change).
            room = following[0][2] - following[0][1] if following else 0
            room += suffix if len(following) <= 1 else 0
            if i1 == i2:
                shift = _slide(new, j1, j2, room)
                i1, i2, j1, j2 = i1 + shift, i2 + shift, j1 + shift, j2 + shift
            elif j1 == j2:
                shift = _slide(old, i1, i2, room)
                i1, i2, j1, j2 = i1 + shift, i2 + shift, j1 + shift, j2 + shift
        anchor = min(j1 + 1, last_new_line)
        removed.extend((i + 1, old[i], anchor) for i in range(i1, i2))
        added.extend((j + 1, new[j]) for j in range(j1, j2))
    return added, removed


def _slide(lines: list[bytes], start: int, end: int, room: int) -> int:
    """How far the run `lines[start:end]`, followed by `room` unchanged lines, can move down
    and still say the same: as long as the line after it repeats its first line."""
    shift = 0
    while shift < room and end + shift < len(lines) and lines[start + shift] == lines[end + shift]:
        shift += 1
    return shift


def _by_content(
    old_mid: list[bytes], new_mid: list[bytes], prefix: int, last_new_line: int
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes, int]]]:
    """Linear fallback: lines whose content lost (or gained) occurrences."""
    remaining_new = Counter(new_mid)
    remaining_old = Counter(old_mid)
    removed: list[tuple[int, bytes, int]] = []
    for offset, raw in enumerate(old_mid):
        if remaining_new[raw] > 0:
            remaining_new[raw] -= 1
            continue
        anchor = min(prefix + 1 + min(offset, len(new_mid)), last_new_line)
        removed.append((prefix + offset + 1, raw, anchor))
    added: list[tuple[int, bytes]] = []
    for offset, raw in enumerate(new_mid):
        if remaining_old[raw] > 0:
            remaining_old[raw] -= 1
            continue
        added.append((prefix + offset + 1, raw))
    return added, removed


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
