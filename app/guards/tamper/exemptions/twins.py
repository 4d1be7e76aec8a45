"""A removed Python test whose exact twin runs on in another test file the change leaves alone.

Tests are moved in steps: copied into another test file in one commit, the original deleted
in the next. The second commit removes a test, but the suite loses nothing: the same test,
under the same name, runs in the other file, as it did before the change.

`twin_runs_on` says so only when the twin is shown to be the same test run the same way:

- the original is a function at the top level of its module (not a method: a class brings
  setup and attributes of its own), and the twin, in a file at the head that the runner
  collects (a test module by name, not a conftest or a fixture folder), is the one top-level
  function of that name there, equal to it as Python (`ast`): decorators, parameters
  (fixtures), body; formatting and comments aside;
- the twin's file is not part of the change (it ran before exactly as it runs now);
- every name the test uses (parameters included, so a fixture defined in the module) that
  either module binds at its top level is bound there by the same statements in both
  (`from pkg.json import load` against `from pkg.yaml import load` makes two different tests
  of one body); neither module has a star import; the module-level code that may skip or mark
  it (`pytestmark`, a `pytest.skip(allow_module_level=True)`, an `importorskip`) and what runs
  around every test of the module (an autouse fixture, `setup_module`) are the same;
- no `conftest.py` sits in a folder on the way to one file and not to the other, where it
  could give a fixture of the same name another meaning;
- pytest runs the twin: its module binds the test's name exactly once (no later
  `test_x = None`, second `def`, `del` or import), uses it nowhere else (not
  `pytest.mark.skip(test_x)`, nor `globals()["test_x"]`), and never mentions `__test__`;
  no folder on its path is one pytest skips by default (`build`, `dist`, `node_modules`,
  `venv`, `*.egg`, `_darcs`, `CVS`, `{arch}`, any `.*`); and every pytest section of the
  base's root configuration (`pytest.ini`, `.pytest.ini`, `tox.ini` [pytest], `setup.cfg`
  [tool:pytest], `pyproject.toml` [tool.pytest.ini_options] or [tool.pytest], `pytest.toml`)
  lets it in: under one of its `testpaths`, under none of its `norecursedirs`, named by its
  `python_files`, no `--ignore`/`--deselect` in its `addopts`; a configuration that cannot
  be read trusts no twin (`runners.pytest_config`);
- the change touches no `conftest.py` anywhere and no pytest configuration file
  (`pytest.ini`, `tox.ini`, `setup.cfg`, `pyproject.toml`, ...), which could stop the twin
  from being collected or deselect it: such a change trusts no twin at all.

Anything else is left to the rest of the rule, which reports the removal.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Mapping, Sequence
from functools import cached_property

from app.guards.changes import FileChange
from app.guards.tamper.code_names import binding_count, python_module
from app.guards.tamper.definitions import Definition
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.runners.pytest_config import is_config, may_collect
from app.guards.tamper.test_files import collects_tests
from app.guards.trees import Side, TreeView

# Module-level functions pytest (or unittest) runs around the tests of the module.
_SETUP = frozenset(
    {
        "setup_module",
        "teardown_module",
        "setup_function",
        "teardown_function",
        "setUpModule",
        "tearDownModule",
        "setup",
        "teardown",
    }
)
_TOP_LEVEL_DEF = re.compile(r"^(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
# Names whose use in module-level code may skip or mark the tests of the module.
_MARKING = frozenset(
    {"pytestmark", "skip", "skipif", "xfail", "importorskip", "SkipTest", "skipTest", "mark"}
)


class Twins:
    """Where the removed Python tests of a change may have twins: the files of the head tree
    that define a top-level function of the same name (one search for all of them)."""

    def __init__(
        self,
        files: Sequence[FileChange],
        trees: TreeView | None,
        removed: Mapping[int, Sequence[Definition]],
    ) -> None:
        self._files = files
        self._trees = trees
        self._removed = removed

    @cached_property
    def _homes(self) -> dict[str, set[str]]:
        names = {
            d.name
            for index, defs in self._removed.items()
            if is_module(self._files[index].old_path or "")
            for d in defs
            if d.name.isidentifier()
        }
        if self._trees is None or not names:
            return {}
        touched = {p for c in self._files for p in (c.old_path, c.new_path) if p}
        if any(is_config(p) for p in touched):
            # A conftest or a pytest configuration changed: what pytest collects may have too.
            return {}
        homes: dict[str, set[str]] = {}
        for hit in self._trees.search("head", names):
            match = _TOP_LEVEL_DEF.match(hit.text)
            if (
                match is not None
                and match["name"] in names
                and is_module(hit.path)
                and hit.path not in touched
                and collects_tests(hit.path)
                and may_collect(self._trees, "base", hit.path)
            ):
                homes.setdefault(match["name"], set()).add(hit.path)
        return homes

    def run_on(self, index: int, definition: Definition) -> bool:
        """Whether the removed test `definition` of the change's file `index` runs on,
        unchanged, as a test of the same name in another collected file the change does not
        touch."""
        path = self._files[index].old_path
        homes = self._homes.get(definition.name)
        if self._trees is None or path is None or not homes:
            return False
        original = python_module(self._trees.text("base", path))
        test = _function(original, definition.name, definition.line.number)
        if original is None or test is None:
            return False
        return any(
            _runs(text, definition.name)
            and _same_test((path, original), test, (other, python_module(text)))
            and _same_conftests(self._trees, path, other)
            for other in sorted(homes - {path})
            for text in [self._trees.text("head", other)]
        )


def _runs(text: str | None, name: str) -> bool:
    """Whether pytest runs the module's function `name`: the module binds the name once (no
    later `test_x = None`, second `def`, `del` or import of it), uses it nowhere else (not
    `pytest.mark.skip(test_x)` at its top level, nor in a string: `globals()["test_x"]`), and
    never mentions `__test__` (`__test__ = False` leaves a module or a function out)."""
    module = python_module(text)
    if text is None or module is None or "__test__" in text:
        return False
    if binding_count(module, name) != 1:
        return False
    word = re.compile(rf"\b{re.escape(name)}\b")
    return not any(
        (isinstance(node, ast.Name) and node.id == name)
        or (isinstance(node, ast.Attribute) and node.attr == name)
        or (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and word.search(node.value)
        )
        for node in ast.walk(module)
    )


def _function(
    module: ast.Module | None, name: str, line: int | None = None
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The one top-level function `name` of the module (at `line`, when given)."""
    if module is None:
        return None
    found = [
        node
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
    ]
    if len(found) != 1 or (line is not None and found[0].lineno != line):
        return None
    return found[0]


