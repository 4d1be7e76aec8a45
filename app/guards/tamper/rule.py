"""The `test-tamper` rule: making a red suite green by removing or silencing tests while the
code those tests exercise stays.

Where removed tests went is worked out over the whole change by `app.guards.tamper.relocations`;
which removed tests went with the code they tested, by `app.guards.tamper.exemptions.set_aside`.

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
  (`app.guards.tamper.counts`);
- a test that keeps its name (or moves) but loses every assertion, both bodies in the change;
- an assertion commented out, or a Python `assert` reduced to its bare expression;
- skip, xfail, ignore and disabled markers added to tests that existed before, in their file
  or in the file (even a new one) they moved to, directly or on a suite around them (pytest,
  unittest, Jest/Mocha/Jasmine, Go, Rust, JUnit, RSpec/minitest), unless the skip cannot apply
  where the suite runs: only on platforms other than Linux (`skipif(sys.platform ==
  "win32")`, or a platform flag standing for it, `skipif(WIN)`: `app.guards.tamper.conditions.flags`) or
  machines other than x86_64, only on a free-threaded build (`Py_GIL_DISABLED`), only on
  Pythons older than the oldest the project supports (`requires-python` at the base) or newer
  than the newest it declares (its classifiers at the base: `app.guards.tamper.conditions.classifiers`), or only
  when a package the project installs for its tests is missing (`app.guards.tamper.conditions.dependency_skips`,
  with the trees). A
  condition cut short by the diff is read whole from the file, when the trees are at hand;
- focused tests (`it.only`, `fit`), which skip every other test;
- a Python test hidden from pytest while its definition stays: `__test__ = False`, a later
  definition of the same name, the name rebound or deleted, the definition under `if False:`,
  nested in a function or moved into a class pytest does not collect
  (`app.guards.tamper.runners.collection`);
- pytest configuration narrowing collection (`--deselect`, `--ignore`, `-k "not ..."`,
  `collect_ignore`). A conftest.py's `collect_ignore` is keyed by the paths it lists,
  resolved from its folder; ignoring a file the change adds, that no test moved into,
  narrows nothing. With the trees, a change to a root configuration (any line of it) is
  judged by the test files it leaves out, each side read as pytest reads it
  (`app.guards.tamper.runners.pytest_config.reaches`); so is a test file moved where the head's
  configuration does not collect it. So are Jest, Vitest and Mocha settings and commands
  that leave tests out (`app.guards.tamper.runners.runner_config`).

Which skip lines are new is read as any equally valid diff would show it (each run of added
lines slid as far as the lines around it repeat); a skip in a function that is not a test (a
fixture, a hook, a helper) is not in the test above it, and is reported where its file existed.

Not reported: brand-new tests, even skipped ones, in a new file or an existing one; a test
file only added to; a test renamed, moved to another collected test file, or folded into a
parametrized test (new or existing); a suite renamed, or dropped while its tests stay or move;
removing a test that was skipped anyway (unconditionally, or by a version condition true on
every Python the project supports: after the change, for a change that drops old Pythons,
`app.guards.tamper.exemptions.dropped_pythons`); a skip reworded, or moved with its test to another file
(`app.guards.tamper.exemptions.moved_skips`), or a case's skip mark moved into its test under an `if` on that
case (`app.guards.tamper.exemptions.case_skips`); a narrowing restated (an `--ignore` or `-k "not ..."`
is keyed by what it narrows, not by the line around it); tests in `conftest.py` (pytest never
collects them). A test that "moves" into a file the runner does not collect (a fixture, a
helper) is removed.

With the base and head trees (`--repo`, the Action, the check run, an implementer's
worktree; never a bare `--diff`), removed tests are also set aside, as if they had not been
removed, when (see `app.guards.tamper.exemptions.set_aside` for the exact conditions):
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
  imports in another test file the change leaves alone (`app.guards.tamper.exemptions.twins`);
- the change takes back an earlier commit's change to the code, whole, and they were written
  by that commit (a revert; `app.guards.tamper.exemptions.reverts`). This one reads the history: a worktree
  judged against a tree gets none of it.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache, partial

from app.guards.changes import ChangeSet, FileChange, Line, restated
from app.guards.paths import display
from app.guards.tamper.aliases import with_linux_aliases
from app.guards.tamper.build_constraints import constraint_added, go_never_built
from app.guards.tamper.code_names import python_module
from app.guards.tamper.conditions.classifiers import newest_python
from app.guards.tamper.conditions.dependency_skips import fires_only_when_missing
from app.guards.tamper.conditions.flags import Names, flags
from app.guards.tamper.conditions.skip_conditions import (
    Floor,
    body_skip_elsewhere_only,
    condition_false_on_linux,
    decorator_skips_elsewhere_only,
    supported_python,
    truth_on_linux,
)
from app.guards.tamper.conditions.test_dependencies import Installed, installed_for_tests
from app.guards.tamper.counts import Counts
from app.guards.tamper.dead_checks import always_holds, dead_blocks, swallowed_blocks
from app.guards.tamper.definitions import (
    Definition,
    containers,
    defines_tests,
    definition_name_at,
    definitions,
)
from app.guards.tamper.diffs import alignments
from app.guards.tamper.early_exits import early_exits
from app.guards.tamper.early_returns import early_returns, gated_returns, skip_gate
from app.guards.tamper.exemptions.case_skips import paid_skips
from app.guards.tamper.exemptions.dropped_pythons import removal_floor, skipped_at_base
from app.guards.tamper.exemptions.moved_skips import Travelled, travelled_skips
from app.guards.tamper.exemptions.retyped import js_to_ts, suite_retyped
from app.guards.tamper.exemptions.set_aside import Exemptions
from app.guards.tamper.exemptions.vacuous import always_passing
from app.guards.tamper.lang import Reader, javascript, plain_comment, reader_for
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.lang.reader import SkipKind
from app.guards.tamper.lang.text import indent
from app.guards.tamper.relocations import Relocations, SkippedAnyway, relocate
from app.guards.tamper.runners.collection import (
    Truth,
    hidden_by_lines,
    hidden_tests,
    levels,
    lowered_flags,
    subclasses_left_off,
)
from app.guards.tamper.runners.pytest_config import doctest_options, is_config, reaches, sections
from app.guards.tamper.runners.runner_commands import runner_commands
from app.guards.tamper.runners.runner_config import runner_narrowing
from app.guards.tamper.test_files import collects_tests, is_conftest, is_test_module, is_test_path
from app.guards.trees import Side, TreeView, trees_of

__all__ = ["Tamper", "find_tampering"]

# pytest's configuration files (`.pytest.ini` and `pytest.toml` are read first, when there)
# and the files that may change what it collects.
_PYTEST_CONFIG = re.compile(
    r"(^|/)(\.?pytest\.ini|\.?pytest\.toml|tox\.ini|setup\.cfg|pyproject\.toml|conftest\.py)$"
)
_NARROWING = re.compile(
    r"--deselect\b|--ignore(-glob)?\b|\bcollect_ignore(_glob)?\b|\bnorecursedirs\b"
    r"|(^|\s)-[km]\s+['\"]?not\b"
    # Turning off the plugins that collect Python tests, unittest cases or doctests.
    r"|(^|[\s'\"])-p\s*['\"]?no:(?:python|unittest|doctest)\b"
    # Which files, classes and functions are collected, and hooks that drop collected items.
    r"|\b(?:python_files|python_classes|python_functions)\b"
    r"|\bpytest_(?:collection_modifyitems|ignore_collect|collect_file|pycollect_makeitem)\b"
    # Collecting, or setting up, without running a test: the run passes whatever they say.
    r"|(?<![\w-])--(?:co|collect-only|setup-only|setup-plan)\b"
    # A conftest.py setting its names indirectly (`globals()["collect_" "ignore"] = ...`).
    r"|\bglobals\s*\(\s*\)\s*\[|(?<![\w.])exec\s*\("
)
# pytest hooks that can skip, deselect or pass tests whatever the code does.
_OUTCOME_HOOK = re.compile(
    r"\bdef\s+pytest_(?:collection_modifyitems|ignore_collect|collect_file|pycollect_makeitem"
    r"|itemcollected|deselected|runtest_\w+|pyfunc_call|report_teststatus|sessionfinish"
    r"|make_collect_report|collectreport|collection_finish)\b"
)
# Files that run the suite with a command line of their own.
_TEST_SCRIPTS = re.compile(
    r"^(?:Makefile|GNUmakefile|makefile|justfile|Justfile|noxfile\.py)$|\.(?:mk|sh|bash)$"
)
_RUNS_PYTEST = re.compile(r"\b(?:py\.test|pytest)\b")
# A narrowing option with what it narrows: `--ignore=src/vendor`, `--deselect "t.py::x"`.
_NARROWING_OPTION = re.compile(
    r"(?P<option>--deselect|--ignore-glob|--ignore)\b(?:\s*=\s*|\s+)?['\"]?(?P<target>[^\s'\",\]]*)"
)
# A keyword deselection with its expression: `-k "not slow"`, `-k 'not a and not b'`, `-k not_x`.
_KEYWORD_OPTION = re.compile(
    r"(?:^|(?<=\s))-k(?:\s*=\s*|\s+)(?:(?P<quote>['\"])(?P<quoted>not\b.*?)(?P=quote)"
    r"|(?P<bare>not\b[^\s'\",\]]*))"
)
# A conftest.py line listing paths to ignore: `collect_ignore = ["a.py"]`,
# `collect_ignore.extend(["a.py"])`, `collect_ignore.append("a.py")`, `collect_ignore += [...]`.
_COLLECT_IGNORE = re.compile(
    r"^\s*(?P<kind>collect_ignore(?:_glob)?)\s*(?:\+?=|\.(?:extend|append)\s*\()(?P<rest>.*)$"
)
_STRINGS = re.compile(r"(?P<q>['\"])([^'\"\\]*)(?P=q)")
# A marker deselection with its expression: `-m "not leaks"`, `-m 'not a and not b'`.
_MARK_DESELECTION = re.compile(
    r"(?:^|(?<=\s))-m(?:\s*=\s*|\s+)(?P<q>\\?['\"])(?P<expr>not\b[^'\"\\]*)(?P=q)"
)
# Lines that reach tests beyond a module's own: a hook, a plugin loaded, a marker added.
_LOADS_PLUGINS = re.compile(r"\bpytest_plugins\b|\bdef\s+pytest_|\badd_marker\b")
# ... or that mark tests at all.
_MAY_MARK = re.compile(_LOADS_PLUGINS.pattern + r"|\bmark\b|\bpytestmark\b")
# A configuration loading a plugin: `-p myplugin` (`-p no:x` turns one off).
_PLUGIN_OPTION = re.compile(r"(?:^|[\s'\"])-p(?:\s*=\s*|\s+)(?!no:)|\bpytest_plugins\b")
# `not a`, `not a and not b`, `(not a) or (not b)`: negated marker names only.
_NEGATED_NAMES = re.compile(r"\(*\s*not\s+\w+\s*\)*(?:\s+(?:and|or)\s+\(*\s*not\s+\w+\s*\)*)*")
# The one narrowing `_leaves_nothing_out` judges by what it leaves out.
_NORECURSE = re.compile(r"\bnorecursedirs\b")
_DEFINES_TESTS = re.compile(r"^\s*(?:async\s+)?def\s+test|^\s*class\s+Test", re.MULTILINE)
# A function that may enclose a skip: Python's `def`, Go's `func`.
_FUNCTION = re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\(|^func\b")
_LINE_COMMENT = re.compile(r"^(#|//)\s*")
# The `c`/`m` of `.cjs`, `.mjs`, `.cts`, `.mts`: CommonJS or ES module, the same language.
_MODULE_FORMAT = re.compile(r"^[cm](?=[jt]s$)")


@dataclass(frozen=True)
class Tamper:
    path: str
    line: int | None
    message: str


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
        files, moves.continuations, lambda text, path: bool(_skip_kind(text, path))
    )
    fresh = _fresh_files(files, moves)
    retyped = suite_retyped(trees)
    held = partial(_held_tests, trees)
    # What the head's pytest configuration leaves out of the tests the base collected: read
    # once (a listing of the whole head tree), asked by each narrowing line and by the
    # configuration as a whole.
    left_out = cache(partial(_left_out, trees, fresh)) if trees is not None else None
    found: list[Tamper] = []
    for index, change in enumerate(files):
        found.extend(_deleted_or_moved(index, change, moves, exemptions, retyped, held))
        if change.status == "deleted":
            continue
        found.extend(_removed_tests(change, moves.gone.get(index, [])))
        found.extend(_hidden(change, trees, floor, newest))
        if is_test_path(change.path):
            found.extend(_disabled_assertions(change))
            constrained = constraint_added(change, trees)
            if constrained is not None:
                message = "build constraint added to a test file (its tests may not be built)"
                found.append(Tamper(change.path, constrained, message))
        if is_test_path(change.path) or _PYTEST_CONFIG.search(change.path):
            existed = removed_anywhere | {name for i, name in moves.carried if i == index}
            sides = _Sides(change, trees, floor, newest, installed)
            if is_test_path(change.path):
                shown = _new_side(change, sides)
                found.extend(_returns(change, shown, sides, existed))
                found.extend(_dead_assertions(change, shown))
                found.extend(Tamper(change.path, *exit) for exit in early_exits(change, shown))
            found.extend(
                _markers(change, existed, sides, travelled.get(index), fresh, files, left_out)
            )
    found.extend(_moved_out_of_collection(files, trees, floor, moves, newest))
    found.extend(tamper for change in files for tamper in _outcome_hooks(change))
    found.extend(tamper for change in files for tamper in _scripted_narrowing(change))
    found.extend(Tamper(*narrowed) for narrowed in runner_narrowing(files, trees))
    found.extend(Tamper(*command) for command in runner_commands(files, trees))
    narrowed = _config_narrowed(files, trees, found, left_out)
    narrowed += _moved_out_of_reach(files, trees, moves, found)
    return found + _lost_assertions(files, moves) + narrowed


def _hidden(
    change: FileChange, trees: TreeView | None, floor: Floor, newest: Floor | None = None
) -> list[Tamper]:
    """Tests a Python module still defines but pytest no longer collects
    (`app.guards.tamper.runners.collection`): in a test module, read whole on both sides with the trees,
    else from the changed lines; in any Python file, a class that held tests made
    `__test__ = False` while a class in another file inherits it. A new file hid nothing
    that ran."""
    old, new = change.old_path, change.new_path
    if change.status in ("added", "copied") or old is None or new is None:
        return []
    if not is_module(new):
        return []
    tests = _python_tests(new)
    flagged = any("__test__" in line.text for line in change.added)
    if not tests and not flagged:
        return []
    texts = (trees.text("base", old), trees.text("head", new)) if trees else (None, None)
    base, head = python_module(texts[0]), python_module(texts[1])
    if trees is None or base is None or head is None:
        lines = texts[1].split("\n") if texts[1] is not None else None
        findings = hidden_by_lines(change.added, change.removed, lines) if tests else []
        return [Tamper(change.path, line, message) for line, message in findings]
    names = flags(trees, "base", old, texts[0]), flags(trees, "head", new, texts[1])
    truths: tuple[Truth, Truth] = (
        lambda test: truth_on_linux(test, floor, names[0], newest),
        lambda test: truth_on_linux(test, floor, names[1], newest),
    )
    findings = hidden_tests(base, head, truths) if tests else []
    if flagged:
        # A base suite's tests run in the classes that inherit it, wherever they are.
        for line, message, name in lowered_flags(base, head, truths):
            if subclasses_left_off(trees, new, name):
                findings.append((line, message))
    unique = dict.fromkeys(findings)
    return [Tamper(change.path, line, message) for line, message in unique]


def _moved_out_of_collection(
    files: Sequence[FileChange],
    trees: TreeView | None,
    floor: Floor,
    moves: Relocations,
    newest: Floor | None = None,
) -> list[Tamper]:
    """A Python test moved to another test module, where pytest collects it less surely than
    it did where it was: into a class pytest does not collect (not `Test*`, given `__init__`
    or `__test__ = False`), under `if False:`, nested in a function. Read with the trees:
    each file's tests, whole, on its side (`app.guards.tamper.runners.collection.levels`)."""
    if trees is None:
        return []
    read: dict[tuple[Side, int], dict[int, int] | None] = {}

    def level(side: Side, index: int, line: int) -> int | None:
        if (side, index) not in read:
            change = files[index]
            path = change.old_path if side == "base" else change.new_path
            module = python_module(trees.text(side, path)) if path else None
            truth: Truth = partial(truth_on_linux, floor=floor, newest=newest)
            known = levels(module, truth, skips=side == "base") if module else None
            read[side, index] = known
        known = read[side, index]
        return None if known is None else known.get(line, 0)

    found: list[Tamper] = []
    for moved in moves.continuations:
        old, new = files[moved.old_file], files[moved.new_file]
        if moved.old_file == moved.new_file or not all(_python_tests(c.path) for c in (old, new)):
            continue
        before = level("base", moved.old_file, moved.old.line.number)
        after = level("head", moved.new_file, moved.new.line.number)
        if before is not None and after is not None and after < before:
            message = f"test {display(moved.new.name, 80)!r} moved where pytest does not collect it"
            found.append(Tamper(new.path, moved.new.line.number, message))
    return found


