"""A bare `return` that ends a test where it stands: added at the top level of the body of a
test that existed, with code of the body after it, the rest of the test never runs and the
test passes whatever the code does. It is a skip with no marker, and reported as one.

Read on the new side of a test file: the whole file where ourobot reads the repository, the
added and context lines a diff shows otherwise (a return added at the top of a test is shown
with the test's header in its context). Only a return directly in the test's body counts: one
under an `if`, in a loop, in a nested function, a callback or a Go subtest's closure ends that
block, not the test (a known gap: a return under a condition that always holds, `if True:`,
is not read), and one after which the body has no code ends nothing. A bare return is
`return`, `return;` or Python's `return None`: JavaScript's `return promise` hands the runner
what to wait for, and a Go test returns nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from app.guards.changes import FileChange, Line
from app.guards.pairs import plain_comment
from app.guards.suite import definition_name_at, indent

_BARE_RETURN = re.compile(r"^\s*return\s*(?:;|None)?\s*$")
# A line that closes a block rather than running code: `}`, `})`, Ruby's `end`.
_CLOSING = re.compile(r"^\s*(?:[})\]]|end\b)")


def early_returns(
    change: FileChange, shown: Sequence[Line] | None, existed: Collection[str]
) -> list[int]:
    """The numbers of the added lines that end a test that existed early. `shown` is the new
    side, whole or as much of it as the diff shows (added and context lines, in order);
    `existed` the names of tests that were there under another header line."""
    returns = [line for line in change.added if _BARE_RETURN.match(line.text)]
    if not returns or change.status in ("added", "copied"):
        return []
    lines = list(shown) if shown else list(change.added)
    where = {line.number: position for position, line in enumerate(lines)}
    added = {line.number for line in change.added}
    found: list[int] = []
    for line in returns:
        position = where.get(line.number)
        if position is None or lines[position].text != line.text:
            continue
        header = _test_around(lines, position)
        if header is None or not _code_after(lines, position, change.path):
            continue
        name = definition_name_at(lines, header) or ""
        if lines[header].number not in added or name in existed:
            found.append(line.number)
    return found


def _test_around(lines: Sequence[Line], position: int) -> int | None:
    """The index of the test header whose body holds `lines[position]` at its top level: the
    first line above it, in the same run, indented less than it, when that line is a test's
    header; None when it is anything else (an `if`, a loop, a helper, a callback)."""
    depth = indent(lines[position].text)
    for index in range(position - 1, -1, -1):
        if lines[index].number != lines[index + 1].number - 1:
            return None
        text = lines[index].text
        if not text.strip() or indent(text) >= depth:
            continue
        return index if definition_name_at(lines, index) is not None else None
    return None


def _code_after(lines: Sequence[Line], position: int, path: str) -> bool:
    """Whether the body goes on after `lines[position]`: the next line of the same run that
    says something is indented as far as the return (a closing `}` or a dedent ends it)."""
    depth = indent(lines[position].text)
    for index in range(position + 1, len(lines)):
        if lines[index].number != lines[index - 1].number + 1:
            return False
        text = lines[index].text
        if not text.strip() or plain_comment(text, path):
            continue
        return indent(text) >= depth and not _CLOSING.match(text)
    return False
