"""Removed tests that ran only on Pythons the change stops supporting.

A change that raises the project's floor ("Drop Python 3.8": `python_requires = >= 3.8` made
`>= 3.9`) often removes the tests that ran only there (multidict's
`@pytest.mark.skipif(sys.version_info >= (3, 9))` test, attrs' `skipif(PY_3_10_PLUS)` one).
Such a test is set aside when, at the base, a skip on it holds on every Python from the
head's floor on: its own `skipif`/`skipIf`/`skipUnless` decorator, a `pytest.mark.skipif` on
a class around it, or the module's `pytestmark`, each condition read as in
`conditions.skip_conditions` (a version flag, `PY_3_10_PLUS = sys.version_info[:2] >= (3,
10)`, as what it stands for, by the rules of `conditions.flags`, in the base tree).

The head's floor, here only: keeping the test would skip it on every Python the head
supports, so its removal takes nothing from the suite that the floor itself does not (and an
installer refuses the head on a Python below its floor, so the suite cannot run there). A
skip a change adds is still judged against the base's floor: the test it marks ran on every
Python before the change, those the head keeps included.

The head's floor is read strictly, since the change writes it: the change must touch a
project file; `requires-python` of pyproject.toml's `[project]` table when there is one, else
`python_requires` of setup.cfg's `[options]` (written once) for a setuptools build; a lower
bound of its own (`>=3.9`, other clauses only narrow it); a setup.py the change touches, or
one that names `python_requires`, may set another, and none is then read; nor is one when the
pyproject.toml also states a Python for builds that ignore `[project]` (Poetry 1, old flit).
A change to the tests of a folder with a project file of its own (a package of a monorepo)
keeps the base's floor: the root's floor is not that package's. Without the trees (a bare diff), the
base's floor.
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

from app.guards.changes import FileChange
from app.guards.tamper.code_names import binding_count, python_module
from app.guards.tamper.conditions.flags import flags
from app.guards.tamper.conditions.projects import PROJECT_FILES, in_own_projects, pyproject_tables
from app.guards.tamper.conditions.skip_conditions import Floor, Version, marker_skips_everywhere
from app.guards.tamper.definitions import Definition
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.relocations import SkippedAnyway
from app.guards.trees import TreeView

# One clause of a version specifier that is a lower bound: `>=3.9`, `>= 3.9.2`.
_LOWER_BOUND = re.compile(r"^>=\s*(\d+)\.(\d+)(?:\.\d+)?$")


def removal_floor(files: Sequence[FileChange], trees: TreeView | None, base: Floor) -> Floor:
    """The oldest Python a removed test is judged against: the head's, when the change raises
    the floor `base` reads; else the base's."""
    touched = any(path in PROJECT_FILES for c in files for path in (c.old_path, c.new_path))

    @cache
    def floor() -> Version | None:
        before = base()
        if trees is None or before is None or not touched:
            return before
        after = _declared_floor(files, trees)
        if after is None or after <= before or in_own_projects(files, trees):
            return before
        return after

    return floor


def skipped_at_base(trees: TreeView | None, floor: Floor) -> SkippedAnyway:
    """Which removed tests of a Python test file a skip at the base kept from running on every
    Python from `floor` on."""

    def skipped(path: str, defs: Sequence[Definition]) -> set[int]:
        if trees is None or not is_module(path) or floor() is None:
            return set()
        text = trees.text("base", path)
        module = python_module(text)
        if module is None:
            return set()
        names = flags(trees, "base", path, text)
        wanted = {definition.line.number for definition in defs}
        around = _module_marks(module)
        found: set[int] = set()
        for function, classes in _functions(module.body, ()):
            if function.lineno not in wanted:
                continue
            # A pytest mark on a class or module applies to each test in it; a unittest
            # decorator there skips only a TestCase's tests, which cannot be told here.
            inherited = [m for c in classes for m in c.decorator_list if _pytest_skipif(m)]
            marks = [*function.decorator_list, *inherited, *around]
            if any(marker_skips_everywhere(mark, floor, names) for mark in marks):
                found.add(function.lineno)
        return found

    return skipped