def _python_tests(path: str) -> bool:
    return is_module(path) and is_test_path(path) and not is_conftest(path)


def _outcome_hooks(change: FileChange) -> list[Tamper]:
    """A pytest hook that can skip or deselect tests, or change what their outcome reports
    (`pytest_runtest_makereport` turning a failure into a pass, `pytest_sessionfinish`
    setting the exit status), defined in any Python file the change adds lines to: a
    conftest.py, or a plugin loaded by `-p`, `pytest_plugins` or an entry point, which may
    sit anywhere. (A conftest's collection hooks are reported as narrowing.) A hook's `def`
    line rewritten in place (pytest-xdist typing its `pytest_runtest_logreport(self, report)`)
    adds no hook: it pays off a removed `def` of the same hook at the same indentation, in the
    same file. Its body could always change without a finding."""
    path = change.new_path or ""
    if not is_module(path):
        return []
    before = Counter(_hook_key(line.text) for line in change.removed if change.old_path == path)
    found: list[Tamper] = []
    for line in change.added:
        key = _hook_key(line.text)
        if key is None or (is_conftest(path) and _NARROWING.search(line.text)):
            continue
        if before[key] > 0:
            before[key] -= 1
            continue
        message = "pytest hook added that can skip tests or change results"
        found.append(Tamper(path, line.number, message))
    return found


