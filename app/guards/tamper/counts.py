"""How many tests each test definition of a change stands for, read from the whole files
when the trees are at hand.

A definition stands for one test, a parametrized Python test for one per case of its literal
`parametrize` lists, a Go test for one per subtest it runs directly (`t.Run`, a loop of them
counting one: `lang.go`), and a suite (a `describe` or test class that holds tests)
for none: its tests are counted on their own. From the diff alone, only what the changed lines
show can be read, and common edits then look like removals:
- a case added to the list of a test whose header the change does not touch (a removed test
  folded into an existing parametrized one) adds nothing the diff can count;
- a parametrized test renamed under unchanged decorators counts as one test on each side,
  however many cases it has;
- a suite renamed or dropped while its tests move counts as a test removed (its body, shown
  whole, holds tests; or, cut short by the diff, it is counted as a test).

With the base and head trees, each changed test file is read whole on both sides, so:
- every removed or added definition counts the cases of all of its decorators, and a suite
  whose whole body holds tests counts none;
- the Python and Go tests whose header line the change leaves alone add the net change of
  their cases (subtests) to what the file gains (a case added to one stands for a new test,
  as a new test does; a case taken from one offsets the new tests the file gains);
- a test that carries on a removed one (same name or body) adds the difference.

A gain pays nothing when the new cases may never run: a decorator of the test (or of its class)
mentions a skip or xfail, a case's `marks=pytest.mark.skip` included, or the module's
`pytestmark` does; a Go test's, when its body may call `t.Skip`. A suite that stops being one
(its last test removed) gains nothing. A loss always counts. Without the trees (a bare
`--diff`), the diff's own counts stand, and a suite is one whose body the diff shows whole with
tests in it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.changes import FileChange, Line
from app.guards.tamper.definitions import Definition, containers, definitions
from app.guards.tamper.lang import Reader, go, python, reader_for
from app.guards.tamper.lang.text import decorator_start
from app.guards.tamper.test_files import is_conftest, is_test_path
from app.guards.trees import Side, TreeView

# A decorator or parameter that may keep a case from running.
_MAY_SKIP = re.compile(r"\b(?:skip\w*|xfail|expectedFailure)\b", re.IGNORECASE)
# A statement in a Go test that skips it, and the subtests it holds.
_GO_SKIP = re.compile(r"\.Skip(?:Now|f)?\s*\(")
# pytest's module-wide marker: it applies to every test of the file.
_MODULE_MARK = re.compile(r"^\s*pytestmark\s*=")


@dataclass(frozen=True)
class _Whole:
    """One side of a file, read whole."""

    lines: list[Line]
    defs: list[Definition]
    # Header line number -> how many tests the definition stands for (0 for a suite).
    counts: dict[int, int]


@dataclass(frozen=True)
class _FileCounts:
    base: dict[int, int]  # header line number on the base side -> tests
    head: dict[int, int]
    # Net cases gained (negative: lost) by the tests whose header the change leaves alone.
    kept: int
    # Head header lines of tests whose new cases may not run: their gains pay nothing.
    quiet: frozenset[int]


class Counts:
    """How many tests the definitions of a change stand for. Files are read lazily, once."""

    def __init__(self, files: Sequence[FileChange], trees: TreeView | None) -> None:
        self._files = files
        self._trees = trees
        self._read: dict[int, _FileCounts] = {}

    def removed(self, index: int, definition: Definition) -> int:
        return self._of(index).base.get(definition.line.number, definition.cases)

    def added(self, index: int, definition: Definition) -> int:
        return self._of(index).head.get(definition.line.number, definition.cases)

    def kept(self, index: int) -> int:
        return self._of(index).kept

    def carried(self, old_file: int, old: Definition, new_file: int, new: Definition) -> int:
        """The tests a definition gains (negative: loses) where it carries on a removed one.
        Zero without the trees: the diff may show only part of either side's decorators."""
        if self._trees is None:
            return 0
        before, after = self.removed(old_file, old), self.added(new_file, new)
        quiet = new.line.number in self._of(new_file).quiet
        return _gain(before, after, quiet=quiet)

    def _of(self, index: int) -> _FileCounts:
        if index not in self._read:
            self._read[index] = _count(self._files[index], self._trees)
        return self._read[index]


def _gain(before: int, after: int, *, quiet: bool) -> int:
    """What one definition adds: nothing for new cases that may not run, nor for a suite that
    became a test (a `describe` whose last test went is not a new test)."""
    if after > before and (quiet or before == 0):
        return 0
    return after - before


