"""The packages a project installs for its tests, as its own files declare them.

A skip that fires only when such a package is missing (`pytest.importorskip("mock")`, a module
skipped in the `except ImportError:` of its import) cannot fire where the suite runs with the
project's test requirements installed, as a skip on Windows only cannot fire on Linux
(`conditions.dependency_skips` reads those skips). What counts as installed for the tests:

- `[project] dependencies` of the root pyproject.toml, its `[project.optional-dependencies]`
  named `test`, `tests`, `testing` or `dev`, and its `[dependency-groups]` (PEP 735) of those
  names, with the groups they include by `{include-group = "..."}`;
- requirements files whose name says test or dev: `*requirements*.txt` at the root
  (`requirements-dev.txt`, `test-requirements.txt`) and `requirements/*.txt`
  (`requirements/test.txt`, `requirements/test-pure.txt`), with every file they include by
  `-r` (`requirements/cython.txt` from `requirements/test.txt`);
- the `deps` of tox.ini's `[testenv]` (not those of a named environment, `docs` say, nor a
  line for some factors only, `py38: mock`), with the requirements files they include, when
  the change leaves tox.ini (which says how they are installed) alone;
- the root `requirements.txt` when it installs the project itself (`-e .`, `-e .[standard]`,
  `.`): a development environment, as uvicorn's and httpx's are, with the extras of the
  project it names (`standard`); a root `requirements.txt` that does not install the project
  is an application's, whatever it is for.

A package counts when every Python the project supports (from the base's floor on, on Linux
with the standard CPython) installs it: a line with no environment marker, or lines whose
markers together hold there (loguru lists mypy once per range of Pythons, the ranges
covering all). A marker that cannot be read (`platform_machine`, `python_full_version`,
`extra`) holds nowhere.

Listed at the base, and alike at the head (the same requirements, versions and markers, in
whichever of those files: yarl moves `pytest_codspeed==3.2.0` to a file of its own): the
base's listing, so a change cannot add the package it then skips on (a line it adds to a
requirements file does not count); the head's, so a change cannot drop the package, or change
its version, and let the skip fire. An import name is its distribution
only when it is the base's spelling of it with `-` and `.` made `_`, or that lowercased
(`pytest_codspeed` for `pytest-codspeed`, `mock` for `Mock`; not `MOCK` nor
`pytest__codspeed`, which Python, case-sensitive, would not import; `yaml` is not `PyYAML`):
any other name is taken not to be installed. So is a name the project's own files may provide
(a folder or module of that name anywhere in the head tree, the project's own distribution),
and every name when the change may make an installed package fail to import or take it away:
a Python line reaching into the import machinery (`sys.modules`, `sys.meta_path`,
`__import__`, `builtins`, `sys.path`, `addsitedir`, `pytest_plugins`); code that runs before
the test module is imported and may write a module over the package (added to a
conftest.py, a call outside a fixture that is not `autouse`, but for pytest's declarations
and skips, or an import of project code the change touches; `-p` in pytest's settings); a
line of any file that uninstalls a package (werkzeug's `["uv", "pip",
"uninstall", "watchdog"]` in a tox environment's `commands_pre`), sets `pythonpath` or
`PYTHONPATH`, or tox's `install_command` or `skip_install`.

A submodule or a name taken from the package (`mypy.api`) comes and goes with its version:
it is installed only when the listing pins one version exactly, alike on both sides, or the
change touches nothing else that may pin one (a constraints file, named so or by a `-c` of
the listing; a lock file; tox.ini; pyproject.toml's `[tool.uv]`, `[tool.pdm]`, `[tool.hatch]`
or `[tool.poetry]`).
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.guards.changes import FileChange
from app.guards.tamper.code_names import python_module
from app.guards.tamper.conditions.flags import flags
from app.guards.tamper.conditions.projects import pyproject_tables
from app.guards.tamper.conditions.skip_conditions import Floor, Version, dotted_name
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.python import PYTHON
from app.guards.trees import Side, TreeView

# Whether a module (its dotted import name) is installed for the tests.
Installed = Callable[[str], bool]

# The extras and dependency groups read, and the words a requirements file's name must have.
_TEST_GROUPS = frozenset({"test", "tests", "testing", "dev"})
_REQUIREMENTS_FOLDER = "requirements"
_MAX_INCLUDES = 50
# Every minor version of Python 3 from the floor on is asked of the markers: (3, 99) is past
# any Python a project declares today.
_LAST_MINOR = 99
_OLDEST = (3, 0)
_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?P<rest>.*)$")
_INCLUDE = re.compile(r"^(?:-r|--requirement)(?:\s*=\s*|\s*)(?P<path>\S+)$")
# A tox dependency for some factors only: `py38: mock`, `!pypy,py{38,39}: mock`.
_FACTORED = re.compile(r"^[\w{},.!-]+:\s")
# Lines a change may add to Python code that make an installed package fail to import, or a
# module of its name found first (`sys.path.insert(0, stubs)`).
_IMPORT_MACHINERY = re.compile(
    r"\bsys\.modules\b|\bmeta_path\b|\bpath_hooks\b|\b__import__\b|\bbuiltins\b"
    r"|\bimportlib\.(?:abc|machinery|util\.module_from_spec)\b"
    r"|\bsys\.path\b|\baddsitedir\b|\bpytest_plugins\b"
)
# A line of any file a change may add that takes an installed package away where the suite
# runs, or puts a folder before it (`PYTHONPATH`, pytest's `pythonpath`), or tells tox how (not)
# to install it (`install_command = python -c pass {packages}`).
_UNSETTLING = re.compile(
    r"\buninstall\b|\bpythonpath\b|\binstall_command\b|\bskip_install\b", re.IGNORECASE
)
# pytest's settings files, where `-p stubs` loads a plugin before any test module.
_PYTEST_CONFIGS = frozenset({"pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"})
_PLUGIN_OPTION = re.compile(r"(?<![\w-])-p")
# Calls a conftest.py may add that only declare, skip or look (`pytest.mark.*` too).
_DECLARATIONS = frozenset(
    {"pytest.skip", "pytest.importorskip", "pytest.fixture", "pytest.param"}
    | {"importlib.util.find_spec"}
)
# What pins versions besides the listing.
_CONSTRAINT = re.compile(r"^(?:-c|--constraint)(?:\s*=\s*|\s*)(?P<path>\S+)$")
_LOCK_FILES = frozenset({"uv.lock", "poetry.lock", "pdm.lock", "pipfile.lock", "pylock.toml"})
_INSTALLER_TABLES = ("uv", "pdm", "hatch", "poetry")
# One version exactly, extras and a marker aside.
_EXACT = re.compile(r"^(?:\[[^\]]*\])?===?[^,;*]+(?:;.*)?$")
# A root requirements.txt line that installs the project itself: `-e .`, `.[standard]`.
_SELF = re.compile(r"^(?:(?:-e|--editable)\s*=?\s*)?\./?(?:\[(?P<extras>[^\]]*)\])?$")
# What each marker variable is on Linux with the standard CPython (`python_version` aside).
_LINUX = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}
_VERSION = re.compile(r"^\d+(?:\.\d+){0,2}$")


def installed_for_tests(
    files: Sequence[FileChange], trees: TreeView | None, floor: Floor
) -> Installed:
    """Whether a module's package (its top-level name) is installed for the tests, listed at
    the base and alike at the head, and nothing the project or the change provides may stand
    in for it; for a submodule or a name taken from the package (`a.b`), whether the version
    installed is the base's too. Read when first asked."""
    touched = frozenset(path for change in files for path in change.paths)

    @cache
    def listed(side: Side) -> dict[str, _Listing]:
        # tox's deps count only while tox.ini, which says how they are installed, is untouched.
        tox = "tox.ini" not in touched
        return _listed(trees, side, floor, tox) if trees is not None else {}

    @cache
    def own_names() -> frozenset[str]:
        return _own_names(trees) if trees is not None else frozenset()

    @cache
    def unsettled() -> bool:
        # Whether the change may make an installed package fail to import, or take it away.
        return any(_unsettling(change, trees, own_names, touched) for change in files)

    @cache
    def repinnable() -> bool:
        return trees is not None and _repins(touched, trees)

    def installed(module: str) -> bool:
        top = module.split(".")[0]
        if trees is None or not top.isidentifier() or unsettled():
            return False
        before = listed("base").get(_normalised(top))
        after = listed("head").get(_normalised(top))
        if before is None or after is None or before.specs != after.specs:
            return False
        if top not in before.names or top in own_names():
            return False
        # A submodule or a name comes and goes with the version: pinned alike on both sides,
        # or nothing outside the listing may pin another.
        return "." not in module or _pinned(before.specs) or not repinnable()

    return installed