def _hook_key(text: str) -> tuple[str, str] | None:
    """The outcome hook a line defines, with the indentation it is defined at."""
    match = _OUTCOME_HOOK.search(text)
    if match is None:
        return None
    return match.group(0).split()[-1], text[: len(text) - len(text.lstrip())]


def _scripted_narrowing(change: FileChange) -> list[Tamper]:
    """A pytest command in a script that runs the suite (a Makefile, a noxfile, a justfile,
    a shell script) given an option that leaves tests out: `pytest --deselect ...`,
    `pytest -k "not ..."`. Only lines that run pytest: `flake8 --ignore=E501` narrows
    nothing."""
    path = change.new_path or ""
    name = posixpath.basename(path)
    if not (_TEST_SCRIPTS.search(name) and not _PYTEST_CONFIG.search(path)):
        return []
    # A noxfile spells the command as arguments: `s.run("pytest", "-k", "not red")`.
    commands = ((line, re.sub(r"[\"',]", " ", line.text)) for line in change.added)
    return [
        Tamper(path, line.number, "test collection narrowed")
        for line, command in commands
        if _RUNS_PYTEST.search(command) and _NARROWING.search(command)
    ]


def _moved_out_of_reach(
    files: Sequence[FileChange], trees: TreeView | None, moves: Relocations, found: list[Tamper]
) -> list[Tamper]:
    """Python tests moved (a test file renamed, or a test carried to another file) from where
    the base's pytest configuration may have collected them to where the head's surely does
    not: a folder its `norecursedirs` skips, one outside its `testpaths`. With both trees, and
    a head configuration that can be read."""
    renamed = any(c.status == "renamed" for c in files)
    across = any(c.old_file != c.new_file for c in moves.continuations)
    if trees is None or not (renamed or across):
        return []  # nothing moved: the configurations need not be read
    base, head = sections(trees, "base"), sections(trees, "head")
    if head is None:
        return []

    def hidden(old: str | None, new: str | None) -> bool:
        return (
            old is not None
            and new is not None
            and is_module(old)
            and is_module(new)
            and reaches(base, old, every=False)
            and not reaches(head, new, every=True)
        )

    reported = {t.path for t in found if t.message == "test file moved out of the test paths"}
    moved = [
        Tamper(c.path, None, "test file moved out of the test paths")
        for i, c in enumerate(files)
        if c.status == "renamed"
        and c.path not in reported
        and hidden(c.old_path, c.new_path)
        and (moves.removed.get(i) or _holds_tests(trees, c.old_path or ""))
    ]
    reported |= {t.path for t in moved}
    for carried in moves.continuations:
        old, new = files[carried.old_file], files[carried.new_file]
        if carried.old_file == carried.new_file or new.path in reported:
            continue  # kept in its file: a configuration that leaves it out is judged above
        if hidden(old.old_path, new.new_path):
            name = display(carried.new.name, 80)
            message = f"test {name!r} moved out of the test paths"
            moved.append(Tamper(new.path, carried.new.line.anchor, message))
    return moved


