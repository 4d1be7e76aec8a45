"""The `test-tamper` rule: making a red suite green by removing or silencing tests while the
code those tests exercise stays.

This module reports removals and runs the parts, each a module of its own: skip and focus
markers (`markers`), pytest told to collect less (`narrowing`), tests pytest no longer
collects (`hidden`), assertions switched off (`assertions`), early returns and exits
(`early_returns`, `early_exits`), the JavaScript runners' settings and the commands that run a
suite (`runners`). Where removed tests went is worked out over the whole change by
`relocations`; which removed tests are not tampering, by `exemptions.set_aside`. Each test
file is read by its language's reader (`lang.reader_for`).

Reported:
- a test file deleted, unless its tests are somewhere else now (a move, split or merge) or
  went with the code they tested (below);
- a test file renamed so the runner no longer collects it (`.bak`, out of test naming/folders);
- a file's tests going down: removed tests found nowhere else in the change (by name or body)
  outnumber the new tests the same file gains, a parametrized test counting one per literal
  case (so folding three tests into one test with three cases is not a removal), a Go test
  one per `t.Run` subtest directly in its body (a loop over a table of them one), and a suite
  (`describe`, a test class) counting none, its tests being counted; with the trees, cases are
  read from the whole files, those gained or lost by tests the change does not touch included
  (`counts`);
- a test that keeps its name (or moves) but loses every assertion, both bodies in the change;
- an assertion commented out, or a Python `assert` reduced to its bare expression;
- skip, xfail, ignore and disabled markers added to tests that existed before, in their file
  or in the file (even a new one) they moved to, directly or on a suite around them (pytest,
  unittest, Jest/Mocha/Jasmine, Go, Rust, JUnit, RSpec/minitest), unless the skip cannot apply
  where the suite runs: only on platforms other than Linux (`skipif(sys.platform ==
  "win32")`, or a platform flag standing for it, `skipif(WIN)`: `conditions.flags`) or
  machines other than x86_64, only on a free-threaded build (`Py_GIL_DISABLED`), only on
  Pythons older than the oldest the project supports (`requires-python` at the base) or newer
  than the newest it declares (its classifiers at the base: `conditions.classifiers`), or only
  when a package the project installs for its tests is missing (`conditions.dependency_skips`,
  with the trees). A
  condition cut short by the diff is read whole from the file, when the trees are at hand;
- focused tests (`it.only`, `fit`), which skip every other test;
- a Python test hidden from pytest while its definition stays: `__test__ = False`, a later
  definition of the same name, the name rebound or deleted, the definition under `if False:`,
  nested in a function or moved into a class pytest does not collect
  (`runners.collection`);
- pytest configuration narrowing collection (`--deselect`, `--ignore`, `-k "not ..."`,
  `collect_ignore`). A conftest.py's `collect_ignore` is keyed by the paths it lists,
  resolved from its folder; ignoring a file the change adds, that no test moved into,
  narrows nothing. With the trees, a change to a root configuration (any line of it) is
  judged by the test files it leaves out, each side read as pytest reads it
  (`runners.pytest_config.reaches`); so is a test file moved where the head's
  configuration does not collect it. So are Jest, Vitest and Mocha settings and commands
  that leave tests out (`runners.runner_config`).

Which skip lines are new is read as any equally valid diff would show it (each run of added
lines slid as far as the lines around it repeat); a skip in a function that is not a test (a
fixture, a hook, a helper) is not in the test above it, and is reported where its file existed.

Not reported: brand-new tests, even skipped ones, in a new file or an existing one; a test
file only added to; a test renamed, moved to another collected test file, or folded into a
parametrized test (new or existing); a suite renamed, or dropped while its tests stay or move;
removing a test that was skipped anyway (unconditionally, or by a version condition true on
every Python the project supports: after the change, for a change that drops old Pythons,
`exemptions.dropped_pythons`); a skip reworded, or moved with its test to another file
(`exemptions.moved_skips`), or a case's skip mark moved into its test under an `if` on that
case (`exemptions.case_skips`); a narrowing restated (an `--ignore` or `-k "not ..."`
is keyed by what it narrows, not by the line around it); tests in `conftest.py` (pytest never
collects them). A test that "moves" into a file the runner does not collect (a fixture, a
helper) is removed.

With the base and head trees (`--repo`, the Action, the check run, an implementer's
worktree; never a bare `--diff`), removed tests are also set aside, as if they had not been
removed, when (see `exemptions.set_aside` for the exact conditions):
- their package went with them: a deleted test file whose directory, all of its source code
  deleted (not renamed, not added back elsewhere), no longer exists;
- their subject went with them: the test uses a distinctive name (not `get`, `run`, `main`,
  `__init__` or the like) whose definition the change deletes from source code, that no
  source file at the head still provides and that was not renamed or moved; and every other
  project definition the test (or a helper from its own file) exercises is gone too, is the
  class the gone name was defined on, or had a use of it cut out of its body;
- their file's source file went with it: a deleted test file paired by its stem with a
  source file the change deletes (`jwt_test.go` and `jwt.go`), named after a name it defined
  that is gone; its tests that use a gone name of that file, and none of it that lives on,
  go, whatever else they call;
- they are exact duplicates of a test that stays (same body, header but for the name,
  decorators and enclosing suite), or, for a Python test, of a twin of the same name and
  imports in another test file the change leaves alone (`exemptions.twins`);
- the change takes back an earlier commit's change to the code, whole, and they were written
  by that commit (a revert; `exemptions.reverts`). This one reads the history: a worktree
  judged against a tree gets none of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache, partial

from app.guards.changes import ChangeSet, FileChange, Line
from app.guards.paths import display
from app.guards.tamper.aliases import with_linux_aliases
from app.guards.tamper.assertions import dead_assertions, disabled_assertions
from app.guards.tamper.build_constraints import constraint_added, go_never_built
from app.guards.tamper.conditions.classifiers import newest_python
from app.guards.tamper.conditions.skip_conditions import (
    supported_python,
)
from app.guards.tamper.conditions.test_dependencies import installed_for_tests
from app.guards.tamper.counts import Counts
from app.guards.tamper.definitions import (
    Definition,
    defines_tests,
)
from app.guards.tamper.early_exits import early_exits
from app.guards.tamper.early_returns import early_returns
from app.guards.tamper.exemptions.dropped_pythons import removal_floor, skipped_at_base
from app.guards.tamper.exemptions.moved_skips import travelled_skips
from app.guards.tamper.exemptions.retyped import js_to_ts, suite_retyped
from app.guards.tamper.exemptions.set_aside import Exemptions
from app.guards.tamper.exemptions.vacuous import always_passing
from app.guards.tamper.finding import Tamper
from app.guards.tamper.hidden import hidden, moved_out_of_collection
from app.guards.tamper.lang import reader_for
from app.guards.tamper.markers import Sides, markers, skip_kind
from app.guards.tamper.narrowing import (
    PYTEST_CONFIG,
    config_narrowed,
    left_out,
    moved_out_of_reach,
    narrowed_lines,
    outcome_hooks,
    scripted_narrowing,
)
from app.guards.tamper.relocations import Relocations, SkippedAnyway, relocate
from app.guards.tamper.runners.runner_commands import runner_commands
from app.guards.tamper.runners.runner_config import runner_narrowing
from app.guards.tamper.test_files import (
    collects_tests,
    is_test_module,
    is_test_path,
    reads_tests,
)
from app.guards.tamper.unmade import unmade
from app.guards.trees import TreeView, trees_of

__all__ = ["Tamper", "find_tampering"]


# The `c`/`m` of `.cjs`, `.mjs`, `.cts`, `.mts`: CommonJS or ES module, the same language.
_MODULE_FORMAT = re.compile(r"^[cm](?=[jt]s$)")


def _either(*readers: SkippedAnyway) -> SkippedAnyway:
    """The removed tests any of `readers` shows ran nowhere, or could only pass."""
    return lambda path, defs: set().union(*(read(path, defs) for read in readers))


def find_tampering(changes: ChangeSet) -> list[Tamper]:
    # Read a test function under an alias that skips only off Linux as the function itself.
    files, trees = with_linux_aliases(changes.files, trees_of(changes))
    exemptions = Exemptions(files, trees)
    floor = supported_python(files, trees)
    # Where the suite runs, a skip on Pythons newer than any the base declares skips nothing.
    newest = newest_python(files, trees)
    installed = installed_for_tests(files, trees, floor)
    # Go test files built by no Go the module supports ran nowhere: their tests count as skipped.
    unbuilt = frozenset(i for i in range(len(files)) if go_never_built(files, trees, i))
    # A removed test skipped on every Python the head still supports ran only on those the
    # change drops; a skip the change adds is judged against the base's floor (`floor`).
    dropped = removal_floor(files, trees, floor)
    moves = relocate(
        files,
        exempt=exemptions.set_aside,
        floor=dropped,
        counts=Counts(files, trees),
        unbuilt=unbuilt,
        skipped=_either(skipped_at_base(trees, dropped), always_passing(trees)),
    )
    removed_anywhere = {d.name for defs in moves.removed.values() for d in defs}
    travelled = travelled_skips(
        files, moves.continuations, lambda text, path: bool(skip_kind(text, path))
    )
    fresh = _fresh_files(files, moves)
    retyped = suite_retyped(trees)
    held = partial(_held_tests, trees)
    # What the head's pytest configuration leaves out of the tests the base collected: read
    # once (a listing of the whole head tree), asked by each narrowing line and by the
    # configuration as a whole.
    leaves_out = cache(partial(left_out, trees, fresh)) if trees is not None else None
    found: list[Tamper] = []
    for index, change in enumerate(files):
        found.extend(_deleted_or_moved(index, change, moves, exemptions, retyped, held))
        if change.status == "deleted":
            continue
        found.extend(_removed_tests(change, moves.gone.get(index, [])))
        found.extend(hidden(change, trees, floor, newest))
        found.extend(unmade(change, trees))
        if is_test_path(change.path):
            found.extend(disabled_assertions(change))
            constrained = constraint_added(change, trees)
            if constrained is not None:
                message = "build constraint added to a test file (its tests may not be built)"
                found.append(Tamper(change.path, constrained, message))
        if reads_tests(change.path) or PYTEST_CONFIG.search(change.path):
            existed = removed_anywhere | {name for i, name in moves.carried if i == index}
            sides = Sides(change, trees, floor, newest, installed)
            if is_test_path(change.path):
                shown = _new_side(change, sides)
                found.extend(_returns(change, shown, sides, existed))
                found.extend(dead_assertions(change, shown))
                found.extend(Tamper(change.path, *exit) for exit in early_exits(change, shown))
            found.extend(markers(change, existed, sides, travelled.get(index)))
            found.extend(narrowed_lines(change, trees, fresh, files, leaves_out))
    found.extend(moved_out_of_collection(files, trees, floor, moves, newest))
    found.extend(tamper for change in files for tamper in outcome_hooks(change))
    found.extend(tamper for change in files for tamper in scripted_narrowing(change))
    found.extend(Tamper(*narrowed) for narrowed in runner_narrowing(files, trees))
    found.extend(Tamper(*command) for command in runner_commands(files, trees))
    narrowed = config_narrowed(files, trees, found, leaves_out)
    narrowed += moved_out_of_reach(files, trees, moves, found)
    return found + _lost_assertions(files, moves) + narrowed


def _fresh_files(files: Sequence[FileChange], moves: Relocations) -> frozenset[str]:
    """Files the change adds (not renamed or copied) that no test moved into: whatever they
    hold is new, so ignoring them at collection hides nothing that ran before. None when a
    removed test went on by neither name nor body (nor was set aside): new tests elsewhere
    may then stand in for it, and one standing in must not be hidden."""
    went_on = {(c.old_file, c.old.line.number) for c in moves.continuations}
    went_on |= {(i, d.line.number) for i, defs in moves.exempt.items() for d in defs}
    removed = {(i, d.line.number) for i, defs in moves.removed.items() for d in defs}
    if removed - went_on:
        return frozenset()
    carried = {index for index, _ in moves.carried}
    carried |= {continuation.new_file for continuation in moves.continuations}
    return frozenset(
        change.new_path
        for index, change in enumerate(files)
        if change.status == "added" and change.new_path is not None and index not in carried
    )


def _lost_assertions(files: Sequence[FileChange], moves: Relocations) -> list[Tamper]:
    """A test that kept its name (or moved) but no longer checks anything, when both of its
    bodies are wholly in the change."""
    found: list[Tamper] = []
    for carried in moves.continuations:
        old, new = carried.old, carried.new
        if old.body is None or new.body is None or old.assertions == 0 or new.assertions > 0:
            continue
        message = f"test {display(new.name, 80)!r} lost all of its assertions"
        found.append(Tamper(files[carried.new_file].path, new.line.number, message))
    return found


def _deleted_or_moved(
    index: int,
    change: FileChange,
    moves: Relocations,
    exemptions: Exemptions,
    retyped: Callable[[str], bool],
    held: Callable[[str], bool],
) -> list[Tamper]:
    old = change.old_path
    if old is None or not is_test_path(old):
        return []
    tests = moves.removed.get(index, [])
    holds_tests = is_test_module(old) or bool(tests)
    if change.status == "deleted" and holds_tests:
        # Not a move, split or merge unless its tests are somewhere else now, or went with
        # the code they tested; a test file whose tests we cannot recognise (or a
        # conftest.py) is simply deleted, unless its whole package went with it.
        gone = not tests or moves.gone.get(index)
        if gone and not exemptions.package_gone(index):
            return [Tamper(old, None, "test file deleted")]
        return []
    if (
        change.status == "renamed"
        and _leaves_discovery(old, change.path, retyped)
        and (holds_tests or (collects_tests(old) and not collects_tests(change.path) and held(old)))
    ):
        return [Tamper(change.path, None, "test file moved out of the test paths")]
    return []


def _held_tests(trees: TreeView | None, path: str) -> bool:
    """Whether the base's file at `path` defines a test: a file renamed unchanged shows none
    of its lines (`test/red.js` made `test/fixtures/red.js`, which no runner collects).
    Without the trees, whether a runner would collect it."""
    text = trees.text("base", path) if trees is not None else None
    return collects_tests(path) if text is None else defines_tests(text, reader_for(path))


def _leaves_discovery(old: str, new: str, retyped: Callable[[str], bool]) -> bool:
    """Whether a renamed test file stops looking like one to a test runner (`.py.bak`,
    `test_x.py` -> `x.py`, out of `tests/`, into `test/fixtures/`, `.js` -> `.ts` unless the
    whole suite moved to a runner that reads TypeScript: `exemptions.retyped`)."""
    if not is_test_path(new):
        return True
    if is_test_module(old) and not is_test_module(new):
        return True
    if collects_tests(old) and not collects_tests(new):
        return True  # into a fixtures or helpers folder (`test/fixtures/red.js`)
    if _language(old) == _language(new):
        return False
    return not (js_to_ts(old, new) and retyped(new))


def _language(path: str) -> str:
    """A file's suffix, with JavaScript's and TypeScript's module-format variants (`.cjs`,
    `.mjs`, `.cts`, `.mts`) read as the plain one: the same language, and every name that
    makes a `.js` file a test module (`x.test.js`, `test/x.js`) makes the `.cjs` or `.mjs`
    one a test module too (`is_test_module`, `collects_tests`)."""
    return _MODULE_FORMAT.sub("", path.rsplit(".", 1)[-1])


def _removed_tests(change: FileChange, gone: list[Definition]) -> list[Tamper]:
    return [
        Tamper(change.path, d.line.anchor, f"test {display(d.name, 80)!r} removed") for d in gone
    ]


def _new_side(change: FileChange, sides: Sides) -> list[Line]:
    """The new side of a changed file: whole where the repository is read, else the added and
    context lines the diff shows, in order."""
    whole = sides.whole("head") if sides.trees is not None else None
    if whole is not None:
        return whole
    return sorted((*change.added, *change.context), key=lambda line: line.number)


def _returns(
    change: FileChange, shown: Sequence[Line], sides: Sides, existed: set[str]
) -> list[Tamper]:
    """Returns added to a test that existed that end it early (`early_returns`):
    read on the whole new file, or on what the diff shows."""
    message = "early return added to a test (the rest of it never runs)"
    base = sides.whole("base") if sides.trees is not None else None
    numbers = early_returns(change, shown, existed, base)
    return [Tamper(change.path, n, message) for n in numbers]
