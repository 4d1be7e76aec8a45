"""Worktree hygiene: what a test run leaves behind is removed before anything is staged.

`git add -A` cannot tell code from the `__pycache__` a test run just wrote, and bytecode swept
into a commit once made a reviewer reject a good change. So test artifacts are deleted from the
worktree before every staging. This is hygiene, not policy: the repository's `.gitignore` is
never touched, and nothing the repository tracks is ever removed (a project that commits a
`.coverage` file keeps it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection
from pathlib import Path

# Directories only test runs, type checkers and linters create.
ARTIFACT_DIRS = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".nyc_output",
    }
)
ARTIFACT_SUFFIXES = (".pyc", ".pyo")
ARTIFACT_FILES = frozenset({".coverage"})


def is_artifact_name(name: str, *, directory: bool) -> bool:
    if directory:
        return name in ARTIFACT_DIRS
    return (
        name in ARTIFACT_FILES or name.startswith(".coverage.") or name.endswith(ARTIFACT_SUFFIXES)
    )


def strip_test_artifacts(root: Path, tracked: Collection[str]) -> list[str]:
    """Delete untracked test artifacts under `root`; the removed paths, relative to `root`.

    `tracked` is every path git tracks there. Symlinks are never followed: an artifact-named
    link is removed as a link, and nothing outside the worktree is reached.
    """
    tracked_dirs = {parent for path in tracked for parent in _parents(path)}
    removed: list[str] = []
    for current, dirs, files in os.walk(root):
        here = Path(current)
        relative = here.relative_to(root).as_posix()
        if relative == ".":
            dirs[:] = [name for name in dirs if name != ".git"]
            files = [name for name in files if name != ".git"]
        prefix = "" if relative == "." else relative + "/"
        for name in list(dirs):
            path = prefix + name
            if is_artifact_name(name, directory=True) and path not in tracked_dirs:
                target = here / name
                if target.is_symlink():
                    target.unlink()
                else:
                    shutil.rmtree(target, ignore_errors=True)
                removed.append(path)
                dirs.remove(name)
        for name in files:
            path = prefix + name
            if is_artifact_name(name, directory=False) and path not in tracked:
                (here / name).unlink(missing_ok=True)
                removed.append(path)
    return sorted(removed)


def _parents(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: end + 1]) for end in range(len(parts))]