def _holds_tests(trees: TreeView, path: str) -> bool:
    return _DEFINES_TESTS.search(trees.text("base", path) or "") is not None


def _config_narrowed(
    files: Sequence[FileChange],
    trees: TreeView | None,
    found: Sequence[Tamper],
    left_out: Callable[[], list[str]] | None,
) -> list[Tamper]:
    """A root pytest configuration the change writes, by any line (`testpaths =
    tests/unit`, a folder on a continuation line of `norecursedirs`, an item of a TOML list,
    the file deleted), so that test files pytest collected at the base are no longer
    collected (`tests/integration` left out). Setting `testpaths` to folders that hold every
    test narrows nothing. Read with both trees only: from a diff alone, what was left out
    cannot be told. When neither side's configuration can be read, only a `testpaths` line
    the change adds is judged (what either side collects cannot be shown)."""
    if trees is None or left_out is None:
        return []
    reported = {t.path for t in found if t.message == "test collection narrowed"}
    configs = [
        (c, c.new_path or c.old_path or "")
        for c in files
        if (c.new_path or c.old_path or "") not in reported
        and "/" not in (c.new_path or c.old_path or "")
        and is_config(c.new_path or c.old_path or "")
        and not is_conftest(c.new_path or c.old_path or "")
    ]
    testpaths = any("testpaths" in line.text for c, _ in configs for line in c.added)
    if not configs or not (
        testpaths or sections(trees, "base") is not None or sections(trees, "head") is not None
    ):
        return []
    paths = left_out()
    if not paths:
        return []
    shown = ", ".join(display(path, 80) for path in paths[:3])
    more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
    setting = "testpaths" if testpaths else "the configuration"
    message = f"test collection narrowed: {setting} leaves out {shown}{more}"
    return [Tamper(path, None, message) for _, path in configs]


