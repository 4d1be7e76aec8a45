"""The newest Python a project declares: its highest `Programming Language :: Python :: 3.X`
trove classifier, read at the base.

A skip that holds only on Pythons newer than that (`skipif(sys.version_info >= (3, 14))` where
the classifiers stop at 3.13) cannot apply where the suite runs, on a Python the project
supports (`conditions.skip_conditions`). The base's: a change cannot declare its own way out
(drop 3.14 from the classifiers, or list classifiers where there were none, to excuse a skip
it adds). The head's only ever raises it: a change to a project file that declares a newer
Python (adds 3.14 while skipping a test there) loses the test on a Python it declares, and one
whose head cannot be read leaves the newest unknown.

Read strictly, since a newest set too low would excuse a skip on a Python the project
supports. The classifiers come from every project file at the root of the tree:
pyproject.toml's `[project] classifiers`, setup.cfg's `[metadata] classifiers` (one a line)
and the `classifiers=[...]` of setup.py's `setup(...)` call (string literals only); the newest
is the highest minor version any of them names. Unknown (None) when a file that lists
classifiers cannot be read in full (a pyproject.toml that does not parse or leaves them
`dynamic`, a `file:` value, a setup.py that builds the list or names `classifiers` anywhere
else), when the build is Poetry's (it adds classifiers of its own from the `python`
constraint), when no classifier names a minor version, when a test file the change touches
lies under a folder with a project file of its own (a package of a monorepo has its own
Pythons), and without the trees (a bare diff).
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Sequence
from functools import cache

from app.guards.changes import FileChange
from app.guards.tamper.code_names import python_module
from app.guards.tamper.conditions.projects import PROJECT_FILES, in_own_projects, pyproject_tables
from app.guards.tamper.conditions.skip_conditions import Floor, Version
from app.guards.trees import Side, TreeView

_MINOR = re.compile(r"^Programming Language :: Python :: (\d+)\.(\d+)$")
_POETRY_BACKEND = "poetry"


class _Unreadable(Exception):
    """A project file lists classifiers that cannot be read in full."""


def newest_python(files: Sequence[FileChange], trees: TreeView | None) -> Floor:
    """The newest Python the base declares (module docstring); None when unknown. Read when
    first asked."""

    touched = any(path in PROJECT_FILES for c in files for path in (c.old_path, c.new_path))

    @cache
    def newest() -> Version | None:
        if trees is None:
            return None
        base = _declared(trees, "base")
        if base is None or in_own_projects(files, trees):
            return None
        head = _declared(trees, "head") if touched else base
        return None if head is None else max(base, head)

    return newest


def _declared(trees: TreeView, side: Side) -> Version | None:
    """The newest Python the root's project files name on `side`; None when unknown."""
    try:
        listed = [
            *_pyproject(trees.text(side, "pyproject.toml")),
            *_setup_cfg(trees.text(side, "setup.cfg")),
            *_setup_py(trees.text(side, "setup.py")),
        ]
    except _Unreadable:
        return None
    versions = [_minor(classifier) for classifier in listed]
    return max((version for version in versions if version is not None), default=None)


def _minor(classifier: str) -> Version | None:
    match = _MINOR.match(classifier.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _pyproject(text: str | None) -> list[str]:
    """`[project] classifiers`, when static; nothing from a pyproject.toml without them."""
    if text is None:
        return []
    tables = pyproject_tables(text)
    if tables is None:
        raise _Unreadable
    backend = tables.get("build-system", {})
    backend = backend.get("build-backend") if isinstance(backend, dict) else None
    if isinstance(backend, str) and backend.startswith(_POETRY_BACKEND):
        raise _Unreadable
    project = tables.get("project")
    if not isinstance(project, dict):
        return []
    dynamic = project.get("dynamic", [])
    if not isinstance(dynamic, list) or "classifiers" in dynamic:
        raise _Unreadable  # written by the build: a plugin, a setuptools `file:`
    return _strings(project["classifiers"]) if "classifiers" in project else []


def _setup_cfg(text: str | None) -> list[str]:
    """`[metadata] classifiers`, one a line."""
    if text is None:
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as error:
        raise _Unreadable from error
    if not parser.has_option("metadata", "classifiers"):
        return []
    value = parser.get("metadata", "classifiers")
    if value.strip().startswith("file:"):
        raise _Unreadable
    return [line for line in value.splitlines() if line.strip()]


def _setup_py(text: str | None) -> list[str]:
    """The `classifiers=[...]` of the `setup(...)` call, the one place the file names them."""
    if text is None or not re.search(r"\bclassifiers\b", text):
        return []
    module = python_module(text)
    if module is None or len(re.findall(r"\bclassifiers\b", text)) != 1:
        raise _Unreadable
    keywords = [
        keyword.value
        for node in ast.walk(module)
        if isinstance(node, ast.Call) and _called(node.func) == "setup"
        for keyword in node.keywords
        if keyword.arg == "classifiers"
    ]
    if len(keywords) != 1 or not isinstance(keywords[0], ast.List | ast.Tuple):
        raise _Unreadable
    return _strings([_literal(element) for element in keywords[0].elts])


def _called(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _literal(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else node


def _strings(value: object) -> list[str]:
    """A list of strings, whole; anything else is not read."""
    if not isinstance(value, list):
        raise _Unreadable
    strings = [item for item in value if isinstance(item, str)]
    if len(strings) != len(value):
        raise _Unreadable
    return strings
