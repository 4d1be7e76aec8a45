"""Whether pytest, run from the root of the repository, may collect a file: its default
`norecursedirs` and what the root's pytest configuration says about folders and file names.

Used by `app.guards.twins` to trust only a twin that pytest runs. Strict rather than exact:
every configuration file at the root that has a pytest section is read, not only the one
pytest would pick, and the default folders pytest skips are skipped even when a configuration
replaces them. A configuration that cannot be read trusts no file.
"""

from __future__ import annotations

import configparser
import posixpath
import shlex
import tomllib
from collections.abc import Mapping
from fnmatch import fnmatchcase

from app.guards.trees import Side, TreeView

# The files pytest reads its configuration from (and `conftest.py`, which may change what it
# collects): a change that touches one, anywhere, may change what runs.
CONFIG_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    }
)
# pytest's default `norecursedirs`; `.*` covers `.git`, `.tox`, `.venv`.
DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv")
_ARCH = "{arch}"
_INI_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
_TOML_FILES = ("pytest.toml", ".pytest.toml", "pyproject.toml")
_INI_SECTIONS = ("pytest", "tool:pytest")
_KEYS = ("testpaths", "norecursedirs", "python_files", "addopts")
# Options in `addopts` that leave files or tests out by path.
_BY_PATH = ("--ignore", "--ignore-glob", "--deselect")

Settings = Mapping[str, list[str]]


def is_config(path: str) -> bool:
    """A pytest configuration file or a `conftest.py`, by name, in any folder."""
    return posixpath.basename(path) in CONFIG_NAMES


def may_collect(trees: TreeView, side: Side, path: str) -> bool:
    """Whether pytest may collect the file `path`: no folder on its way is one pytest skips
    by default, and every pytest configuration at the root can be read and lets it in (under
    one of its `testpaths`, under none of its `norecursedirs`, named by its `python_files`,
    not left out by an `--ignore` or `--deselect` of its `addopts`)."""
    parts = path.split("/")
    folders = ["/".join(parts[: i + 1]) for i in range(len(parts) - 1)]
    if any(_skipped(folder, DEFAULT_NORECURSE) for folder in folders):
        return False
    sections = _sections(trees, side)
    if sections is None:
        return False
    for section in sections:
        testpaths = section.get("testpaths")
        if testpaths is not None and not any(_under(path, p) for p in testpaths):
            return False
        norecurse = section.get("norecursedirs", [])
        if any(_skipped(folder, norecurse) for folder in folders):
            return False
        names = section.get("python_files")
        if names is not None and not any(
            fnmatchcase(path if "/" in n else parts[-1], n) for n in names
        ):
            return False
        if any(option.startswith(_BY_PATH) for option in section.get("addopts", [])):
            return False
    return True


def readable(trees: TreeView, side: Side) -> bool:
    """Whether every pytest configuration at the root of `side` can be read."""
    return _sections(trees, side) is not None


def _skipped(folder: str, patterns: tuple[str, ...] | list[str]) -> bool:
    name = posixpath.basename(folder)
    return name == _ARCH or any(
        fnmatchcase(f"/{folder}", f"*/{p.strip('/')}") if "/" in p else fnmatchcase(name, p)
        for p in patterns
    )


def _under(path: str, testpath: str) -> bool:
    """Whether `path` is `testpath` or lies under it (a glob, component by component)."""
    pattern = posixpath.normpath(testpath).split("/")
    if pattern == ["."]:
        return True
    parts = path.split("/")
    if len(pattern) > len(parts) or any(p in ("..", "**") or not p for p in pattern):
        return False
    return all(fnmatchcase(part, p) for part, p in zip(parts, pattern, strict=False))


def _sections(trees: TreeView, side: Side) -> list[Settings] | None:
    """The pytest sections of the root's configuration files; None when one of them cannot
    be read."""
    found: list[Settings] = []
    for name in _INI_FILES:
        text = trees.text(side, name)
        if text is None:
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except (configparser.Error, ValueError):
            return None
        for section in _INI_SECTIONS:
            if parser.has_section(section):
                values = _values(dict(parser.items(section)))
                if values is None:
                    return None
                found.append(values)
    for name in _TOML_FILES:
        text = trees.text(side, name)
        if text is None:
            continue
        try:
            document = tomllib.loads(text)
            owner = document.get("tool", {}) if name == "pyproject.toml" else document
            table = owner.get("pytest")
        except (tomllib.TOMLDecodeError, AttributeError):
            return None
        if table is None:
            continue
        if not isinstance(table, dict):
            return None
        tables = [table]
        if "ini_options" in table:
            tables.append(table["ini_options"])
        for each in tables:
            values = _values(each) if isinstance(each, dict) else None
            if values is None:
                return None
            found.append(values)
    return found


def _values(table: Mapping[str, object]) -> Settings | None:
    """The settings read here, each as a list of strings (`args` as pytest splits them)."""
    values: dict[str, list[str]] = {}
    for key in _KEYS:
        value = table.get(key)
        if value is None:
            continue
        try:
            if isinstance(value, str):
                values[key] = shlex.split(value)
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                values[key] = [str(v) for v in value]
            else:
                return None
        except ValueError:
            return None
    return values