def _count(change: FileChange, trees: TreeView | None) -> _FileCounts:
    old, new = change.old_path, change.new_path
    removed = _whole(list(change.removed), change.old_line_count, reader_for(old))
    added = _whole(list(change.added), change.new_line_count, reader_for(new))
    if trees is None or change.status == "copied":
        # The diff's own counts: a suite is one whose body the diff shows whole.
        return _FileCounts(removed.counts, added.counts, 0, frozenset())
    if change.status == "deleted" or new is None:
        return _FileCounts(removed.counts, {}, 0, frozenset())
    if change.status == "added" or old is None:
        return _FileCounts({}, added.counts, 0, _quiet(added))
    before, after = _read(trees, "base", old), _read(trees, "head", new)
    if before is None or after is None:
        return _FileCounts(removed.counts, added.counts, 0, frozenset())
    quiet = _quiet(after)
    kept = 0
    if _counted_whole(old) and _counted_whole(new):
        headers = ({line.number for line in change.removed}, {line.number for line in change.added})
        kept = _kept(before, after, headers, quiet)
    return _FileCounts(before.counts, after.counts, kept, quiet)


def _counted_whole(path: str) -> bool:
    """Test files whose tests stand for cases read from the file: Python's (parametrize
    lists) and Go's (subtests)."""
    if go.is_test_file(path):
        return True
    return python.is_module(path) and is_test_path(path) and not is_conftest(path)


def _read(trees: TreeView, side: Side, path: str) -> _Whole | None:
    text = trees.text(side, path)
    if text is None:
        return None
    # Numbered as the change numbers them (`app.guards.lines`): split at newlines only.
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()
    numbered = [Line(number, line, number) for number, line in enumerate(raw, 1)]
    return _whole(numbered, len(raw), reader_for(path))


def _whole(lines: list[Line], last_line: int | None, reader: Reader) -> _Whole:
    """The definitions of a whole file, or of the lines the diff shows of one side (whose
    line count is `last_line`)."""
    defs = definitions(lines, last_line, reader)
    suites = containers(defs)
    counts = {d.line.number: 0 if d.line.number in suites else d.cases for d in defs}
    return _Whole(lines, defs, counts)


def _kept(
    before: _Whole, after: _Whole, changed: tuple[set[int], set[int]], quiet: frozenset[int]
) -> int:
    """Net tests gained by the definitions whose header line is unchanged: the same lines, in
    the same order, on both sides. Zero when the two sides do not line up (nothing is
    assumed)."""
    removed, added = changed
    old = [d for d in before.defs if d.line.number not in removed]
    new = [d for d in after.defs if d.line.number not in added]
    if len(old) != len(new):
        return 0
    if any(a.line.text != b.line.text for a, b in zip(old, new, strict=True)):
        return 0
    net = 0
    for a, b in zip(old, new, strict=True):
        was, now = before.counts[a.line.number], after.counts[b.line.number]
        net += _gain(was, now, quiet=b.line.number in quiet)
    return net


def _go_skips(definition: Definition) -> bool:
    """A Go test whose body may skip (`t.Skip`, `t.SkipNow`, `t.Skipf`), anywhere in it: in a
    subtest, or under a condition. Unknown (cut short) counts as may."""
    if not definition.line.text.startswith("func "):
        return False
    return definition.body is None or any(_GO_SKIP.search(line) for line in definition.body)


def _quiet(side: _Whole) -> frozenset[int]:
    """Head header lines of the tests whose new cases may not run: a decorator of the test or
    of a suite around it mentions a skip or xfail (`skipif(...)`, a case given
    `marks=pytest.mark.skip`), the module's `pytestmark` does, or a Go test may skip. Broad
    on purpose: such a test's gains pay nothing, which is only ever stricter."""
    lines = side.lines
    if any(_MODULE_MARK.match(line.text) and _MAY_SKIP.search(line.text) for line in lines):
        return frozenset(d.line.number for d in side.defs)
    position = {line.number: index for index, line in enumerate(lines)}
    marked: list[Definition] = []
    for definition in side.defs:
        index = position[definition.line.number]
        decorators = lines[decorator_start(lines, index) : index]
        if any(_MAY_SKIP.search(line.text) for line in decorators) or _go_skips(definition):
            marked.append(definition)
    quiet = {d.line.number for d in marked}
    for definition in side.defs:
        number = definition.line.number
        if any(m.line.number < number <= (m.end or 0) for m in marked):
            quiet.add(number)
    return frozenset(quiet)
