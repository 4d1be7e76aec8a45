"""Worktree hygiene: what a test run leaves behind is removed before anything is staged.

`git add -A` cannot tell code from the `__pycache__` a test run just wrote, and bytecode swept
into a commit once made a reviewer reject a good change. So the test artifacts `git add -A`
would stage are deleted from the worktree before every staging. This is hygiene, not policy:
the repository's `.gitignore` is never touched, and nothing the repository tracks is ever
removed (a project that commits a `.coverage` file keeps it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from app.workspace.tree_files import remove_beneath

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


def strip_test_artifacts(root: Path, untracked: Iterable[str]) -> list[str]:
    """Delete the test artifacts among `untracked` (what `git add -A` would stage that git
    does not track: `git ls-files --others --exclude-standard`); the removed paths, relative to
    `root`. An artifact directory goes whole; a symlink is removed as a link, never followed."""
    removed: list[str] = []
    for path in untracked:
        parts = path.split("/")
        target = next(
            (
                end
                for end in range(1, len(parts))
                if is_artifact_name(parts[end - 1], directory=True)
            ),
            None,
        )
        if target is not None:
            folder = "/".join(parts[:target])
            if folder in removed:
                continue
            remove_beneath(root, folder)
            removed.append(folder)
        elif is_artifact_name(parts[-1], directory=False):
            remove_beneath(root, path)
            removed.append(path)
    return sorted(removed)