def _ini_comment(path: str, text: str) -> bool:
    """A whole-line comment of an ini file (pytest.ini, tox.ini, setup.cfg), which both pytest's
    and tox's readers drop, inside a multi-line value too: httpie's `# pytest -m 'not
    requires_installation'` advice configures nothing. Not TOML, where such a line may sit
    inside a multi-line string, nor a conftest.py."""
    return path.endswith((".ini", ".cfg")) and text.lstrip()[:1] in ("#", ";")


def _leaves_nothing_out(
    change: FileChange, line: Line, left_out: Callable[[], list[str]] | None
) -> bool:
    """A root pytest configuration's `norecursedirs` line that, read with both trees, leaves
    out no test module pytest collected at the base: a folder the change adds with no test
    moved into it (marshmallow's `tests/mypy_test_cases`), or the same setting moved from
    setup.cfg to pyproject.toml. Any other narrowing on the line, a configuration below the
    root, or one that cannot be read, is judged as before."""
    path = change.new_path or ""
    if left_out is None or "/" in path or path == "conftest.py" or not is_config(path):
        return False
    if not _NORECURSE.search(line.text) or _NARROWING.search(_NORECURSE.sub("", line.text)):
        return False
    return not left_out()


def _deselects_only_new_markers(
    text: str, files: Sequence[FileChange], trees: TreeView | None, fresh: frozenset[str]
) -> bool:
    """A line whose only narrowing is `-m "not leaks"` (markers joined by `and`/`or`, each
    negated) over markers the change declares (a line it adds to a configuration's `markers`)
    and no test that ran before can carry: every line of the head tree that names one is in a
    file the change adds with no test moved into it, or is a line the change adds to a pytest
    configuration file (the declaration, the deselection); and nothing the change adds could
    mark an old test under a computed name (`_may_mark_old_tests`). multidict's new `leaks`
    tests, deselected in its wheel builds, pass. A marker named anywhere else (an old test
    given it, a conftest adding it, a plugin that adds it, named where the project installs
    it) may deselect a test that ran."""
    markers = _deselected_markers(text)
    if trees is None or not markers:
        return False
    settings = [
        change
        for change in files
        if change.new_path is not None
        and is_config(change.new_path)
        and not is_conftest(change.new_path)
    ]
    added = {(change.new_path, line.number) for change in settings for line in change.added}
    declared = {
        name
        for change in settings
        for line in change.added
        for name in markers
        if re.match(rf"""^\s*["']?{re.escape(name)}\s*(?::|["',]|$)""", line.text)
    }
    hits = trees.search("head", markers) + trees.mentions("head", markers)
    return (
        declared == markers
        and all((hit.path, hit.number) in added or hit.path in fresh for hit in hits)
        and not any(_may_mark_old_tests(change, fresh) for change in files)
    )