def _same_test(
    original: tuple[str, ast.Module],
    test: ast.FunctionDef | ast.AsyncFunctionDef,
    other: tuple[str, ast.Module | None],
) -> bool:
    twin = _function(other[1], test.name)
    if other[1] is None or twin is None or ast.dump(twin) != ast.dump(test):
        return False
    used = {node.id for node in ast.walk(test) if isinstance(node, ast.Name)}
    used |= {node.arg for node in ast.walk(test) if isinstance(node, ast.arg)}
    used.discard(test.name)
    mine = _context(*original, used)
    return mine is not None and mine == _context(other[0], other[1], used)


def _context(path: str, module: ast.Module, used: set[str]) -> set[str] | None:
    """What the module's top level gives the names in `used` (but the test itself), and the
    statements that may skip or mark its tests; None when a star import may bind anything."""
    found: set[str] = set()
    for statement in module.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                if alias.name == "*":
                    return None
                name = alias.asname or alias.name.split(".")[0]
                if name in used:
                    found.add(f"{name} = {_imported(path, statement, alias)}")
            continue
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # What runs around every test of the module: an autouse fixture, a setup hook.
            marks = statement.name in _SETUP or any(
                isinstance(node, ast.keyword) and node.arg == "autouse"
                for decorator in statement.decorator_list
                for node in ast.walk(decorator)
            )
        else:
            marks = any(_name(node) in _MARKING for node in ast.walk(statement))
        bound = _bound(statement)
        if "*" in bound:
            return None
        if (bound & used) or marks:
            # A relative import nested in a `try` means something else in another folder.
            relative = any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(statement))
            found.add(ast.dump(statement) + (posixpath.dirname(path) if relative else ""))
    return found


def _imported(path: str, statement: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    """What an import binds, the same for the same object wherever it is written: `import
    click` and `import click.utils` both bind the package `click`; a relative import is read
    from the file's folder."""
    if isinstance(statement, ast.Import):
        return alias.name if alias.asname else alias.name.split(".")[0]
    module = statement.module or ""
    if statement.level:
        directory = posixpath.dirname(path)
        for _ in range(statement.level - 1):
            directory = posixpath.dirname(directory)
        module = f"{directory}/:{module}"
    return f"{module}:{alias.name}"


def _bound(statement: ast.stmt) -> set[str]:
    """The names a top-level statement (not an import) binds in its module."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    names: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Global):
            names.update(node.names)
    return names


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _same_conftests(trees: TreeView, path: str, other: str) -> bool:
    """No `conftest.py` in a folder on the way to one file and not to the other (the one
    file at the base, the other at the head: where each ran)."""
    here, there = posixpath.dirname(path), posixpath.dirname(other)
    shared = posixpath.commonpath([here, there]) if here and there else ""
    sides: tuple[tuple[str, Side], ...] = ((here, "base"), (there, "head"))
    for directory, side in sides:
        while directory != shared:
            if trees.text(side, posixpath.join(directory, "conftest.py")) is not None:
                return False
            directory = posixpath.dirname(directory)
    return True