def _functions(
    body: Sequence[ast.stmt], classes: tuple[ast.ClassDef, ...]
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, tuple[ast.ClassDef, ...]]]:
    """The functions a module defines at its top level or in its classes (nested), each with
    the classes around it; not those inside functions or under `if`."""
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            yield statement, classes
        elif isinstance(statement, ast.ClassDef):
            yield from _functions(statement.body, (*classes, statement))


def _module_marks(module: ast.Module) -> list[ast.expr]:
    """The `pytest.mark.skipif` marks of the module's `pytestmark`, when the module binds it
    once, by an assignment of its top level (bound again, which marks it ends with cannot be
    told)."""
    if binding_count(module, "pytestmark") != 1:
        return []
    for statement in module.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == "pytestmark"
        ):
            value = statement.value
            marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            return [mark for mark in marks if _pytest_skipif(mark)]
    return []


def _pytest_skipif(node: ast.expr) -> bool:
    """`pytest.mark.skipif(...)` or `mark.skipif(...)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    owner = node.func.value
    return (
        node.func.attr == "skipif"
        and isinstance(owner, ast.Attribute | ast.Name)
        and (owner.attr if isinstance(owner, ast.Attribute) else owner.id) == "mark"
    )


def _declared_floor(files: Sequence[FileChange], trees: TreeView) -> Version | None:
    """The floor the head declares, read strictly (module docstring); None when unsure."""
    setup_py = trees.text("head", "setup.py")
    if any("setup.py" in (c.old_path, c.new_path) for c in files) or (
        setup_py is not None and re.search(r"python[_-]requires", setup_py)
    ):
        return None
    pyproject = pyproject_tables(trees.text("head", "pyproject.toml"))
    if pyproject is None or _other_floors(pyproject):
        return None
    project = pyproject.get("project")
    if project is not None:
        spec = project.get("requires-python") if isinstance(project, dict) else None
        return _lower_bound(spec)
    backend = pyproject.get("build-system", {})
    backend = backend.get("build-backend") if isinstance(backend, dict) else None
    if backend is not None and not str(backend).startswith("setuptools"):
        return None
    return _setup_cfg_floor(trees.text("head", "setup.cfg"))


def _other_floors(pyproject: dict[str, Any]) -> bool:
    """Whether the pyproject.toml states the Python it needs where builds that ignore
    `[project]` read it (Poetry 1's `[tool.poetry.dependencies] python`, old flit's
    `[tool.flit.metadata]`): which one the build reads cannot be told, so neither is read."""
    tool = pyproject.get("tool")
    if not isinstance(tool, dict):
        return False
    poetry = tool.get("poetry")
    dependencies = poetry.get("dependencies") if isinstance(poetry, dict) else None
    flit = tool.get("flit")
    return (isinstance(dependencies, dict) and "python" in dependencies) or (
        isinstance(flit, dict) and "metadata" in flit
    )


def _setup_cfg_floor(text: str | None) -> Version | None:
    """`python_requires` of setup.cfg's `[options]`, when written there exactly once."""
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section("options"):
        return None
    keys = [k for k in parser["options"] if k.replace("-", "_").lower() == "python_requires"]
    return _lower_bound(parser["options"][keys[0]]) if len(keys) == 1 else None


def _lower_bound(spec: object) -> Version | None:
    """The highest `>=X.Y` clause of a version specifier (`>=3.9, <4`): each clause must hold,
    so the others only narrow it."""
    if not isinstance(spec, str):
        return None
    bounds = [_LOWER_BOUND.match(clause.strip()) for clause in spec.split(",")]
    found = [(int(m.group(1)), int(m.group(2))) for m in bounds if m is not None]
    return max(found) if found else None