def _may_mark_old_tests(change: FileChange, fresh: frozenset[str]) -> bool:
    """Whether a file's added lines could give a marker to a test that ran before, under any
    name, spelled out or computed (`getattr(pytest.mark, "lea" + "ks")`): a Python file's
    marker line, unless it decorates a test of a test module the change adds; a hook, a
    `pytest_plugins` or an `add_marker` anywhere; a plugin loaded by a configuration (`-p`)."""
    path = change.new_path or ""
    if is_module(path):
        own = path in fresh and is_test_module(path) and not is_conftest(path)
        pattern = _LOADS_PLUGINS if own else _MAY_MARK
        return any(pattern.search(line.text) for line in change.added)
    return is_config(path) and any(_PLUGIN_OPTION.search(line.text) for line in change.added)


def _deselected_markers(text: str) -> set[str]:
    """The markers a line deselects when `-m "not ..."` is its only narrowing; empty when it
    narrows by anything else, or by an expression other than negated names."""
    expressions = [m["expr"] for m in _MARK_DESELECTION.finditer(text)]
    if not expressions or _NARROWING.search(_MARK_DESELECTION.sub(" ", text)):
        return set()
    markers: set[str] = set()
    for expression in expressions:
        if _NEGATED_NAMES.fullmatch(expression.strip()) is None:
            return set()
        markers.update(re.findall(r"(?<=not)\s+\(*\s*(\w+)", expression))
    return markers


def _left_out(trees: TreeView, fresh: frozenset[str]) -> list[str]:
    """Files holding tests that pytest may have collected at the base (by any of its
    sections; any file, when the base's configuration cannot be read: what it left out cannot
    be shown) and does not surely collect at the head (by every section), but for files the
    change adds with no test moved into them. Read from the files, not their names: a
    project's own `python_files` may collect `check_*.py`; and doctests are tests, a module's
    under the base's `--doctest-modules`, a text file's that its `--doctest-glob` names."""
    base, head = sections(trees, "base"), sections(trees, "head")
    modules, globs = doctest_options(base)
    left: list[str] = []
    for path in trees.listing("head", "."):
        if is_conftest(path) or path in fresh or not reaches(base, path, every=False, python=False):
            continue
        kinds = _test_kinds(trees, path, modules, globs)
        if any(
            reaches(base, path, every=False, python=python)
            and not reaches(head, path, every=True, python=python)
            for python in kinds
        ):
            left.append(path)
    return left


