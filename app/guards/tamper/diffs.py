"""What equally valid diffs of a change show, and whether lines it deletes come back: the
diff primitives the exemptions and the skip reading share.

A diff is one of several alignments of the same two files: where a run of deleted (or added)
lines is bordered by lines equal to its own ends, it could as well be shown a line further
down or up. And code a change deletes is gone only when it is not written again: most of it
added back, anywhere in the change, is a move.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.guards.changes import is_telling

# Deleted lines count as added back (a rename or move) when this share of them is.
_MOVED_SHARE = 0.5


def alignments(lines: Sequence[str], deleted: set[int]) -> list[set[int]]:
    """The deleted line numbers as the diff shows them, and as equally valid diffs would: each
    run of deleted lines slid down, or up, as far as the lines around it repeat. Deleting the
    last test of a suite, a diff may well show the `});` above it deleted and its own kept.
    The same holds of the added lines, against the whole new side (a new decorated test
    inserted above a test with the same decorator)."""
    runs: list[tuple[int, int]] = []
    for number in sorted(deleted):
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    down: set[int] = set()
    up: set[int] = set()
    for first, last in runs:
        start, end = first, last
        while end < len(lines) and end + 1 not in deleted and lines[start - 1] == lines[end]:
            start, end = start + 1, end + 1
        down.update(range(start, end + 1))
        start, end = first, last
        while start > 1 and start - 1 not in deleted and lines[end - 1] == lines[start - 2]:
            start, end = start - 1, end - 1
        up.update(range(start, end + 1))
    return [deleted, down, up]


def mostly_added(lines: Sequence[str], added: set[str]) -> bool:
    """Whether most of `lines` that say something come back among the added lines (True
    when none says anything: nothing shows they are gone)."""
    telling = [text.strip() for text in lines if is_telling(text)]
    if not telling:
        return True
    back = sum(1 for text in telling if text in added)
    return back >= _MOVED_SHARE * len(telling)
