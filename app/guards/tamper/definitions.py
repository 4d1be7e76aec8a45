"""The test definitions in a run of added or removed lines: their names, bodies, assertions,
ends and parametrized cases, each read by the file's language reader
(`lang`).

Everything here reads text only; nothing is imported or executed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from app.guards.changes import Line
from app.guards.tamper.lang.reader import COMMENT, Reader, Run
from app.guards.tamper.lang.text import MAX_DECORATOR_LINES, indent, next_in_run

# A body longer than this is not compared (and its definition is treated as partly visible).
_MAX_BODY_LINES = 2000


@dataclass(frozen=True)
class Definition:
    """One test definition found in a run of added or removed lines."""

    name: str
    line: Line
    # The body, normalised (stripped, no blank or comment lines), when all of it is in the
    # change; None when the change shows only part of it.
    body: tuple[str, ...] | None
    # Assertion lines in the part of the body the change shows.
    assertions: int
    # The number of the body's last line, when the whole body is in the change.
    end: int | None
    # How many tests it stands for: the product of its literal parametrize lists (Python),
    # its subtests (Go), else 1.
    cases: int


def definition_name_at(lines: Sequence[Line], index: int, reader: Reader) -> str | None:
    """The name of the test defined at `lines[index]`: on the header line itself, or, for a
    call split after its `(`, on the next line of the same run (`test(` then `'name',`), or
    under an attribute right above it in the same run (`#[test]` then `fn adds() {`)."""
    text = lines[index].text
    name = reader.test_name(text)
    if name is not None:
        return name
    following = lines[index + 1].text if next_in_run(lines, index + 1) else None
    name = reader.split_name(text, following)
    if name is not None:
        return name
    return reader.attributed_name(text, _above(lines, index))


# Lines above a header read for the attribute that makes it a test (`#[test]`, `@Test`).
_MAX_ATTRIBUTE_LINES = 12


def _above(lines: Sequence[Line], index: int) -> list[str]:
    """The lines right above `lines[index]` in the same run, up to a few, nearest last."""
    start = index
    while start > max(index - _MAX_ATTRIBUTE_LINES, 0) and (
        lines[start - 1].number == lines[start].number - 1
    ):
        start -= 1
    return [line.text for line in lines[start:index]]


def definitions(lines: Sequence[Line], last_line: int | None, reader: Reader) -> list[Definition]:
    """The test definitions in `lines` (one side of a file's change, in line order).
    `last_line` is that side's line count when known, so a body that runs to the end of the
    file counts as whole."""
    found: list[Definition] = []
    run: Run | None = None
    for index, line in enumerate(lines):
        name = definition_name_at(lines, index, reader)
        if name is None:
            continue
        run = run or Run.of(lines, reader)
        own = reader.at(line.text)
        body, assertions, end = _body(run, index, last_line, own)
        found.append(Definition(name, line, body, assertions, end, own.cases(run, index)))
    return found


def defines_tests(text: str, reader: Reader) -> bool:
    """Whether a whole file's text defines a test (read as `definitions` reads a change)."""
    lines = [Line(number, line, number) for number, line in enumerate(text.splitlines(), 1)]
    return bool(definitions(lines, len(lines), reader))


def skipped_definitions(
    defs: Sequence[Definition], lines: Sequence[Line], reader: Reader
) -> set[int]:
    """Header line numbers of the definitions in `lines` that are skipped whatever the
    platform: `it.skip`, `xit`, `@pytest.mark.skip`, `@unittest.skip`, `#[ignore]`,
    `@Disabled`, or a test inside a suite skipped that way."""
    position = {line.number: index for index, line in enumerate(lines)}
    open_ends: list[int] = []  # last lines of the skipped suites around the current line
    found: set[int] = set()
    for definition in defs:
        number = definition.line.number
        while open_ends and open_ends[-1] < number:
            open_ends.pop()
        own = reader.skipped_header(definition.line.text) or _skip_decorated(
            lines, position[number], reader
        )
        if own or open_ends:
            found.add(number)
            if definition.end is not None:
                open_ends.append(definition.end)
    return found


def _skip_decorated(lines: Sequence[Line], index: int, reader: Reader) -> bool:
    """Whether the decorators right above `lines[index]` (same run) skip it unconditionally."""
    header = indent(lines[index].text)
    stop = max(index - MAX_DECORATOR_LINES, 0)
    while index > stop and lines[index - 1].number == lines[index].number - 1:
        index -= 1
        text = lines[index].text
        stripped = text.strip()
        if reader.skip_decorator(stripped):
            return True
        if not stripped.startswith(("@", "#[", ")")) and indent(text) <= header:
            return False
    return False


def _body(
    run: Run, index: int, last_line: int | None, reader: Reader
) -> tuple[tuple[str, ...] | None, int, int | None]:
    """The body that follows a definition's header in the same run of consecutive lines, its
    assertion lines (the header's own included, for one-line tests) and its last line number.
    The body ends before the first line indented no deeper than the header, or at it when
    that line closes the block (`}`, `})`, `end`: `reader.closes`). It is None when the run
    stops before it ends (unless the file ends there too)."""
    lines = run.lines
    header = run.indents[index]
    assertions = int(run.checks[index])
    position = reader.body_start(lines, index)
    if position is None:
        return None, assertions, None
    body: list[str] = []
    while len(body) < _MAX_BODY_LINES and run.budget > 0:
        run.budget -= 1
        last = lines[position - 1].number
        if not next_in_run(lines, position):
            whole = last_line is not None and last == last_line
            return (tuple(body), assertions, last) if whole else (None, assertions, None)
        stripped = run.stripped[position]
        if stripped and run.indents[position] <= header:
            if reader.closes(stripped):
                return (*body, stripped), assertions, last + 1
            return tuple(body), assertions, last
        if stripped and not COMMENT.match(stripped):
            body.append(stripped)
            assertions += run.checks[position]
        position += 1
    return None, assertions, None


def containers(defs: Sequence[Definition]) -> set[int]:
    """Header line numbers of the definitions that are suites: a `describe`, `context` or
    `class Test...` whose whole body is known and holds other test definitions. A suite is not
    itself a test; the tests inside it are, and each of them is counted on its own."""
    ordered = sorted(defs, key=lambda definition: definition.line.number)
    found: set[int] = set()
    for definition, following in pairwise(ordered):
        # Definitions come in line order, so a suite's first inner test is the next one.
        end = definition.end
        if end is not None and definition.line.number < following.line.number <= end:
            found.add(definition.line.number)
    return found
