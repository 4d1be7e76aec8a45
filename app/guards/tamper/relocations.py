"""Where the tests a change removes went: renamed, moved to another file, folded into a
parametrized test, or gone. Over the whole change, so a move between files is seen as one.

A removed test definition is matched, in this order, to an added one
1. with the same name (an edited header, or a move), then
2. with an identical body under another name (a rename; both bodies wholly in the change).
An added test can stand for a removed one only in the same file or in a file the runner
collects: a test "moved" into a fixture or helper file is gone. Removed tests that were skipped
anyway are not counted (they ran nowhere): unconditionally, or by a version condition that
holds on every Python the project supports (after the change, for a change that drops old
Pythons: `exemptions.dropped_pythons`).

Suites (a `describe`, a test class) stand for no test of their own and are left out. Removed
tests a caller sets aside (`exempt`: tests removed with the code they tested, see
`exemptions.set_aside`) are then taken out, as if they had not been removed: the rest of the
change is judged exactly as it would be without them.

What is left unmatched in a file is set against the new tests the same file gains, a
parametrized test counting one per literal case, a Go test one per subtest, and a suite (a
`describe`, a test class) none; with the trees, counted from the whole files, so that the cases
gained or lost by tests the change does not touch count too (`counts`), as do those
a test carried on gains or loses. A file whose removed tests mostly (at least three in four)
went to other files is a move, split or merge: its few leftovers (tests renamed and edited on
the way) may also be set against new tests other collected files gain beyond their own needs.
Whatever remains is a removal.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_left
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from app.guards.changes import FileChange, Line, is_telling
from app.guards.tamper.conditions.skip_conditions import Floor, decorator_skips_everywhere
from app.guards.tamper.counts import Counts
from app.guards.tamper.definitions import Definition, definitions, skipped_definitions
from app.guards.tamper.lang import go, reader_for
from app.guards.tamper.lang.text import indent
from app.guards.tamper.test_files import (
    collects_tests,
    holds_unit_tests,
    is_conftest,
    reads_tests,
)

# Given the removed tests nothing accounts for (per file), the header line numbers of those
# to set aside (per file).
Exempt = Callable[[Mapping[int, Sequence[Definition]]], Mapping[int, set[int]]]

# Given a removed test file's old path and its removed tests, the header lines of those a
# skip kept from running on every supported Python (`exemptions.dropped_pythons`).
SkippedAnyway = Callable[[str, Sequence[Definition]], set[int]]

# Share of a file's removed tests that must have gone to other files for it to be a move.
_MOVED_SHARE = 0.75
# Share of a deleted test file's telling lines an added one must have to be it, renamed.
_RENAME_SHARE = 0.4


@dataclass(frozen=True)
class Continuation:
    """An added test that carries on a removed one."""

    old: Definition
    new: Definition
    old_file: int  # indexes of the two files in the change
    new_file: int


@dataclass
class Relocations:
    """The fate of every removed test of a change (files by their index in the change)."""

    # Tests each file lost for good, the ones to report first.
    gone: dict[int, list[Definition]] = field(default_factory=dict)
    # Removed tests per file (all recognised definitions, skipped ones included).
    removed: dict[int, list[Definition]] = field(default_factory=dict)
    continuations: list[Continuation] = field(default_factory=list)
    # (file, name) of added tests that carry on an older test, or stand in for one removed
    # from their file (the nearest new test): a skip added to them hides a test that ran.
    carried: set[tuple[int, str]] = field(default_factory=set)
    # Removed tests set aside by the caller's `exempt`, per file.
    exempt: dict[int, list[Definition]] = field(default_factory=dict)


def relocate(
    files: Sequence[FileChange],
    exempt: Exempt | None = None,
    floor: Floor | None = None,
    counts: Counts | None = None,
    unbuilt: frozenset[int] = frozenset(),
    skipped: SkippedAnyway | None = None,
) -> Relocations:
    """Where every removed test went. `floor`, the oldest Python the project supports, lets
    a test skipped on all of them count as skipped (its decorators read from the diff; read
    from the base by `skipped`, when given), and so do the files of `unbuilt` (Go test files
    no supported Go builds, `build_constraints`); `counts` says how many tests each
    definition stands for (parametrized cases, suites), from the whole files where the trees
    are at hand (`counts`), else from the diff."""
    removed = {
        index: definitions(change.removed, change.old_line_count, reader_for(change.old_path))
        for index, change in enumerate(files)
        if _counts_removals(change.old_path)
    }
    added = {
        index: definitions(change.added, change.new_line_count, reader_for(change.new_path))
        for index, change in enumerate(files)
        if change.new_path is not None and reads_tests(change.new_path)
    }
    collected = {
        i
        for i in added
        if collects_tests(files[i].new_path or "") or holds_unit_tests(files[i].new_path or "")
    }
    result = Relocations(removed=removed)
    pool = _Pool(added, collected)
    unmatched = _match(files, removed, pool, result, floor, unbuilt, skipped)
    count = counts or Counts(files, None)
    # Suites stand for no test of their own: the tests inside them are counted.
    unmatched = _tests(unmatched, count.removed)
    if exempt is not None and unmatched:
        unmatched = _set_aside(unmatched, exempt(unmatched), result)
    if not unmatched:
        return result
    left = _tests(pool.left(), count.added)
    fresh = {index: sum(count.added(index, d) for d in defs) for index, defs in left.items()}
    for index in {*unmatched, *left}:
        fresh[index] = fresh.get(index, 0) + count.kept(index)
    for carried in result.continuations:
        gain = count.carried(carried.old_file, carried.old, carried.new_file, carried.new)
        fresh[carried.new_file] = fresh.get(carried.new_file, 0) + gain
    deficits = {
        index: sum(count.removed(index, d) for d in defs) - fresh.get(index, 0)
        for index, defs in unmatched.items()
    }
    renamed = _renamed_apart(files, deficits, fresh, collected)
    for old, new in renamed.items():
        paid = min(max(deficits[old], 0), max(fresh.get(new, 0), 0))
        deficits[old] -= paid
        fresh[new] -= paid
        # Its new tests stand for the old ones: a skip added to them hides a test that ran.
        result.carried.update((new, d.name) for d in left.get(new, []))
    _settle_moves(deficits, fresh, collected, _moved_out(unmatched, result))
    for index, defs in unmatched.items():
        result.gone[index] = _excess(defs, deficits[index], partial(count.removed, index))
        result.carried.update((index, name) for name in _stand_ins(defs, left.get(index, [])))
    return result


def _tests(
    defs: Mapping[int, Sequence[Definition]], count: Callable[[int, Definition], int]
) -> dict[int, list[Definition]]:
    """Per file, the definitions that stand for at least one test (not suites)."""
    found = {index: [d for d in group if count(index, d) > 0] for index, group in defs.items()}
    return {index: group for index, group in found.items() if group}


def _counts_removals(path: str | None) -> bool:
    return path is not None and reads_tests(path) and not is_conftest(path)


class _Pool:
    """Added test definitions not yet paired with a removed one, found by name or body."""

    def __init__(self, added: dict[int, list[Definition]], collected: set[int]) -> None:
        self._added = added
        self._collected = collected
        self._taken: set[tuple[int, int]] = set()  # (file, header line)
        self._by_name: dict[str, dict[int, deque[Definition]]] = defaultdict(dict)
        self._by_body: dict[tuple[str, ...], dict[int, deque[Definition]]] = defaultdict(dict)
        for index, defs in added.items():
            for definition in defs:
                self._by_name[definition.name].setdefault(index, deque()).append(definition)
                if definition.body:
                    self._by_body[definition.body].setdefault(index, deque()).append(definition)

    def take(self, home: int, old: Definition, *, by_body: bool) -> tuple[int, Definition] | None:
        """The first free added test with `old`'s name (or body), in `old`'s own file if
        there is one, else in a file the runner collects. A definition that stands for no
        test (a Go benchmark, which `go test` does not run) carries on none that did."""
        if by_body:
            queues = self._by_body.get(old.body) if old.body else None
        else:
            queues = self._by_name.get(old.name)
        if not queues:
            return None
        for index in [home, *(i for i in queues if i != home and i in self._collected)]:
            queue = queues.get(index, deque())
            for definition in list(queue):
                key = (index, definition.line.number)
                if key in self._taken or (old.cases > 0 and definition.cases == 0):
                    continue
                queue.remove(definition)
                self._taken.add(key)
                return index, definition
        return None

    def left(self) -> dict[int, list[Definition]]:
        return {
            index: [d for d in defs if (index, d.line.number) not in self._taken]
            for index, defs in self._added.items()
        }


def _match(
    files: Sequence[FileChange],
    removed: dict[int, list[Definition]],
    pool: _Pool,
    result: Relocations,
    floor: Floor | None,
    unbuilt: frozenset[int] = frozenset(),
    skipped_anyway: SkippedAnyway | None = None,
) -> dict[int, list[Definition]]:
    """Pair removed tests with added ones by name, then by body; return, per file, the
    unpaired ones that ran (none of a file in `unbuilt`: no supported toolchain built it)."""
    pending: list[tuple[int, Definition]] = []
    for index, defs in removed.items():
        for old in defs:
            if not _carry(pool, index, old, result, by_body=False):
                pending.append((index, old))
    unmatched: dict[int, list[Definition]] = defaultdict(list)
    # Not counted: tests skipped anyway (they ran nowhere). Read for a file when one of its
    # tests is left unpaired: reading the base may take a read of the tree.
    skipped: dict[int, set[int]] = {}
    for index, old in pending:
        if _carry(pool, index, old, result, by_body=True) or index in unbuilt:
            continue
        if index not in skipped:
            change, defs = files[index], removed[index]
            skipped[index] = (
                skipped_definitions(defs, change.removed, reader_for(change.old_path))
                | _skipped_where_supported(defs, change.removed, floor)
                | _empty_go_tests(defs, change.old_path or "")
            )
            if skipped_anyway is not None:
                skipped[index] |= skipped_anyway(change.old_path or "", defs)
        if old.line.number not in skipped[index]:
            unmatched[index].append(old)
    return unmatched


def _empty_go_tests(defs: Sequence[Definition], path: str) -> set[int]:
    """Header lines of the Go tests whose whole body, as the change shows it, is nothing but
    its closing brace (blank and comment lines are not kept in a body): such a test executes
    no statement and always passes, so removing it cannot turn a red suite green (echo's
    `func TestName(t *testing.T) {}`). The body read is the base's, so a test emptied and
    removed in the same change is counted; a Go test has no fixtures or hooks of its own that
    would run for it."""
    if not go.is_test_file(path):
        return set()
    return {
        d.line.number
        for d in defs
        if d.body == ("}",) and d.line.text.rstrip().endswith("{") and d.line.text.count("{") == 1
    }


def _skipped_where_supported(
    defs: Sequence[Definition], lines: Sequence[Line], floor: Floor | None
) -> set[int]:
    """Header lines of the definitions whose own `skipif` decorators (in the same run of
    lines) skip them on every platform and every Python from `floor` on."""
    if floor is None:
        return set()
    position = {line.number: index for index, line in enumerate(lines)}
    found: set[int] = set()
    for definition in defs:
        index = position[definition.line.number]
        if any(decorator_skips_everywhere(lines, d, floor) for d in _decorators(lines, index)):
            found.add(definition.line.number)
    return found


def _decorators(lines: Sequence[Line], index: int) -> list[int]:
    """Positions of the decorator lines (`@...`) right above `lines[index]`, same run."""
    header = indent(lines[index].text)
    found: list[int] = []
    while index > 0 and lines[index - 1].number == lines[index].number - 1:
        index -= 1
        stripped = lines[index].text.strip()
        if not stripped or (indent(lines[index].text) <= header and stripped[0] not in "@)]"):
            break
        if stripped.startswith("@") and indent(lines[index].text) == header:
            found.append(index)
    return found


def _set_aside(
    unmatched: dict[int, list[Definition]], chosen: Mapping[int, set[int]], result: Relocations
) -> dict[int, list[Definition]]:
    kept: dict[int, list[Definition]] = defaultdict(list)
    for index, defs in unmatched.items():
        headers = chosen.get(index, set())
        for definition in defs:
            if definition.line.number in headers:
                result.exempt.setdefault(index, []).append(definition)
            else:
                kept[index].append(definition)
    return kept


def _carry(pool: _Pool, home: int, old: Definition, result: Relocations, *, by_body: bool) -> bool:
    taken = pool.take(home, old, by_body=by_body)
    if taken is None:
        return False
    index, new = taken
    result.continuations.append(Continuation(old, new, home, index))
    result.carried.add((index, new.name))
    return True


def _moved_out(
    unmatched: dict[int, list[Definition]],
    result: Relocations,
) -> set[int]:
    """Files with leftovers most of whose removed tests went to other files."""
    elsewhere: dict[int, int] = defaultdict(int)
    for continuation in result.continuations:
        if continuation.new_file != continuation.old_file:
            elsewhere[continuation.old_file] += 1
    return {
        index
        for index, defs in unmatched.items()
        if defs and elsewhere[index] >= _MOVED_SHARE * (elsewhere[index] + len(defs))
    }


def _renamed_apart(
    files: Sequence[FileChange],
    deficits: Mapping[int, int],
    fresh: Mapping[int, int],
    collected: set[int],
) -> dict[int, int]:
    """Deleted test files with a deficit, each paired with the test file the change adds in
    the same folder, with the same suffix, that shares at least `_RENAME_SHARE` of its telling
    lines (`_telling_lines`): a rename git's 50% similarity did not pair (execa's
    `test/stream/child.js` made `subprocess.js`, every test retitled; typer's
    `test_corner_cases.py` made `test_hidden.py`). Only one to one: a file that shares that
    much with two, or two that share it with one, pair with none."""
    deleted = [i for i, d in deficits.items() if d > 0 and files[i].status == "deleted"]
    added = [
        i
        for i in collected
        if files[i].status == "added" and i not in deficits and fresh.get(i, 0) > 0
    ]
    if not deleted or not added:
        return {}
    gained = {new: _telling_lines(files[new].added) for new in added}
    candidates: dict[int, list[int]] = {}
    for old in deleted:
        path = files[old].old_path or ""
        lines = _telling_lines(files[old].removed)
        candidates[old] = [
            new
            for new in added
            if _same_place(path, files[new].new_path or "")
            and _shared(lines, gained[new]) >= _RENAME_SHARE
        ]
    claims = Counter(new for news in candidates.values() for new in news)
    return {
        old: news[0] for old, news in candidates.items() if len(news) == 1 and claims[news[0]] == 1
    }


def _same_place(old: str, new: str) -> bool:
    return posixpath.dirname(old) == posixpath.dirname(new) and (
        posixpath.splitext(old)[1] == posixpath.splitext(new)[1]
    )


def _telling_lines(lines: Sequence[Line]) -> Counter[str]:
    """A file's lines that say something (`is_telling`), stripped: not the braces, blank
    lines and `end`s any two files share."""
    return Counter(line.text.strip() for line in lines if is_telling(line.text))


def _shared(old: Counter[str], new: Counter[str]) -> float:
    total = sum(old.values())
    return sum((old & new).values()) / total if total else 0.0


def _settle_moves(
    deficits: dict[int, int], fresh: dict[int, int], collected: set[int], moved: set[int]
) -> None:
    """Let files that are moves pay their leftover deficit from the new tests other collected
    files gain beyond their own needs."""
    spare = {
        index: max(-deficits[index], 0) if index in deficits else max(fresh[index], 0)
        for index in fresh
        if index in collected and index not in moved
    }
    for index in sorted(moved):
        for lender, amount in spare.items():
            paid = min(max(deficits[index], 0), amount)
            deficits[index] -= paid
            spare[lender] -= paid


def _stand_ins(gone: list[Definition], fresh: list[Definition]) -> set[str]:
    """The new tests that most likely replace removed ones in the same file: for each removed
    test, the nearest new one (a test renamed and edited in place lands where it was)."""
    free = sorted(fresh, key=lambda new: new.line.number)
    lines = [new.line.number for new in free]
    names: set[str] = set()
    for old in gone:
        if not free:
            break
        at = bisect_left(lines, old.line.anchor)
        nearby = [i for i in (at - 1, at) if 0 <= i < len(free)]
        nearest = min(nearby, key=lambda i: abs(lines[i] - old.line.anchor))
        names.add(free.pop(nearest).name)
        lines.pop(nearest)
    return names


def _excess(
    defs: list[Definition], deficit: int, cases: Callable[[Definition], int]
) -> list[Definition]:
    """The first removed tests that make up `deficit` (parametrized cases counted)."""
    reported: list[Definition] = []
    for definition in defs:
        if deficit <= 0:
            break
        reported.append(definition)
        deficit -= cases(definition)
    return reported
