"""pytest told to collect less: configuration, scripts and hooks that leave tests out or
change what their outcome reports, judged by what they leave out where both trees can be
read (part of the `test-tamper` rule, `rule`)."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase

from app.guards.changes import FileChange, Line
from app.guards.paths import display
from app.guards.tamper.finding import Tamper
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.relocations import Relocations
from app.guards.tamper.runners.pytest_config import doctest_options, is_config, reaches, sections
from app.guards.tamper.test_files import is_conftest, is_test_module
from app.guards.trees import TreeView

# pytest's configuration files (`.pytest.ini` and `pytest.toml` are read first, when there)
# and the files that may change what it collects.
PYTEST_CONFIG = re.compile(
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


def outcome_hooks(change: FileChange) -> list[Tamper]:
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


def scripted_narrowing(change: FileChange) -> list[Tamper]:
    """A pytest command in a script that runs the suite (a Makefile, a noxfile, a justfile,
    a shell script) given an option that leaves tests out: `pytest --deselect ...`,
    `pytest -k "not ..."`. Only lines that run pytest: `flake8 --ignore=E501` narrows
    nothing."""
    path = change.new_path or ""
    name = posixpath.basename(path)
    if not (_TEST_SCRIPTS.search(name) and not PYTEST_CONFIG.search(path)):
        return []
    # A noxfile spells the command as arguments: `s.run("pytest", "-k", "not red")`.
    commands = ((line, re.sub(r"[\"',]", " ", line.text)) for line in change.added)
    return [
        Tamper(path, line.number, "test collection narrowed")
        for line, command in commands
        if _RUNS_PYTEST.search(command) and _NARROWING.search(command)
    ]


def moved_out_of_reach(
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


def config_narrowed(
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


def left_out(trees: TreeView, fresh: frozenset[str]) -> list[str]:
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


def narrowed_lines(
    change: FileChange,
    trees: TreeView | None,
    fresh: frozenset[str],
    files: Sequence[FileChange],
    left_out: Callable[[], list[str]] | None,
) -> list[Tamper]:
    """The lines a pytest configuration file gains that narrow collection, restated or
    harmless narrowings aside (a line that focuses tests is reported as that)."""
    found: list[Tamper] = []
    config = bool(PYTEST_CONFIG.search(change.path))
    # Restating a narrowing that was already there (a reformatted `addopts`, a conftest.py
    # moved with its `collect_ignore`) narrows nothing.
    old = change.old_path or ""
    before = Counter(item for line in change.removed for item in _narrowing_keys(line.text, old))
    before.update(_renamed_targets(before, files))
    # Ignoring a file the change adds, with nothing moved into it, hides no test that ran.
    before.update({f"collect_ignore {path}": 1 for path in fresh})
    for line in change.added:
        if reader_for(change.path).focuses(line.text):
            continue
        if (
            config
            and _NARROWING.search(line.text)
            and not _ini_comment(change.path, line.text)
            and _new_narrowing(line, change, before)
            and not _leaves_nothing_out(change, line, left_out)
            and not _deselects_only_new_markers(line.text, files, trees, fresh)
        ):
            found.append(Tamper(change.path, line.number, "test collection narrowed"))
    return found
