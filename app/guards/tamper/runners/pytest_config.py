"""Whether pytest, run from the root of the repository, may collect a file: its default
`norecursedirs` and what the root's pytest configuration says about folders and file names.

Used by `exemptions.twins` to trust only a twin that pytest runs. Strict rather than exact:
every configuration file at the root that has a pytest section is read, not only the one
pytest would pick, and the default folders pytest skips are skipped even when a configuration
replaces them. A configuration that cannot be read trusts no file.
"""

from __future__ import annotations

import configparser
import posixpath
import re
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
# The order in which pytest looks for its configuration file in a folder; the first four are
# read whenever they are there, the others only when they have a pytest section.
_PYTEST_ORDER = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
_ALWAYS_READ = _PYTEST_ORDER[:4]
_INI_SECTIONS = ("pytest", "tool:pytest")
_KEYS = ("testpaths", "norecursedirs", "python_files", "addopts")
# Options in `addopts` that leave files or tests out by path.
_BY_PATH = ("--ignore", "--ignore-glob", "--deselect")
# pytest's short options (and common plugins') that take the next word as their value.
_SHORT_WITH_VALUE = frozenset({"-k", "-m", "-p", "-c", "-o", "-n", "-W"})
# A word of `addopts` that may be a path pytest is given (no git pathspec magic, no glob).
_PLAIN_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*")
# pytest's default `python_files`.
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
# pytest's own `--doctest-glob`: text files it runs as doctests when none is given.
DEFAULT_DOCTEST_GLOB = "test*.txt"

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


def sections(trees: TreeView, side: Side) -> list[Settings] | None:
    """The pytest sections of the configuration file pytest reads at the root, for
    `reaches`; None when it cannot be read."""
    return _chosen(trees, side)


def reaches(found: list[Settings] | None, path: str, *, every: bool, python: bool = True) -> bool:
    """Whether pytest, run from the root with the `sections` `found`, reaches the file
    `path`: under `testpaths`, under none of `norecursedirs` (pytest's defaults where a
    section sets none), named by `python_files` (pytest's default where a section sets none;
    only when `python`: a module collected for its tests, not for its doctests), under no
    `--ignore` or `--ignore-glob` of `addopts`. Unlike `may_collect`, an option leaves out
    only what it names. `every`: each section lets it in (what surely runs; a configuration
    that cannot be read lets nothing in); else some section does (what may have run; one
    that cannot be read, everything)."""
    if found is None:
        return not every
    verdicts = [_lets_in(section, path, python=python) for section in found or [{}]]
    return all(verdicts) if every else any(verdicts)


def doctest_options(found: list[Settings] | None) -> tuple[bool, list[str]]:
    """Whether some section's `addopts` collects doctests from modules (`--doctest-modules`),
    and the globs of the text files run as doctests (pytest's default `test*.txt` and any
    `--doctest-glob`); a configuration that cannot be read may do both, on any file."""
    if found is None:
        return True, ["*"]
    options = [option for section in found for option in section.get("addopts", [])]
    globs = [DEFAULT_DOCTEST_GLOB, *_arguments(options, ("--doctest-glob",))]
    return "--doctest-modules" in options, globs


def _lets_in(section: Settings, path: str, *, python: bool) -> bool:
    parts = path.split("/")
    folders = ["/".join(parts[: i + 1]) for i in range(len(parts) - 1)]
    norecurse = section.get("norecursedirs", list(DEFAULT_NORECURSE))
    if any(_skipped(folder, norecurse) for folder in folders):
        return False
    for given in ("testpaths", "args"):
        paths = section.get(given)
        if paths is not None and not any(_under(path, p) for p in paths):
            return False
    names = section.get("python_files", list(DEFAULT_PYTHON_FILES))
    if python and not any(_named(path, name) for name in names):
        return False
    addopts = section.get("addopts", [])
    if any(_under(path, target) for target in _arguments(addopts, ("--ignore",))):
        return False
    # pytest matches `--ignore-glob` against the path made absolute, the glob too.
    return not any(fnmatchcase(path, g) for g in _arguments(addopts, ("--ignore-glob",)))