@dataclass(frozen=True)
class _Listing:
    """How a distribution is listed: its requirements (the name's spelling and spaces aside),
    and the import names its spellings give (`Pytest.Codspeed`: `Pytest_Codspeed`,
    `pytest_codspeed`)."""

    specs: frozenset[str]
    names: frozenset[str]


def _normalised(name: str) -> str:
    """A distribution's name as PEP 503 compares them (`Pytest_Codspeed` is `pytest-codspeed`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _import_names(spelling: str) -> set[str]:
    """The module names a distribution's spelling may install: `-` and `.` made `_`, as
    written or lowercased; not PEP 503's runs collapsed (`pytest__codspeed`) nor other cases
    (`MOCK`), which Python, case-sensitive, would not import."""
    name = re.sub(r"[-.]", "_", spelling)
    return {name, name.lower()}


def _unsettling(
    change: FileChange,
    trees: TreeView | None,
    own_names: Callable[[], frozenset[str]],
    touched: frozenset[str],
) -> bool:
    """Whether a change to this file may make an installed package fail to import where the
    tests run, or take it away: code that runs before the test module is imported (a
    conftest.py's, pytest's `pythonpath` and `-p`), a line reaching into the import machinery,
    or one that uninstalls a package or tells tox how (not) to install."""
    if _conftest_runs_more(change, trees, own_names, touched):
        return True
    python = reader_for(change.path) is PYTHON
    config = posixpath.basename(change.path) in _PYTEST_CONFIGS
    return any(
        _UNSETTLING.search(line.text)
        or (python and _IMPORT_MACHINERY.search(line.text))
        or (config and _PLUGIN_OPTION.search(line.text))
        for line in change.added
    )


def _conftest_runs_more(
    change: FileChange,
    trees: TreeView | None,
    own_names: Callable[[], frozenset[str]],
    touched: frozenset[str],
) -> bool:
    """Whether the change adds to a conftest.py code that may write a module over an
    installed one (`mock.py` next to it, where pytest looks first) before a test imports it,
    on an added line of the head's file: a call outside the body of a fixture that is not
    `autouse` (at import, in a hook), other than the real pytest's declarations and skips and
    `importlib.util.find_spec`; a relative import, or one of the project's own code the change
    touches. A fixture skipped, or a fixture's `params` marked `skipif(not
    find_spec("wsproto"))`, adds none."""
    path = change.new_path
    if path is None or posixpath.basename(path) != "conftest.py" or not change.added:
        return False
    text = trees.text("head", path) if trees is not None else None
    module = python_module(text)
    if trees is None or module is None:
        return True
    standard = flags(trees, "head", path, text).standard
    added = {line.number for line in change.added}
    fixtures = _fixture_bodies(module)
    for node in ast.walk(module):
        if not isinstance(node, ast.Call | ast.Import | ast.ImportFrom):
            continue
        if added.isdisjoint(range(node.lineno, (node.end_lineno or node.lineno) + 1)):
            continue
        if isinstance(node, ast.Call):
            name = dotted_name(node.func) or ""
            declared = name in _DECLARATIONS or name.startswith("pytest.mark.")
            if not (declared and standard(name)) and node.lineno not in fixtures:
                return True
        elif isinstance(node, ast.ImportFrom) and node.level:
            return True
        else:
            for imported in _imported_modules(node):
                if imported.split(".")[0] in own_names() and _touches(touched, imported):
                    return True
    return False


def _fixture_bodies(module: ast.Module) -> set[int]:
    """The lines of the bodies of the module's fixtures that are not `autouse`: they run
    only for the tests that ask for them."""
    lines: set[int] = set()
    for node in ast.walk(module):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            if dotted_name(call.func if call else decorator) != "pytest.fixture":
                continue
            if call is None or all(keyword.arg != "autouse" for keyword in call.keywords):
                first, last = node.body[0].lineno, node.end_lineno or node.lineno
                lines.update(range(first, last + 1))
    return lines


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import may run (`a.b` and, should `n` be a module, `a.b.n` for `from
    a.b import n`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [f"{node.module}.{alias.name}" for alias in node.names if node.module]


def _touches(touched: frozenset[str], module: str) -> bool:
    """Whether a touched path may be `module` or a package on its way, under any source root."""
    parts = module.split(".")
    stems = ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]
    files = {f"{stem}.py" for stem in stems} | {f"{stem}/__init__.py" for stem in stems}
    return any(path in files or path.endswith(tuple("/" + f for f in files)) for path in touched)


def _pinned(specs: frozenset[str]) -> bool:
    """Whether every requirement pins one version exactly (`==3.2.0`, `==v0.910; marker`)."""
    return all(_EXACT.match(spec) for spec in specs)


def _repins(touched: frozenset[str], trees: TreeView) -> bool:
    """Whether the change touches what may pin a version outside the listing: a constraints
    file (named so, or by a `-c` of the listing), a lock file, tox.ini, or pyproject.toml's
    `[tool.uv]`, `[tool.pdm]`, `[tool.hatch]` or `[tool.poetry]`."""
    constraints = {
        include["path"]
        for side in ("base", "head")
        for line in _requirements(trees, side, tox=True)
        if (include := _CONSTRAINT.match(line)) is not None
    }
    for path in touched:
        file = posixpath.basename(path).lower()
        named = "constraint" in file and file.endswith((".txt", ".in"))
        if path in constraints or named or path == "tox.ini":
            return True
        if file in _LOCK_FILES or re.match(r"^pylock\..*toml$", file):
            return True
    tools = [_tables(trees.text(side, "pyproject.toml")).get("tool") for side in ("base", "head")]
    base, head = (tool if isinstance(tool, dict) else {} for tool in tools)
    return any(base.get(name) != head.get(name) for name in _INSTALLER_TABLES)


def _own_names(trees: TreeView) -> frozenset[str]:
    """The module names the head tree may provide itself: every folder, and every Python
    module or extension, by its name (`tests/mock.py` shadows `mock` when pytest puts `tests`
    on `sys.path`); and the project's own distribution."""
    names: set[str] = set()
    for path in trees.listing("head", "."):
        *folders, file = path.split("/")
        names.update(folders)
        stem, _, suffix = file.partition(".")
        if suffix.split(".")[-1] in ("py", "pyi", "pyc", "pyd", "so"):
            names.add(stem)
    project = _tables(trees.text("base", "pyproject.toml")).get("project")
    own = project.get("name") if isinstance(project, dict) else None
    if isinstance(own, str):
        names.update({own, _normalised(own).replace("-", "_")})
    return frozenset(names)


def _listed(trees: TreeView, side: Side, floor: Floor, tox: bool) -> dict[str, _Listing]:
    """The distributions `side` installs for its tests on every supported Python (through
    tox.ini's deps too when `tox`), each with how it is listed."""
    listings: dict[str, list[tuple[str, str, str | None]]] = {}
    for requirement in _requirements(trees, side, tox):
        name, marker = _parsed(requirement)
        if name is not None:
            spec = re.sub(r"\s+", "", requirement.strip()[len(name) :])
            listings.setdefault(_normalised(name), []).append((name, spec, marker))
    versions = _pythons(floor())
    return {
        name: _Listing(
            frozenset(spec for _, spec, _ in listed),
            frozenset(module for spelling, _, _ in listed for module in _import_names(spelling)),
        )
        for name, listed in listings.items()
        if all(any(_holds(marker, version) for _, _, marker in listed) for version in versions)
    }


def _requirements(trees: TreeView, side: Side, tox: bool) -> Iterator[str]:
    """The requirement lines `side` lists for its tests, and a `-c <path>` line (from the
    root) for each constraints file they name."""
    extras = _own_extras(trees.text(side, "requirements.txt"))
    yield from _pyproject_requirements(_tables(trees.text(side, "pyproject.toml")), extras or set())
    listing = trees.listing(side, ".")
    named = [path for path in listing if _test_requirements_file(path)]
    if extras is not None:
        # The development environment: what it lists is installed where the tests run.
        named.append("requirements.txt")
    yield from _requirement_files(trees, side, named)
    if tox:
        yield from _tox_requirements(trees, side)


def _own_extras(text: str | None) -> set[str] | None:
    """The extras a root requirements.txt installs the project itself with (`-e .[standard]`:
    `standard`; `-e .`: none); None when it does not install the project."""
    found: set[str] | None = None
    for line in _logical_lines(text or ""):
        match = _SELF.match(line)
        if match is not None:
            named = (match["extras"] or "").split(",")
            found = (found or set()) | {_normalised(name.strip()) for name in named if name.strip()}
    return found


def _tables(text: str | None) -> dict[str, Any]:
    """pyproject.toml's tables; one that does not parse lists nothing, so nothing it would
    list counts as installed."""
    return pyproject_tables(text) or {}


def _pyproject_requirements(data: dict[str, Any], installed_extras: set[str]) -> Iterator[str]:
    """The requirements of the project, of its test extras and of `installed_extras`, and of
    its test dependency groups."""
    project = data.get("project")
    if isinstance(project, dict):
        yield from _strings(project.get("dependencies"))
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            for group, listed in extras.items():
                if _normalised(str(group)) in _TEST_GROUPS | installed_extras:
                    yield from _strings(listed)
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        by_name = {_normalised(str(name)): listed for name, listed in groups.items()}
        yield from _group_requirements(by_name, sorted(_TEST_GROUPS & by_name.keys()))


def _group_requirements(groups: dict[str, Any], wanted: list[str]) -> Iterator[str]:
    """The requirements of the `wanted` dependency groups and of those they include."""
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        entries = groups.get(name)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, str):
                yield entry
            elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
                wanted.append(_normalised(entry["include-group"]))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, list):
        yield from (item for item in value if isinstance(item, str))


def _test_requirements_file(path: str) -> bool:
    """`requirements-dev.txt`, `test-requirements.txt`, `requirements/test-pure.txt`; not
    `requirements.txt` nor `requirements/doc.txt`."""
    folder, file = posixpath.split(path)
    stem, dot, suffix = file.rpartition(".")
    if not dot or suffix != "txt":
        return False
    if folder != _REQUIREMENTS_FOLDER and (folder or "requirements" not in stem.lower()):
        return False
    return bool(_TEST_GROUPS & set(re.split(r"[-_.]+", stem.lower())))


def _requirement_files(trees: TreeView, side: Side, paths: Iterable[str]) -> Iterator[str]:
    """The requirement lines of these requirements files and of those they include by `-r`,
    and their `-c` lines, the path made the root's."""
    wanted = list(paths)
    seen: set[str] = set()
    while wanted and len(seen) < _MAX_INCLUDES:
        path = posixpath.normpath(wanted.pop())
        if path in seen or path.startswith("../"):
            continue
        seen.add(path)
        for line in _logical_lines(trees.text(side, path) or ""):
            include = _INCLUDE.match(line)
            constraint = _CONSTRAINT.match(line)
            if include is not None:
                wanted.append(posixpath.join(posixpath.dirname(path), include["path"]))
            elif constraint is not None:
                named = posixpath.join(posixpath.dirname(path), constraint["path"])
                yield f"-c {posixpath.normpath(named)}"
            elif not line.startswith("-"):
                yield line


def _logical_lines(text: str) -> Iterator[str]:
    """A requirements file's lines, continuations joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    for raw in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if line and "${" not in line:
            yield line


def _tox_requirements(trees: TreeView, side: Side) -> Iterator[str]:
    """`deps` of tox.ini's `[testenv]`, every environment's, with the files they include."""
    text = trees.text(side, "tox.ini")
    if text is None:
        return
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    if not parser.has_option("testenv", "deps"):
        return
    included: list[str] = []
    for line in _logical_lines(parser.get("testenv", "deps")):
        include = _INCLUDE.match(line)
        if include is not None:
            included.append(include["path"])
        elif _CONSTRAINT.match(line):
            yield line  # read for what pins versions (`_repins`), not as a requirement
        elif not line.startswith(("-", "{")) and not _FACTORED.match(line):
            yield line
    yield from _requirement_files(trees, side, included)


def _parsed(requirement: str) -> tuple[str | None, str | None]:
    """A requirement's distribution and environment marker (None for none); no distribution
    when the line cannot be read."""
    match = _REQUIREMENT.match(requirement.strip())
    if match is None:
        return None, None
    rest = match["rest"]
    if rest and not rest[0].isspace() and rest[0] not in "[(<>=!~;@":
        return None, None
    _, semicolon, marker = rest.partition(";")
    return match["name"], marker.strip() if semicolon else None


def _pythons(floor: Version | None) -> list[Version]:
    start = floor if floor is not None and floor[0] == 3 else _OLDEST
    return [(3, minor) for minor in range(start[1], _LAST_MINOR + 1)]


def _holds(marker: str | None, python: Version) -> bool:
    """Whether an environment marker holds on Linux, CPython `python`; False when it cannot be
    read. Parsed with `ast`, never evaluated."""
    if marker is None:
        return True
    try:
        expression = ast.parse(marker, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _truth(expression, python) is True


def _truth(node: ast.expr, python: Version) -> bool | None:
    if isinstance(node, ast.BoolOp):
        truths = [_truth(value, python) for value in node.values]
        if None in truths:
            return None
        return all(truths) if isinstance(node.op, ast.And) else any(truths)
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, op, right = node.left, node.ops[0], node.comparators[0]
    turned = isinstance(right, ast.Name)
    if turned:
        # `"3.8" <= python_version`: the variable on the left, the operator turned round.
        left, right = right, left
    if not isinstance(left, ast.Name) or not isinstance(right, ast.Constant):
        return None
    value = right.value
    if not isinstance(value, str):
        return None
    if left.id == "python_version":
        return _version_compare((*python, 0), _TURNED.get(type(op), op) if turned else op, value)
    here = _LINUX.get(left.id)
    if here is None:
        return None
    if isinstance(op, ast.Eq | ast.NotEq):
        return (here == value) == isinstance(op, ast.Eq)
    if isinstance(op, ast.In | ast.NotIn):
        # PEP 508's `in` is a substring test, whichever side the variable is on.
        contained = value in here if turned else here in value
        return contained == isinstance(op, ast.In)
    return None


_TURNED: dict[type[ast.cmpop], ast.cmpop] = {
    ast.Lt: ast.Gt(),
    ast.Gt: ast.Lt(),
    ast.LtE: ast.GtE(),
    ast.GtE: ast.LtE(),
}


def _version_compare(python: tuple[int, ...], op: ast.cmpop, text: str) -> bool | None:
    if not _VERSION.match(text):
        return None
    bound = tuple(int(part) for part in text.split("."))
    bound = (*bound, 0, 0)[:3]
    comparisons: dict[type[ast.cmpop], Callable[[], bool]] = {
        ast.Eq: lambda: python == bound,
        ast.NotEq: lambda: python != bound,
        ast.Lt: lambda: python < bound,
        ast.LtE: lambda: python <= bound,
        ast.Gt: lambda: python > bound,
        ast.GtE: lambda: python >= bound,
    }
    compare = comparisons.get(type(op))
    return None if compare is None else compare()
