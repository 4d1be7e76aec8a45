"""Skip and focus markers added to tests that existed (part of the `test-tamper` rule).

A skip, xfail, ignore or disabled marker added to a test that existed before, in its file or
in the file it moved to, directly or on a suite around it, unless it cannot apply where the
suite runs (`conditions`); a focused test (`it.only`, `fit`), which skips
every other. Which skip lines are new is read as any equally valid diff would show it (each
run of added lines slid as far as the lines around it repeat); a skip reworded, or moved
with its test (`exemptions.moved_skips`), or a case's skip mark moved into its test
(`exemptions.case_skips`) replaces one that was there. A skip in a function that is not a
test (a fixture, a hook, a helper) is not in the test above it."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from app.guards.changes import FileChange, Line
from app.guards.tamper.code_names import python_module
from app.guards.tamper.conditions.dependency_skips import fires_only_when_missing
from app.guards.tamper.conditions.flags import Names, flags
from app.guards.tamper.conditions.skip_conditions import (
    Floor,
    body_skip_elsewhere_only,
    condition_false_on_linux,
    decorator_skips_elsewhere_only,
    truth_on_linux,
)
from app.guards.tamper.conditions.test_dependencies import Installed
from app.guards.tamper.definitions import (
    containers,
    definition_name_at,
    definitions,
)
from app.guards.tamper.diffs import alignments
from app.guards.tamper.early_returns import gated_returns, skip_gate
from app.guards.tamper.exemptions.case_skips import paid_skips
from app.guards.tamper.exemptions.moved_skips import Travelled
from app.guards.tamper.finding import Tamper
from app.guards.tamper.lang import Reader, javascript, plain_comment, reader_for
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.lang.reader import SkipKind
from app.guards.tamper.lang.text import indent
from app.guards.trees import Side, TreeView

# A function that may enclose a skip: Python's `def`, Go's `func`.
_FUNCTION = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\(|^func\b")


class Sides:
    """A changed file's two sides as numbered lines, read from the trees when first needed:
    a skip's condition may run past the changed lines (the diff aligns a new decorator with
    the `)` of the one above it), and the whole file shows all of it."""

    def __init__(
        self,
        change: FileChange,
        trees: TreeView | None,
        floor: Floor | None,
        newest: Floor | None,
        installed: Installed,
    ):
        self.change = change
        self.floor = floor
        self.newest = newest
        self.trees = trees
        self.installed = installed
        self._read: dict[Side, list[Line] | None] = {}
        self._names: dict[Side, Names] = {}
        self._modules: dict[Side, ast.Module | None] = {}

    def whole(self, side: Side) -> list[Line] | None:
        if side not in self._read:
            text = self._text(side)
            numbered = enumerate(text.splitlines(), 1) if text is not None else None
            self._read[side] = [Line(n, t, n) for n, t in numbered] if numbered else None
        return self._read[side]

    def names(self, side: Side) -> Names:
        """What the platform flags of the file's side stand for (`WIN`, `conditions.flags`)."""
        if side not in self._names:
            path = self._path(side) or ""
            self._names[side] = flags(self.trees, side, path, self._text(side))
        return self._names[side]

    def needs_missing(self, side: Side, number: int) -> bool:
        """Whether the skip on line `number` of the file's side fires only when a package the
        project installs for its tests is missing (`conditions.dependency_skips`)."""
        if not is_module(self._path(side) or ""):
            return False
        module = self._module(side)
        names = self.names(side)
        return module is not None and fires_only_when_missing(
            module,
            number,
            self.installed,
            lambda node: truth_on_linux(node, self.floor, names, self.newest),
            self._module("base"),
            names.standard,
        )

    def _module(self, side: Side) -> ast.Module | None:
        if side not in self._modules:
            self._modules[side] = python_module(self._text(side))
        return self._modules[side]

    def _path(self, side: Side) -> str | None:
        return self.change.new_path if side == "head" else self.change.old_path

    def _text(self, side: Side) -> str | None:
        path = self._path(side)
        return self.trees.text(side, path) if self.trees and path else None


