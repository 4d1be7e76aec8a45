"""What every reader reads alike, whatever the language: a line's indentation, a quoted test
name, runs of consecutive lines, the block a line is in and the decorators above a header."""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.guards.changes import Line

# A backslash escaping a quote or itself in a quoted name: the name has the character.
_NAME_ESCAPE = re.compile(r"\\(['\"`\\])")
# Lines above a header searched for its decorators.
MAX_DECORATOR_LINES = 200


def quoted(quotes: str) -> str:
    """A test name quoted with one of `quotes`, in group "n" (JavaScript, Ruby): up to the
    first quote no backslash escapes, so `'don\\'t replace'` is read whole; or further where
    the pattern needs more after it (Ruby's `it "a #{x ? "b" : "c"}" do`)."""
    return rf"(?P<q>[{quotes}])(?P<n>(?:\\.|[^\\])+?)(?P=q)"


def unescaped(name: str) -> str:
    """A quoted name as the runner reports it: `don\\'t` is `don't`."""
    return _NAME_ESCAPE.sub(r"\1", name)


def indent(text: str) -> int:
    """A line's indentation width, tabs counted as four columns."""
    expanded = text.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def next_in_run(lines: Sequence[Line], position: int) -> bool:
    """Whether `lines[position]` exists and follows `lines[position - 1]` in its file."""
    return position < len(lines) and lines[position].number == lines[position - 1].number + 1


def enclosing(lines: Sequence[str], position: int) -> int | None:
    """The position of the nearest line above that is indented less (the suite, class or
    block a line is in), or None at the top level."""
    level = indent(lines[position])
    for index in range(position - 1, -1, -1):
        if lines[index].strip() and indent(lines[index]) < level:
            return index
    return None


def decorator_start(lines: Sequence[Line], index: int) -> int:
    """The position of the first decorator line right above `lines[index]` (same run of
    lines), or `index` itself when it has none."""
    header = indent(lines[index].text)
    start = index
    stop = max(index - MAX_DECORATOR_LINES, 0)
    while start > stop and lines[start - 1].number == lines[start].number - 1:
        text = lines[start - 1].text
        stripped = text.strip()
        if not stripped or (indent(text) <= header and not stripped.startswith(("@", ")", "]"))):
            break
        start -= 1
    return start
