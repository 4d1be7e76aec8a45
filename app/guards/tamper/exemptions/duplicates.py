"""Removed tests that are exact duplicates of a test that stays (`exemptions.set_aside`, rule 4).

A test that stays in the same file, at the head, has the same body, the same header but for
its name, the same decorators and the same enclosing suite (with the suite's own decorators):
the suite loses nothing it ran. (A Python test's twin in another file: `exemptions.twins`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.changes import Line
from app.guards.tamper.definitions import Definition, definitions
from app.guards.tamper.exemptions.evidence import Evidence, decorators
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.text import enclosing


def duplicate(ev: Evidence, index: int, definition: Definition) -> bool:
    change = ev.files[index]
    if change.new_path is None or change.old_path is None:
        return False
    if not definition.body:
        return False
    head = ev.trees.text("head", change.new_path)
    base = ev.trees.text("base", change.old_path)
    if head is None or base is None:
        return False
    base_lines = base.splitlines()
    position = definition.line.number - 1
    if not 0 <= position < len(base_lines):
        return False
    shape = _Shape.of(base_lines, position, definition.name)
    head_lines = head.splitlines()
    numbered = [Line(n + 1, text, n + 1) for n, text in enumerate(head_lines)]
    return any(
        twin.body == definition.body
        and _Shape.of(head_lines, twin.line.number - 1, twin.name) == shape
        for twin in definitions(numbered, len(head_lines), reader_for(change.new_path))
    )


@dataclass(frozen=True)
class _Shape:
    """What a test runs with besides its body: its header (but for its name), decorators and
    enclosing suite (with the suite's own decorators)."""

    header: str
    decorators: tuple[str, ...]
    suite: str
    suite_decorators: tuple[str, ...]

    @classmethod
    def of(cls, lines: Sequence[str], position: int, name: str) -> _Shape:
        suite = enclosing(lines, position)
        return cls(
            header=lines[position].strip().replace(name, "\0", 1),
            decorators=decorators(lines, position),
            suite=lines[suite].strip() if suite is not None else "",
            suite_decorators=decorators(lines, suite) if suite is not None else (),
        )