def markers(
    change: FileChange,
    existed: set[str],
    sides: Sides,
    travelled: Travelled | None,
) -> list[Tamper]:
    """Focus and skip markers the change adds to tests that existed (see the module's
    docstring)."""
    found: list[Tamper] = []
    reader = reader_for(change.path)
    for line in change.added:
        if reader.focuses(line.text):
            found.append(Tamper(change.path, line.number, "focused test added (skips others)"))
    arrived: set[int] = travelled.arrived if travelled else set()
    # A new file's own new tests hid nothing that ran before, skipped or not; a test moved
    # into it did run, and a skip added on the way hides it.
    new_file = change.status in ("added", "copied")
    skips = min(
        (
            _new_skips(change, added, existed, sides, arrived, new_file=new_file)
            for added in _added_alignments(change, sides)
        ),
        key=len,
    )
    if new_file:
        return found + skips
    # A skip reworded or reformatted replaces one that was there: only net new skips count.
    # A skip that left with its test for another file (`travelled`) replaces nothing here.
    left: set[int] = travelled.left if travelled else set()
    kinds = zip(change.removed, _skip_kinds(change.removed, sides, "base"), strict=True)
    gone = [(line, kind) for line, kind in kinds if kind and line.number not in left]
    skips = _gates_restated(_case_marks_moved(skips, sides), change, sides)
    return found + _net_of(skips, gone, sides)


def _case_marks_moved(skips: list[Tamper], sides: Sides) -> list[Tamper]:
    """The new skips left once skip marks the change takes off parametrized cases pay for the
    skips moved into their test's body under those cases (`exemptions.case_skips`). Python
    only, with both whole files."""
    base, head = sides.whole("base"), sides.whole("head")
    if not skips or base is None or head is None or not is_module(sides.change.path):
        return skips
    paid = paid_skips(
        "\n".join(line.text for line in base),
        "\n".join(line.text for line in head),
        [tamper.line or 0 for tamper in skips],
        sides.floor,
        sides.names,
        newest=sides.newest,
    )
    return [tamper for tamper in skips if (tamper.line or 0) not in paid]


def _gates_restated(skips: list[Tamper], change: FileChange, sides: Sides) -> list[Tamper]:
    """Skips under an `if` whose condition the change takes off a `return` in the same file:
    an `if (cond) return` that left a test undefined where `cond` holds, made an `if (cond) {
    this.skip() }` in the test. The same condition kept the test from running before; only
    where it is checked moved."""
    gated = gated_returns(change.removed)
    head = sides.whole("head")
    if not gated or head is None:
        return skips
    kept: list[Tamper] = []
    for tamper in skips:
        condition = skip_gate(head, (tamper.line or 0) - 1)
        if condition is None or condition not in gated:
            kept.append(tamper)
    return kept


def _net_of(skips: list[Tamper], gone: list[tuple[Line, str]], sides: Sides) -> list[Tamper]:
    """The new skips that no removed one replaces. With both whole files, a skip taken off a
    test replaces only a skip on that same test (a reworded reason, a `skip` made a `skipif`):
    taken off a passing test, it does not pay for one put on another. A skip whose test
    cannot be told (no trees, a module-wide marker) is netted against any, as before."""
    base, head = sides.whole("base"), sides.whole("head")
    if base is None or head is None:
        return skips[len(gone) :]
    reader = reader_for(sides.change.path)
    removed = Counter(_skipped_test(base, line.number, kind, reader) for line, kind in gone)
    head_kinds = dict(
        zip((line.number for line in head), _skip_kinds(head, sides, "head"), strict=True)
    )
    kept: list[Tamper] = []
    for tamper in skips:
        kind = head_kinds.get(tamper.line or 0)
        name = _skipped_test(head, tamper.line or 0, kind, reader) if kind else None
        if name is not None and removed[name] > 0:
            removed[name] -= 1
        elif name is None and sum(removed.values()) > 0:
            removed[next(n for n, c in removed.items() if c > 0)] -= 1
        elif name is not None and removed[None] > 0:
            removed[None] -= 1
        else:
            kept.append(tamper)
    return kept


def _skipped_test(
    whole: Sequence[Line], number: int, kind: str | None, reader: Reader
) -> str | None:
    """The name of the test a skip line (numbered in the whole file) applies to; None when
    that cannot be told."""
    index = number - 1
    if kind is None or not 0 <= index < len(whole):
        return None
    if kind in ("defining", "conditional"):
        header: int | None = number if definition_name_at(whole, index, reader) else None
    elif kind == "decorator":
        header = _header_after(whole, index, reader)
    elif kind == "body":
        header, _ = _header_before(whole, index, reader)
    else:
        return None
    return _name_at(whole, header, reader)


def skip_kind(text: str, path: str) -> SkipKind | None:
    """How a line of the file at `path` skips tests, as its language's reader reads it."""
    if plain_comment(text, path):
        return None  # a comment runs nothing: `// TinyGo does not support t.Skip`
    reader = reader_for(path)
    kind = reader.skip(text)
    if kind is None:
        option = reader.skip_option(text)
        if option is not None and _option_skips(option):
            return "defining"
    return kind


def _option_skips(value: str) -> bool:
    """Whether a node:test `skip:`/`todo:` option may skip where the suite runs: anything but
    `false`, `undefined`, `null`, `0` or a condition false on Linux."""
    value = value.strip()
    return value not in ("false", "undefined", "null", "0") and not condition_false_on_linux(value)


