"""Which programs a caged run finds: the sandbox's PATH and the host folders bound for it.

A PATH entry outside the system folders is bound read-only as itself, or, when it is a
virtualenv's `bin`, as the whole virtualenv and the Python installation it was made from;
never a home directory or `/` as a whole. The Python running ourobot (its virtualenv and the
installation behind it) is always there: the toolchain a Python project's tests most likely
need.

A version manager's shims (pyenv, asdf, mise, rbenv, nodenv, goenv, jenv, volta) are scripts
that need the manager's own files, which the sandbox does not have: inside, `python3` would
exit 127. So a shim folder on PATH is replaced by the folders of the real programs the manager
resolves its common shims to (`<manager> which python3`, asked in the repository's folder so
its `.python-version` or `.tool-versions` counts). A repository may instead name the folders
itself (`toolchain_path`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.workspace.cage.mounts import SYSTEM_DIRS

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# A shim folder's path ends so -> the manager that owns it.
SHIM_FOLDERS = {
    ".pyenv/shims": "pyenv",
    "pyenv-virtualenv/shims": "pyenv",
    ".asdf/shims": "asdf",
    "mise/shims": "mise",
    ".rbenv/shims": "rbenv",
    ".nodenv/shims": "nodenv",
    ".goenv/shims": "goenv",
    ".jenv/shims": "jenv",
    ".volta/bin": "volta",
}
# Managers that print the prefix of each version in force in one call.
PREFIX_MANAGERS = ("pyenv", "rbenv", "nodenv", "goenv", "jenv")
# The shims worth resolving: each brings its whole real folder (pytest beside python3).
COMMON_TOOLS = (
    "python3", "python", "pip3", "pip", "node", "npm", "npx", "yarn", "pnpm", "ruby", "gem",
    "bundle", "rake", "go", "java", "javac", "mvn", "gradle", "cargo", "rustc", "php", "perl",
)  # fmt: skip
_WHICH_TIMEOUT_S = 10.0


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
    def for_host(cls, project: Path | None = None) -> Toolchain:
        """This machine's: the harness's PATH (shims resolved, in `project` when given) and
        Python."""
        path = resolve_shims(os.environ.get("PATH") or DEFAULT_PATH, project)
        return cls.resolve(path, python_toolchains())

    @classmethod
    def named(cls, folders: Iterable[str]) -> Toolchain:
        """Exactly the folders a repository names (`toolchain_path`), then the system's."""
        return cls.resolve(os.pathsep.join([*folders, DEFAULT_PATH]))


def shim_manager(entry: str) -> str | None:
    """The version manager whose shim folder `entry` is, or None."""
    normalized = entry.rstrip("/")
    return next((m for end, m in SHIM_FOLDERS.items() if normalized.endswith("/" + end)), None)


@cache
def resolve_shims(path: str, project: Path | None = None) -> str:
    """`path` with every shim folder replaced by the folders its common tools resolve to
    (left out when nothing resolves: a shim that cannot run inside is worse than none)."""
    entries: list[str] = []
    for entry in path.split(os.pathsep):
        manager = shim_manager(entry)
        if manager is None or not os.path.isdir(entry):
            entries.append(entry)
            continue
        entries += _resolved(manager, Path(entry), project)
    return os.pathsep.join(dict.fromkeys(e for e in entries if e))


def _resolved(manager: str, shims: Path, project: Path | None) -> list[str]:
    executable = shutil.which(manager) or _beside(shims, manager)
    if executable is None:
        return []
    if manager in PREFIX_MANAGERS:
        # One call: the prefix of each version in force (`pyenv prefix` prints them all).
        prefixes = _ask(executable, ["prefix"], project)
        return [str(Path(p) / "bin") for p in prefixes if (Path(p) / "bin").is_dir()]
    if manager == "mise":
        return [p for p in _ask(executable, ["bin-paths"], project) if Path(p).is_dir()]
    folders: list[str] = []
    for tool in COMMON_TOOLS:
        if not (shims / tool).exists():
            continue
        found = _ask(executable, ["which", tool], project)
        real = Path(found[-1]) if found else None
        if real is not None and real.is_absolute() and real.exists():
            folders.append(str(real.parent))
    return list(dict.fromkeys(folders))


def _ask(executable: str, args: list[str], project: Path | None) -> list[str]:
    """The lines a manager printed (the `:`-separated parts of each), or [] when it failed."""
    try:
        proc = subprocess.run(
            [executable, *args], capture_output=True, text=True, timeout=_WHICH_TIMEOUT_S,
            check=False, cwd=project or None,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    return [part for line in proc.stdout.splitlines() for part in line.split(":") if part]


def _beside(shims: Path, manager: str) -> str | None:
    """The manager's own program in its root (`~/.pyenv/bin/pyenv`, `~/.volta/bin/volta`)."""
    for candidate in (shims.parent / "bin" / manager, shims / manager):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def python_toolchains() -> list[Path]:
    """The Python running ourobot (its venv and the installation behind it)."""
    # Ordered (the venv first) so callers and the doctor name the same directory every run.
    return [Path(p) for p in dict.fromkeys((sys.prefix, sys.exec_prefix, sys.base_prefix))]


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