def _named(path: str, pattern: str) -> bool:
    """Whether `python_files`' `pattern` names the file: its name, or its path for a pattern
    with a folder in it."""
    return fnmatchcase(path if "/" in pattern else path.rsplit("/", 1)[-1], pattern)


def _arguments(options: list[str], names: tuple[str, ...]) -> list[str]:
    """The values given to the options `names` (`--ignore=docs`, `--ignore docs`)."""
    found: list[str] = []
    for index, option in enumerate(options):
        name, equals, value = option.partition("=")
        if name not in names:
            continue
        if equals:
            found.append(value)
        elif index + 1 < len(options):
            found.append(options[index + 1])
    return found


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
    for name in (*_INI_FILES, *_TOML_FILES):
        text = trees.text(side, name)
        each = _file_sections(name, text) if text is not None else []
        if each is None:
            return None
        found.extend(each)
    return found


def _chosen(trees: TreeView, side: Side) -> list[Settings] | None:
    """The pytest sections of the one configuration file pytest reads at the root: the first,
    in pytest's order, that has a pytest section (`pytest.ini`, `pytest.toml` and their dotted
    names even without one); none when no file has. None when it, or a file before it,
    cannot be read."""
    for name in _PYTEST_ORDER:
        text = trees.text(side, name)
        found = _file_sections(name, text) if text is not None else []
        if found is None:
            return None
        if found or (text is not None and name in _ALWAYS_READ):
            return [_with_paths(trees, side, section) for section in found or [{}]]
    return []


def _with_paths(trees: TreeView, side: Side, section: Settings) -> Settings:
    """The section with the paths its `addopts` gives pytest to collect (`addopts = -q
    tests/unit`), as `args`: pytest then collects those alone, as it would `testpaths`. A
    word is such a path when the tree has a file or folder there and it is no option's value:
    not after a long option without `=` (`--cov src`) nor after a short option that takes
    one (`-p xdist`)."""
    options = section.get("addopts", [])
    paths: list[str] = []
    for index, word in enumerate(options):
        path = posixpath.normpath(word)
        if (
            word.startswith("-")
            or (index and _takes_value(options[index - 1]))
            or not _PLAIN_PATH.fullmatch(path)
            or ".." in path.split("/")
        ):
            continue
        if path == "." or trees.text(side, path) is not None or trees.listing(side, path):
            paths.append(path)
    return {**section, "args": paths} if paths else section


def _takes_value(option: str) -> bool:
    return (option.startswith("--") and "=" not in option) or option in _SHORT_WITH_VALUE


def _file_sections(name: str, text: str) -> list[Settings] | None:
    """The pytest sections of one configuration file; None when it cannot be read."""
    if name in _INI_FILES:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except (configparser.Error, ValueError):
            return None
        found: list[Settings] = []
        for section in _INI_SECTIONS:
            if parser.has_section(section):
                settings = _values(dict(parser.items(section)))
                if settings is None:
                    return None
                found.append(settings)
        return found
    try:
        document = tomllib.loads(text)
        owner = document.get("tool", {}) if name == "pyproject.toml" else document
        table = owner.get("pytest")
    except (tomllib.TOMLDecodeError, AttributeError):
        return None
    if table is None:
        return []
    if not isinstance(table, dict):
        return None
    # `[tool.pytest]` holding only `[tool.pytest.ini_options]` is no section of its own.
    tables = [table] if set(table) - {"ini_options"} else []
    if "ini_options" in table:
        tables.append(table["ini_options"])
    read: list[Settings] = []
    for each in tables:
        settings = _values(each) if isinstance(each, dict) else None
        if settings is None:
            return None
        read.append(settings)
    return read


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