def _skip_kinds(lines: Sequence[Line], sides: Sides, side: Side) -> Iterable[str | None]:
    """Each line's skip kind; None for no skip, or for one that applies only off Linux (or
    only on Pythons older than the project supports, or only when a package the project
    installs for its tests is missing)."""
    for index, line in enumerate(lines):
        kind = skip_kind(line.text, sides.change.path)
        # The module says whether the `sys` a condition reads is the standard one.
        if kind is None or _elsewhere_only(kind, lines, index, sides, sides.names(side)):
            yield None
            continue
        whole = sides.whole(side) if kind in ("module", "decorator", "body") else None
        at = line.number - 1
        in_whole = whole is not None and 0 <= at < len(whole) and whole[at].text == line.text
        # Read whole, the file also shows what a platform flag in the condition stands for,
        # and whether the skip fires only when a package installed for the tests is missing.
        elsewhere = in_whole and (
            _elsewhere_only(kind, whole or [], at, sides, sides.names(side))
            or sides.needs_missing(side, line.number)
        )
        yield None if elsewhere else kind


def _elsewhere_only(
    kind: str, lines: Sequence[Line], index: int, sides: Sides, names: Names | None = None
) -> bool:
    """Whether a skip of this kind at `lines[index]` cannot apply where the suite runs: on
    Linux, on a Python the project declares (`sides.floor` to `sides.newest`)."""
    floor, newest = sides.floor, sides.newest
    if reader_for(sides.change.path).elsewhere_only(lines[index].text):
        return True  # `@DisabledOnOs(WINDOWS)`, `#[cfg_attr(windows, ignore)]`
    if kind in ("module", "decorator"):
        return decorator_skips_elsewhere_only(lines, index, floor, names, newest=newest)
    if kind == "conditional":
        return _conditional_elsewhere_only(lines[index].text)
    return kind == "body" and body_skip_elsewhere_only(
        lines, index, names, floor=floor, newest=newest
    )


def _conditional_elsewhere_only(text: str) -> bool:
    """Whether a conditional skip (`it.skipIf(cond)(...)`, `it.runIf(cond)(...)`) skips only
    off Linux: its condition, read as in `conditions.skip_conditions`, is false on Linux for
    `skipIf`, true for `runIf`."""
    match = javascript.CONDITIONAL_SKIP.search(text)
    if match is None:
        return False
    condition = match["cond"] if match["how"] == "skipIf" else f"!({match['cond']})"
    return condition_false_on_linux(condition)


def _added_alignments(change: FileChange, sides: Sides) -> list[list[Line]]:
    """The added lines as the diff shows them and, read from the whole new file, as equally
    valid diffs would show them: each run slid down or up as far as the lines around it
    repeat (`diffs.alignments`). A new test inserted above an old one, both
    under the same `@pytest.mark.skipif(`, may be shown as the old test's decorator added
    and the new test's kept; the new file is the same either way, and which of its skip
    lines is new is the alignment's choice, not the change's."""
    shown = list(change.added)
    if not any(skip_kind(line.text, change.path) for line in shown):
        return [shown]
    whole = sides.whole("head")
    if whole is None or any(
        not 0 < line.number <= len(whole) or whole[line.number - 1].text != line.text
        for line in shown
    ):
        return [shown]
    texts = [line.text for line in whole]
    numbers = {line.number for line in shown}
    slid = [sorted(other) for other in alignments(texts, numbers)[1:] if other != numbers]
    return [shown, *([whole[n - 1] for n in other] for other in slid)]


def _new_skips(
    change: FileChange,
    added: list[Line],
    existed: set[str],
    sides: Sides,
    arrived: set[int],
    *,
    new_file: bool,
) -> list[Tamper]:
    """Skip markers added to tests that existed before (or that carry on a removed one). A
    skip on a suite skips the tests inside it. In a new file, only skips on tests that came
    from elsewhere count; `arrived` are skip lines that came along with their test."""
    kinds = list(_skip_kinds(added, sides, "head"))
    if not any(kinds):
        return []
    reader = reader_for(change.path)
    inner = _inner_names(added, change.new_line_count, reader)
    found: list[Tamper] = []
    helper = False
    for index, kind in enumerate(kinds):
        line = added[index]
        if kind is None or line.number in arrived:
            continue
        if kind == "module":
            if not new_file or existed & set(inner.get(0, ())):
                found.append(Tamper(change.path, line.number, "module-wide skip marker added"))
            continue
        if kind in ("defining", "conditional"):
            header: int | None = line.number if definition_name_at(added, index, reader) else None
        elif kind == "decorator":
            header = _header_after(added, index, reader)
        else:
            header, helper = _header_before(added, index, reader)
        names = {_name_at(added, header, reader) or ""} | set(inner.get(header or -1, ()))
        if kind in ("defining", "conditional") and reader.skips_suite(line.text):
            # Where a JavaScript suite ends is read from indentation, which code need not
            # follow: a skipped suite is taken to hold every test after it in the run.
            names |= _names_after(added, index, reader)
        kept = (
            kind in ("defining", "conditional")
            and not new_file
            and reader.skips_suite(line.text)
            and _holds_kept_tests(change, sides, line, reader)
        )
        if (header is None and not new_file) or existed & names or kept:
            where = "to a test" if kind != "body" else "inside a test"
            if kind == "body" and header is None and helper:
                where = "inside a fixture or helper"
            found.append(Tamper(change.path, line.number, f"skip marker added {where}"))
    return found


