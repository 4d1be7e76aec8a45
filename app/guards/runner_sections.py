"""Which sections of a project file shared with other tools a change touched, and whether one of
them configures the test run.

`pyproject.toml`, `setup.cfg` and `tox.ini` hold the runner's settings beside a project's
version, dependencies and linters. A version bump is not runner configuration; `addopts = -p
no:randomly` is. Both sides are parsed (`tomllib`, `configparser`) and compared section by
section, so what decides is what the tools read, not which lines moved: a comment or a
reordering changes nothing. A side that does not parse cannot be judged by section: the change
counts (fail closed).

The runner sections: pytest's (`[tool.pytest]` and `[tool.pytest.ini_options]`, `[pytest]`,
`[tool:pytest]`), tox's (`[tool.tox]`, `[tox]`, `[tox:*]`, `[testenv]`, `[testenv:*]`), hatch's
environments (`[tool.hatch.envs.*]`, where `hatch test` and its scripts are defined) and
coverage's (`[tool.coverage.*]`, `[coverage:*]`: its `fail_under` fails a run that passed).
In an INI file, `[DEFAULT]` is read into every section, so a change there reaches them too.
tox's and hatch's sections decide a run only when the test command goes through tox or hatch
(or through a recipe or script that might): a project testing with `python -m pytest` may
change its tox environments like any other tool's settings.
"""

from __future__ import annotations

import configparser
import fnmatch
import shlex
import tomllib
from typing import Any

# Tables of pyproject.toml, as key paths under its root, each with the environment manager
# that reads it (None: whatever runs the tests reads it).
_TOML_TABLES: tuple[tuple[tuple[str, ...], str | None], ...] = (
    (("tool", "pytest"), None),
    (("tool", "tox"), "tox"),
    (("tool", "hatch", "envs"), "hatch"),
    (("tool", "coverage"), None),
)
# Sections of setup.cfg and tox.ini (fnmatch patterns, case-sensitive as the tools read them).
_INI_SECTIONS: tuple[tuple[str, str | None], ...] = (
    ("pytest", None), ("tool:pytest", None), ("coverage:*", None),
    ("tox", "tox"), ("tox:*", "tox"), ("testenv", "tox"), ("testenv:*", "tox"),
)  # fmt: skip
MANAGERS = frozenset({"tox", "hatch"})
# Programs that hand the run to something this module cannot read (a recipe, a script): the
# managers' sections may decide it, so they count.
_OPAQUE = frozenset({"make", "gmake", "just", "sh", "bash", "nox", "invoke", "npm", "poetry"})
FILES = ("pyproject.toml", "setup.cfg", "tox.ini")
# A parser's complaint can quote the file: this much of it is shown.
_SHOWN = 160


class Unparsable(ValueError):
    """A side of the file that its tools could not read either."""


def managers_run(test_command: str) -> frozenset[str]:
    """The environment managers (`MANAGERS`) the test command may go through: those it names,
    or all of them when it hands the run to a recipe or a script."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    names = {word.rsplit("/", 1)[-1] for word in words}
    if names & _OPAQUE or any(name.endswith((".sh", ".py")) for name in names):
        return MANAGERS
    return frozenset(names & MANAGERS)


def runner_change(
    name: str, base: str | None, head: str | None, managers: frozenset[str] = MANAGERS
) -> str | None:
    """Why the change of the project file `name` (`FILES`; each side's text, None when absent)
    changes how the test run is configured, or None when it leaves the runner sections alone.
    The sections of an environment manager count only when the test run goes through it
    (`managers`, from `managers_run`): `python -m pytest` never reads `[testenv]`."""
    read = _toml if name.casefold() == "pyproject.toml" else _ini
    try:
        old, new = (read(text, managers) for text in (base, head))
    except Unparsable as exc:
        return f"{name} does not parse ({exc}), so it cannot be read section by section"
    names = dict.fromkeys([*old, *new])
    changed = [section for section in names if old.get(section) != new.get(section)]
    if not changed:
        return None
    shown = ", ".join(f"[{section}]" for section in changed[:3])
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    return f"{name}: {shown}{more} changed, where the test runner's configuration is read"


def _toml(text: str | None, managers: frozenset[str]) -> dict[str, Any]:
    """The runner tables a pyproject.toml holds, by dotted name: one per sub-table, so that a
    change names `[tool.coverage.report]` rather than all of coverage."""
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        raise Unparsable(str(exc)[:_SHOWN]) from exc
    found: dict[str, Any] = {}
    for path, manager in _TOML_TABLES:
        if manager is not None and manager not in managers:
            continue
        table = _lookup(data, path)
        if table is None:
            continue
        name = ".".join(path)
        if not isinstance(table, dict):
            found[name] = table
            continue
        plain = {key: value for key, value in table.items() if not isinstance(value, dict)}
        if plain:
            found[name] = plain
        found.update(
            (f"{name}.{key}", value) for key, value in table.items() if isinstance(value, dict)
        )
    return found


def _lookup(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    table: Any = data
    for key in path:
        table = table.get(key) if isinstance(table, dict) else None
    return table


def _ini(text: str | None, managers: frozenset[str]) -> dict[str, Any]:
    """The runner sections of an INI file, each as the values its tools read (`[DEFAULT]`'s
    included, interpolation left alone). Duplicate sections or keys do not parse, as for tox."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # `Addopts` is not `addopts` to pytest
    try:
        parser.read_string(text or "")
    except configparser.Error as exc:
        first = exc.message.splitlines()[0] if exc.message else type(exc).__name__
        raise Unparsable(first[:_SHOWN]) from exc
    return {
        section: dict(parser.items(section, raw=True))
        for section in parser.sections()
        if any(
            fnmatch.fnmatchcase(section, pattern) and (manager is None or manager in managers)
            for pattern, manager in _INI_SECTIONS
        )
    }
