"""Which programs a caged run finds: the sandbox's PATH and the host folders bound for it.

A PATH entry outside the system folders is bound read-only as itself, or, when it is a
virtualenv's `bin`, as the whole virtualenv and the Python installation it was made from;
never a home directory or `/` as a whole. The Python running ourobot (its virtualenv and the
installation behind it) is always there: the toolchain a Python project's tests most likely
need.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.workspace.cage.mounts import SYSTEM_DIRS

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Toolchain:
    """The sandbox's PATH and the folders bound read-only for it."""

    path: str
    binds: tuple[Path, ...]

    @classmethod
    def resolve(cls, path: str | None, extra: Iterable[Path] = ()) -> Toolchain:
        entries, binds = _toolchain(path, extra)
        return cls(entries, tuple(binds))

    @classmethod
    def for_host(cls) -> Toolchain:
        """This machine's: the harness's PATH and Python."""
        return cls.resolve(os.environ.get("PATH"), python_toolchains())


def python_toolchains() -> list[Path]:
    """The Python running ourobot (its venv and the installation behind it)."""
    return [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}]


def _toolchain(path: str | None, extra: Iterable[Path]) -> tuple[str, list[Path]]:
    home = Path(os.path.expanduser("~")).resolve()
    binds: list[Path] = []
    entries: list[str] = []

    def bind(directory: Path) -> bool:
        real = directory.resolve()
        if real == Path("/") or real == home or home.is_relative_to(real):
            return False
        if not in_system(real) and not any(real.is_relative_to(b) for b in binds):
            binds.append(real)
        return True

    for tool in extra:
        if tool.is_dir():
            bind(tool)
            for prefix in _venv_home(tool):
                bind(prefix)
    for entry in (path or DEFAULT_PATH).split(os.pathsep):
        directory = Path(entry)
        if not directory.is_absolute() or not directory.is_dir():
            continue
        venv = directory.parent
        if (venv / "pyvenv.cfg").is_file():
            if bind(venv):
                entries.append(entry)
            for prefix in _venv_home(venv):
                bind(prefix)
        elif in_system(directory.resolve()) or bind(directory):
            entries.append(entry)
    return os.pathsep.join(dict.fromkeys(entries)) or DEFAULT_PATH, binds


def in_system(path: Path) -> bool:
    return any(path.is_relative_to(Path(p).resolve()) for p in SYSTEM_DIRS if os.path.isdir(p))


def _venv_home(venv: Path) -> list[Path]:
    """The Python installation a virtualenv was made from (`home = .../bin` in pyvenv.cfg)."""
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            return [home.parent if home.name == "bin" else home]
    return []
