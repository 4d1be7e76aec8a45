"""Tests whose header the change keeps but that are no longer tests at the head (part of the
`test-tamper` rule): the header wrapped in a string or a block comment (a module or class
body put under `\"\"\"`, a suite under `/* ... */`), left out of the test build (Rust's
`#[cfg(any())]` on the test, its module or the file), or stripped of the attribute or
annotation that made it a test (`#[test]`, `@Test`).

Read on the whole files with the trees, else on the runs of lines the diff shows (each read
as if it started in code, `lang.lexing`): a test the base defined in code whose header line
the change leaves in place, that the head defines nowhere in code. A header the change
removes is the removal rules' business (`relocations`); a string that merely holds test
source (a pytester fixture) defined no test at the base either, and a test renamed, moved or
still defined elsewhere in the file is not reported.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

from app.guards.changes import FileChange, Line
from app.guards.paths import display
from app.guards.tamper.definitions import Definition, containers, definitions
from app.guards.tamper.finding import Tamper
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.lexing import masked as lexed
from app.guards.tamper.lang.reader import Language
from app.guards.tamper.lang.rust import CFG, RUST, cfg_holds
from app.guards.tamper.test_files import is_conftest, is_test_path, reads_tests
from app.guards.trees import TreeView


def unmade(change: FileChange, trees: TreeView | None) -> list[Tamper]:
    """Tests the change keeps the header of but makes no test (see the module's docstring)."""
    old, new = change.old_path, change.new_path
    if change.status in ("added", "copied", "deleted") or old is None or new is None:
        return []
    if not reads_tests(new) or is_conftest(new):
        return []
    reader = reader_for(new)
    base = trees.text("base", old) if trees is not None else None
    head = trees.text("head", new) if trees is not None else None
    if base is not None and head is not None:
        return _whole(change, reader, base.splitlines(), head.splitlines())
    return _shown(change, reader)


def _whole(
    change: FileChange, reader: Language, base: Sequence[str], head: Sequence[str]
) -> list[Tamper]:
    before = _tests(_numbered(base), reader)
    after, hidden = _tests(_numbered(head), reader, suites=True), reader.masked(head)
    names = {d.name for d in after}
    # A header line that still defines a test (under another name: a call whose name is on
    # the next line, renamed there) is a rename.
    headers = {d.line.number for d in after}
    removed = sorted(line.number for line in change.removed)
    added = sorted(line.number for line in change.added)
    found: list[Tamper] = []
    for test in before:
        if test.name in names or test.line.number in set(removed):
            continue
        number = _kept(test.line.number, removed, added)
        if not 0 < number <= len(head) or head[number - 1] != test.line.text:
            continue
        if number in headers:
            continue
        index = number - 1
        in_text = index in hidden and reader.syntax is not None
        lexical = in_text and index in lexed(head, reader.syntax)  # type: ignore[arg-type]
        found.append(_finding(change.path, test, number, index in hidden, lexical))
    return found


def _shown(change: FileChange, reader: Language) -> list[Tamper]:
    """From the diff alone: a context line that is a test header on the old side the diff
    shows and no test on the new side."""
    added = sorted(line.number for line in change.added)
    removed = sorted(line.number for line in change.removed)
    olds = {c.number: _old_number(c.number, added, removed) for c in change.context}
    old_side = sorted(
        [*change.removed, *(Line(olds[c.number], c.text, c.number) for c in change.context)],
        key=lambda line: line.number,
    )
    new_side = sorted((*change.added, *change.context), key=lambda line: line.number)
    before = _run_tests(old_side, reader)
    after = _run_tests(new_side, reader, suites=True)
    names = {d.name for d in after}
    hidden = _run_masked(new_side, reader)
    lexical = _run_masked(new_side, reader, lexical=True)
    found: list[Tamper] = []
    context = {olds[c.number]: c.number for c in change.context}
    headers = {d.line.number for d in after}
    for test in before:
        number = context.get(test.line.number)
        if number is None or test.name in names or number in headers:
            continue
        found.append(_finding(change.path, test, number, number in hidden, number in lexical))
    if not found and reader is RUST:
        found += _test_modules_left_out(change, new_side)
    return found


_TEST_MODULE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w*tests?\b")


def _test_modules_left_out(change: FileChange, new_side: Sequence[Line]) -> list[Tamper]:
    """From the diff alone, where the hunk does not reach the tests: a `#[cfg(...)]` false on
    the test build put on a test module the change keeps (`mod tests`), or a `#![cfg(...)]`
    on a file of tests."""
    fresh = {line.number for line in change.added}
    by_number = {line.number: line for line in new_side}
    found: list[Tamper] = []
    for line in change.added:
        match = CFG.match(line.text)
        if match is None or cfg_holds(match["pred"]) is not False:
            continue
        if match["inner"]:
            if is_test_path(change.path):
                found.append(
                    Tamper(change.path, line.number, "test file left out of the test build")
                )
            continue
        number = line.number + 1
        while number in by_number and by_number[number].text.strip().startswith("#["):
            number += 1
        item = by_number.get(number)
        if item is not None and number not in fresh and _TEST_MODULE.match(item.text):
            found.append(Tamper(change.path, line.number, "test module left out of the test build"))
    return found


def _finding(path: str, test: Definition, number: int, hidden: bool, lexical: bool) -> Tamper:
    """Why the test at line `number` is no test: its header is not code (`hidden`: in a
    string or a comment when `lexical`, else left out of the build), or not a test."""
    shown = display(test.name, 80)
    if not hidden:
        message = f"test {shown!r} is no longer a test (its header stays, what made it one is gone)"
    elif lexical:
        message = f"test {shown!r} hidden in a string or a comment"
    else:
        message = f"test {shown!r} left out of the test build"
    return Tamper(path, number, message)


def _numbered(texts: Sequence[str]) -> list[Line]:
    return [Line(number, text, number) for number, text in enumerate(texts, 1)]


def _tests(lines: Sequence[Line], reader: Language, *, suites: bool = False) -> list[Definition]:
    """The tests `lines`, a whole file, defines in code (and, with `suites`, its suites)."""
    hidden = reader.masked([line.text for line in lines])
    defs = definitions(lines, len(lines), reader)
    left = set() if suites else containers(defs)
    return [d for d in defs if d.line.number - 1 not in hidden and d.line.number not in left]


def _runs(lines: Sequence[Line]) -> list[list[Line]]:
    runs: list[list[Line]] = []
    for line in lines:
        if runs and line.number == runs[-1][-1].number + 1:
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


def _run_masked(lines: Sequence[Line], reader: Language, *, lexical: bool = False) -> set[int]:
    """The numbers of the lines of each run that are not code, each run read on its own;
    `lexical`, only those in strings and comments."""
    found: set[int] = set()
    for run in _runs(lines):
        texts = [line.text for line in run]
        if lexical:
            hidden = lexed(texts, reader.syntax) if reader.syntax is not None else set()
        else:
            hidden = reader.masked(texts)
        found.update(run[i].number for i in hidden)
    return found


def _run_tests(
    lines: Sequence[Line], reader: Language, *, suites: bool = False
) -> list[Definition]:
    hidden = _run_masked(lines, reader)
    defs = definitions(lines, None, reader)
    left = set() if suites else containers(defs)
    return [d for d in defs if d.line.number not in hidden and d.line.number not in left]


def _kept(old: int, removed: Sequence[int], added: Sequence[int]) -> int:
    """The new number of an old line the change keeps."""
    new = old - bisect_left(removed, old)
    shift = 0
    while True:
        more = bisect_left(added, new + shift + 1)
        if more == shift:
            return new + shift
        shift = more


def _old_number(new: int, added: Sequence[int], removed: Sequence[int]) -> int:
    """The old number of a line the change keeps, from its new one."""
    old = new - bisect_left(added, new)
    shift = 0
    while True:
        more = bisect_left(removed, old + shift + 1)
        if more == shift:
            return old + shift
        shift = more