def _holds_kept_tests(change: FileChange, sides: Sides, line: Line, reader: Reader) -> bool:
    """Whether a skipped suite's block, read on the new side (whole with the trees, else the
    run the diff shows), holds a test whose header the change did not add: a test that ran,
    skipped by a suite renamed and skipped at once (`describe Calc do` made `xcontext "calc"
    do`)."""
    whole = sides.whole("head")
    shown = whole if whole is not None else sorted((*change.added, *change.context), key=_number)
    position = next((i for i, other in enumerate(shown) if other.number == line.number), None)
    if position is None:
        return False
    start = position
    while start > 0 and shown[start - 1].number == shown[start].number - 1:
        start -= 1
    end = position
    while end + 1 < len(shown) and shown[end + 1].number == shown[end].number + 1:
        end += 1
    run = shown[start : end + 1]
    last = start + reader.block_end([other.text for other in run], position - start)
    fresh = {other.number for other in change.added}
    return any(
        run[i - start].number not in fresh and definition_name_at(run, i - start, reader)
        for i in range(position + 1, min(last, end + 1))
    )


def _number(line: Line) -> int:
    return line.number


def _inner_names(
    added: Sequence[Line], last_line: int | None, reader: Reader
) -> dict[int, list[str]]:
    """For each suite wholly in `added`, by its header line, the names of the tests inside it;
    under 0, every test the lines define (what a module-wide marker skips)."""
    defs = definitions(added, last_line, reader)
    suites = containers(defs)
    inner: dict[int, list[str]] = {0: [d.name for d in defs]}
    for suite in defs:
        if suite.line.number in suites and suite.end is not None:
            start, end = suite.line.number, suite.end
            inner[start] = [d.name for d in defs if start < d.line.number <= end]
    return inner


def _names_after(block: Sequence[Line], index: int, reader: Reader) -> set[str]:
    """The names of the tests defined after `block[index]` in the same run of lines."""
    names: set[str] = set()
    for position in range(index + 1, len(block)):
        if block[position].number != block[position - 1].number + 1:
            break
        names.add(definition_name_at(block, position, reader) or "")
    return names


def _name_at(block: Sequence[Line], number: int | None, reader: Reader) -> str | None:
    """The name of the test whose header is line `number` of `block`, if any."""
    position = next((i for i, line in enumerate(block) if line.number == number), None)
    return None if position is None else definition_name_at(block, position, reader)


def _header_after(block: Sequence[Line], index: int, reader: Reader) -> int | None:
    """The header line of the test defined by the next lines of the same run, if any."""
    for position in range(index + 1, len(block)):
        if block[position].number != block[position - 1].number + 1:
            return None
        if definition_name_at(block, position, reader) is not None:
            return block[position].number
    return None


def _header_before(block: Sequence[Line], index: int, reader: Reader) -> tuple[int | None, bool]:
    """The header line of the test whose (added) header precedes this line in the same run,
    if any, and whether a function that is not a test (a fixture, a hook, a helper: a Python
    `def`, a Go `func`) encloses the line first. A skip in such a function is not in the test
    above it, even a new one: it skips whatever test uses the function (every one, for an
    autouse fixture), unless the function is itself nested in a test, which then holds it."""
    # Indentation below which an enclosing test must start, once a function encloses the line.
    enclosed: int | None = None
    for position in range(index - 1, -1, -1):
        if block[position].number != block[position + 1].number - 1:
            return None, enclosed is not None
        text = block[position].text
        if definition_name_at(block, position, reader) is not None:
            if enclosed is None or indent(text) < enclosed:
                return block[position].number, False
        elif _FUNCTION.match(text) and indent(text) < (
            indent(block[index].text) if enclosed is None else enclosed
        ):
            enclosed = indent(text)
    return None, enclosed is not None