def _test_kinds(trees: TreeView, path: str, modules: bool, globs: Sequence[str]) -> set[bool]:
    """How a file holds tests: a Python module's test functions or classes (True, collected
    by `python_files`), doctests (False: a module's, with `--doctest-modules`, or a text
    file's named by a doctest glob)."""
    python = is_module(path)
    name = posixpath.basename(path)
    if not python and not any(fnmatchcase(name, glob) for glob in globs):
        return set()
    text = trees.text("base", path) or trees.text("head", path) or ""
    kinds: set[bool] = set()
    if python and (is_test_module(path) or _DEFINES_TESTS.search(text)):
        kinds.add(True)
    if (modules or not python) and ">>>" in text:
        kinds.add(False)
    return kinds


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
    whole suite moved to a runner that reads TypeScript: `app.guards.tamper.exemptions.retyped`)."""
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


# -- assertions switched off -------------------------------------------------------------------


def _disabled_assertions(change: FileChange) -> list[Tamper]:
    """An assertion line replaced by itself commented out, or a Python `assert x` by `x`; where
    the change takes an assertion out, an assertion added that always holds (`assert True or
    x`, `expect(true).toBe(true)`: `app.guards.tamper.dead_checks`)."""
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


def _dead_assertions(change: FileChange, shown: Sequence[Line]) -> list[Tamper]:
    """An added `if False:` (`if (false) {`, ...), or a `try` whose handler swallows failures,
    over assertions that were in the file before: unchanged lines, or lines taken out and put
    back (`app.guards.tamper.dead_checks`)."""
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


def _new_side(change: FileChange, sides: _Sides) -> list[Line]:
    """The new side of a changed file: whole where the repository is read, else the added and
    context lines the diff shows, in order."""
    whole = sides.whole("head") if sides.trees is not None else None
    if whole is not None:
        return whole
    return sorted((*change.added, *change.context), key=lambda line: line.number)


def _returns(
    change: FileChange, shown: Sequence[Line], sides: _Sides, existed: set[str]
) -> list[Tamper]:
    """Returns added to a test that existed that end it early (`app.guards.tamper.early_returns`):
    read on the whole new file, or on what the diff shows."""
    message = "early return added to a test (the rest of it never runs)"
    base = sides.whole("base") if sides.trees is not None else None
    numbers = early_returns(change, shown, existed, base)
    return [Tamper(change.path, n, message) for n in numbers]


def _continues(lines: Sequence[Line], index: int) -> bool:
    """Whether `lines[index]` continues the statement of the line before it (`assert (`)."""
    if index == 0 or lines[index - 1].number != lines[index].number - 1:
        return False
    return lines[index - 1].text.rstrip().endswith(("(", "[", "{", ",", "\\"))


# -- markers -----------------------------------------------------------------------------------


class _Sides:
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
        """What the platform flags of the file's side stand for (`WIN`, `app.guards.tamper.conditions.flags`)."""
        if side not in self._names:
            path = self._path(side) or ""
            self._names[side] = flags(self.trees, side, path, self._text(side))
        return self._names[side]

    def needs_missing(self, side: Side, number: int) -> bool:
        """Whether the skip on line `number` of the file's side fires only when a package the
        project installs for its tests is missing (`app.guards.tamper.conditions.dependency_skips`)."""
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


def _markers(
    change: FileChange,
    existed: set[str],
    sides: _Sides,
    travelled: Travelled | None,
    fresh: frozenset[str] = frozenset(),
    files: Sequence[FileChange] = (),
    left_out: Callable[[], list[str]] | None = None,
) -> list[Tamper]:
    found: list[Tamper] = []
    config = bool(_PYTEST_CONFIG.search(change.path))
    # Restating a narrowing that was already there (a reformatted `addopts`, a conftest.py
    # moved with its `collect_ignore`) narrows nothing.
    old = change.old_path or ""
    before = Counter(item for line in change.removed for item in _narrowing_keys(line.text, old))
    before.update(_renamed_targets(before, files))
    # Ignoring a file the change adds, with nothing moved into it, hides no test that ran.
    before.update({f"collect_ignore {path}": 1 for path in fresh})
    for line in change.added:
        if reader_for(change.path).focuses(line.text):
            found.append(Tamper(change.path, line.number, "focused test added (skips others)"))
        elif (
            config
            and _NARROWING.search(line.text)
            and not _ini_comment(change.path, line.text)
            and _new_narrowing(line, change, before)
            and not _leaves_nothing_out(change, line, left_out)
            and not _deselects_only_new_markers(line.text, files, sides.trees, fresh)
        ):
            found.append(Tamper(change.path, line.number, "test collection narrowed"))
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


