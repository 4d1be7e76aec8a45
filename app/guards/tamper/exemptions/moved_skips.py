"""Skips that move with their test.

A test moved to another file keeps its markers: the skip above it (or inside it) is removed
from the old file and added to the new one. Neither is a change: the test was skipped under
the same condition before. The `test-tamper` rule would otherwise see a new skip on a test
that ran (the moved test carries on a removed one), and the old file's lost skip would offset
a new skip elsewhere in that file.

A skip has travelled when a test moved to another file (same name or body, see
`relocations`) and the very same marker line (stripped) is among the lines of
both its old and its new definition, decorators included. Anything else about the skip
(another condition, a skip the old test did not have) is judged as a new skip.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.guards.changes import FileChange, Line
from app.guards.tamper.definitions import Definition
from app.guards.tamper.lang.text import decorator_start
from app.guards.tamper.relocations import Continuation

# Whether a line holds a skip marker, given its text and its file's path.
IsSkip = Callable[[str, str], bool]


@dataclass
class Travelled:
    """The skip lines of one file that moved with their test."""

    arrived: set[int] = field(default_factory=set)  # added lines (new side) that came along
    left: set[int] = field(default_factory=set)  # removed lines (old side) that went away


def travelled_skips(
    files: Sequence[FileChange], continuations: Sequence[Continuation], is_skip: IsSkip
) -> dict[int, Travelled]:
    """Per file index, the skip lines that moved with a test between two files."""
    found: dict[int, Travelled] = defaultdict(Travelled)
    positions: dict[tuple[int, bool], dict[int, int]] = {}

    def skips(index: int, definition: Definition, *, old: bool) -> list[Line]:
        change = files[index]
        lines = change.removed if old else change.added
        if (index, old) not in positions:
            positions[index, old] = {line.number: at for at, line in enumerate(lines)}
        at = positions[index, old].get(definition.line.number)
        return [] if at is None else _skips(lines, at, definition, change.path, is_skip)

    for carried in continuations:
        if carried.old_file == carried.new_file:
            continue  # within a file, a removed skip already offsets an added one
        old = skips(carried.old_file, carried.old, old=True)
        new = skips(carried.new_file, carried.new, old=False)
        gone = found[carried.old_file].left
        for line in new:
            # Each removed skip line accounts for one added line, whichever test it came with.
            match = next(
                (o for o in old if o.number not in gone and o.text.strip() == line.text.strip()),
                None,
            )
            if match is not None and line.number not in found[carried.new_file].arrived:
                found[carried.new_file].arrived.add(line.number)
                gone.add(match.number)
    return found


def _skips(
    lines: Sequence[Line], index: int, definition: Definition, path: str, is_skip: IsSkip
) -> list[Line]:
    """The skip lines of the definition at `lines[index]`: its decorators, its header and its
    body, as far as the run of lines it is in shows them."""
    start = decorator_start(lines, index)
    end = index
    while end + 1 < len(lines) and lines[end + 1].number == lines[end].number + 1:
        if definition.end is not None and lines[end + 1].number > definition.end:
            break
        end += 1
    return [line for line in lines[start : end + 1] if is_skip(line.text, path)]
