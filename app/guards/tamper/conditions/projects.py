"""The project files at the root of a tree (`pyproject.toml`, `setup.cfg`, `setup.py`), where a
Python project declares the Pythons it supports and what it installs for its tests, and the
folders that are projects of their own (a monorepo's packages)."""

from __future__ import annotations

import posixpath
import tomllib
from collections.abc import Collection, Sequence
from typing import Any

from app.guards.changes import FileChange
from app.guards.tamper.test_files import is_test_path
from app.guards.trees import TreeView

PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")


def in_own_projects(files: Sequence[FileChange], trees: TreeView) -> bool:
    """Whether a test file the change touches lies under a folder with a project file of its
    own (a package of a monorepo, at the base or the head): its Pythons are that project's,
    so the root's floor raised (or the root's classifiers, `conditions.classifiers`) say
    nothing of them."""
    folders = {
        posixpath.dirname(path)
        for side in ("base", "head")
        for path in trees.listing(side, ".")
        if posixpath.basename(path) in PROJECT_FILES and "/" in path
    }
    return any(
        path is not None and is_test_path(path) and _under_any(path, folders)
        for change in files
        for path in (change.old_path, change.new_path)
    )


def _under_any(path: str, folders: Collection[str]) -> bool:
    return any(path.startswith(folder + "/") for folder in folders)


def pyproject_tables(text: str | None) -> dict[str, Any] | None:
    """A pyproject.toml's tables; empty for no file, None for one that does not parse (each
    reader decides what an unreadable file means for it, always the stricter reading)."""
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