def _case_marks_moved(skips: list[Tamper], sides: _Sides) -> list[Tamper]:
    """The new skips left once skip marks the change takes off parametrized cases pay for the
    skips moved into their test's body under those cases (`app.guards.tamper.exemptions.case_skips`). Python
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


def _gates_restated(skips: list[Tamper], change: FileChange, sides: _Sides) -> list[Tamper]:
    """Skips under an `if` whose condition the change takes off a `return` in the same file:
    express `61421a8` made `if (method === 'query' && shouldSkipQuery(...)) return`, which
    left the test undefined there, an `if (...) { this.skip() }` in the test. The same
    condition kept the test from running before; only where it is checked moved."""
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


def _net_of(skips: list[Tamper], gone: list[tuple[Line, str]], sides: _Sides) -> list[Tamper]:
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


def _narrowings(text: str, path: str) -> list[str]:
    """What a line narrows collection by: each `--ignore`/`--deselect` option with its target,
    each `-k "not ..."` with its expression, each path a conftest.py's `collect_ignore` line
    lists (resolved from the conftest's folder, as pytest does); for the other forms
    (`norecursedirs`, a `collect_ignore` line without a path, a `-k` we cannot read) the line."""
    if not _NARROWING.search(text):
        return []
    ignored = _ignored_paths(text, path)
    if ignored:
        return ignored
    options = [f"{m['option']} {m['target']}" for m in _NARROWING_OPTION.finditer(text)]
    rest = _NARROWING_OPTION.sub("", text)
    # A `-k` expression is what narrows, not the line around it: appending `-n auto` to a
    # command that already deselects `-k "not slow"` narrows nothing new.
    for match in _KEYWORD_OPTION.finditer(rest):
        options.append("-k " + " ".join((match["quoted"] or match["bare"] or "").split()))
    rest = _KEYWORD_OPTION.sub("", rest)
    if _NARROWING.search(rest):
        options.append(" ".join(rest.replace('"', "").replace("'", "").split()))
    return options


def _ignored_paths(text: str, path: str) -> list[str]:
    """`collect_ignore.extend(["test_a.py"])` in `tests/conftest.py`: the paths it ignores,
    relative to the repository (`collect_ignore tests/test_a.py`); empty for any other line,
    or one whose ignore list we cannot read in full (no string, or anything else in it)."""
    match = _COLLECT_IGNORE.search(text)
    if match is None or not is_conftest(path):
        return []
    listed = _STRINGS.findall(match["rest"])
    # Strings side by side are one string to Python (`"test_" "red.py"` is `test_red.py`):
    # only a list of single literals, comma-separated, is read as paths.
    shape = _STRINGS.sub("S", match["rest"]).strip(" \t[]()")
    if not listed or not re.fullmatch(r"S(?:\s*,\s*S)*\s*,?", shape):
        return []
    folder = posixpath.dirname(path)
    kind = match["kind"]
    return [f"{kind} {posixpath.normpath(posixpath.join(folder, p))}" for _, p in listed]


def _narrowing_keys(text: str, path: str) -> list[str]:
    """`_narrowings`, a whole-line comment's kept apart: it restates only a comment, so a
    narrowing uncommented (`# --deselect x` made `--deselect x`) is new."""
    found = _narrowings(text, path)
    stripped = text.lstrip()
    if stripped.startswith("#") or _ini_comment(path, text):
        return [f"# {item}" for item in found]
    return found


def _renamed_targets(before: Counter[str], files: Sequence[FileChange]) -> Counter[str]:
    """The removed narrowings again, each path the change renames given its new name: tenacity's
    `--ignore='tenacity/tests/test_async.py'` made `test_asyncio.py` with the file it names
    leaves out the same file. Only that file's new path pays: another file given the old name
    is judged as new."""
    renames = {
        posixpath.normpath(c.old_path): c.new_path
        for c in files
        if c.status == "renamed" and c.old_path and c.new_path
    }
    moved: Counter[str] = Counter()
    for key, count in before.items():
        option, _, target = key.partition(" ")
        path, colons, rest = target.partition("::")
        if option not in ("--ignore", "--deselect") or not path:
            continue
        new = renames.get(posixpath.normpath(path))
        if new is not None:
            moved[f"{option} {new}{colons}{rest}"] += count
    return moved


def _new_narrowing(line: Line, change: FileChange, before: Counter[str]) -> bool:
    new = False
    for item in _narrowing_keys(line.text, change.new_path or change.path):
        if before[item] > 0:
            before[item] -= 1
        else:
            new = True
    return new


def _skip_kind(text: str, path: str) -> SkipKind | None:
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


def _skip_kinds(lines: Sequence[Line], sides: _Sides, side: Side) -> Iterable[str | None]:
    """Each line's skip kind; None for no skip, or for one that applies only off Linux (or
    only on Pythons older than the project supports, or only when a package the project
    installs for its tests is missing)."""
    for index, line in enumerate(lines):
        kind = _skip_kind(line.text, sides.change.path)
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
    kind: str, lines: Sequence[Line], index: int, sides: _Sides, names: Names | None = None
) -> bool:
    """Whether a skip of this kind at `lines[index]` cannot apply where the suite runs: on
    Linux, on a Python the project declares (`sides.floor` to `sides.newest`)."""
    floor, newest = sides.floor, sides.newest
    if kind in ("module", "decorator"):
        return decorator_skips_elsewhere_only(lines, index, floor, names, newest=newest)
    if kind == "conditional":
        return _conditional_elsewhere_only(lines[index].text)
    return kind == "body" and body_skip_elsewhere_only(
        lines, index, names, floor=floor, newest=newest
    )


def _conditional_elsewhere_only(text: str) -> bool:
    """Whether a conditional skip (`it.skipIf(cond)(...)`, `it.runIf(cond)(...)`) skips only
    off Linux: its condition, read as in `app.guards.tamper.conditions.skip_conditions`, is false on Linux for
    `skipIf`, true for `runIf`."""
    match = javascript.CONDITIONAL_SKIP.search(text)
    if match is None:
        return False
    condition = match["cond"] if match["how"] == "skipIf" else f"!({match['cond']})"
    return condition_false_on_linux(condition)


def _added_alignments(change: FileChange, sides: _Sides) -> list[list[Line]]:
    """The added lines as the diff shows them and, read from the whole new file, as equally
    valid diffs would show them: each run slid down or up as far as the lines around it
    repeat (`app.guards.tamper.diffs.alignments`). A new test inserted above an old one, both
    under the same `@pytest.mark.skipif(`, may be shown as the old test's decorator added
    and the new test's kept; the new file is the same either way, and which of its skip
    lines is new is the alignment's choice, not the change's."""
    shown = list(change.added)
    if not any(_skip_kind(line.text, change.path) for line in shown):
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
    sides: _Sides,
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
        if (header is None and not new_file) or existed & names:
            where = "to a test" if kind != "body" else "inside a test"
            if kind == "body" and header is None and helper:
                where = "inside a fixture or helper"
            found.append(Tamper(change.path, line.number, f"skip marker added {where}"))
    return found


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
