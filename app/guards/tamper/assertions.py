"""Assertions switched off: commented out, reduced to their expression, replaced by one that
always holds, or put under a condition that never holds or a handler that swallows their
failure (part of the `test-tamper` rule; the blocks are read by `dead_checks`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.guards.changes import FileChange, Line, restated
from app.guards.tamper.dead_checks import (
    always_holds,
    dead_blocks,
    swallowed_blocks,
    uncalled_blocks,
)
from app.guards.tamper.definitions import (
    definition_name_at,
)
from app.guards.tamper.finding import Tamper
from app.guards.tamper.lang import reader_for

_LINE_COMMENT = re.compile(r"^(#|//)\s*")


def disabled_assertions(change: FileChange) -> list[Tamper]:
    """An assertion line replaced by itself commented out, or a Python `assert x` by `x`; where
    the change takes an assertion out, an assertion added that always holds (`assert True or
    x`, `expect(true).toBe(true)`: `dead_checks`)."""
    reader = reader_for(change.path)
    removed = {line.text.strip() for line in change.removed if reader.checks(line.text)}
    if not removed:
        return []
    found: list[Tamper] = []
    # A line kept with a comment put beside it (a `noqa` for PLR0124) is no new assertion.
    codes = {restated(text) for text in removed}
    for position, line in enumerate(change.added):
        text = line.text.strip()
        uncommented = _LINE_COMMENT.sub("", text, count=1)
        if uncommented != text and uncommented in removed:
            found.append(Tamper(change.path, line.number, "assertion commented out"))
        elif f"assert {text}" in removed and not _continues(change.added, position):
            found.append(Tamper(change.path, line.number, "assert statement removed"))
        elif restated(text) not in codes and always_holds(text, change.path):
            found.append(Tamper(change.path, line.number, "assertion that always holds added"))
    return found


def dead_assertions(change: FileChange, shown: Sequence[Line]) -> list[Tamper]:
    """An added `if False:` (`if (false) {`, ...), or a `try` whose handler swallows failures,
    over assertions that were in the file before: unchanged lines, or lines taken out and put
    back (`dead_checks`)."""
    reader = reader_for(change.path)
    added = {line.number for line in change.added}
    removed = {line.text.strip() for line in change.removed if reader.checks(line.text)}
    found: list[Tamper] = []
    # A header the change only restates (re-indented under a new suite) was there before.
    before = {restated(line.text) for line in change.removed}
    fresh = [line for line in change.added if restated(line.text) not in before]
    kinds = (
        (dead_blocks(shown, fresh), "a condition that never holds"),
        (swallowed_blocks(shown, fresh, reader), "a handler that swallows failures"),
        (uncalled_blocks(shown, fresh), "a function that is never called"),
    )
    for blocks, message in kinds:
        for header, block in blocks.items():
            if any(definition_name_at(block, i, reader) for i in range(len(block))):
                continue  # tests defined there: no longer collected (`runners.collection`)
            if any(
                reader.checks(line.text)
                and (line.number not in added or line.text.strip() in removed)
                for line in block
            ):
                found.append(Tamper(change.path, header, f"assertions put under {message}"))
    return found


def _continues(lines: Sequence[Line], index: int) -> bool:
    """Whether `lines[index]` continues the statement of the line before it (`assert (`)."""
    if index == 0 or lines[index - 1].number != lines[index].number - 1:
        return False
    return lines[index - 1].text.rstrip().endswith(("(", "[", "{", ",", "\\"))
