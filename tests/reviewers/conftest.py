"""Real git repositories for review tests: a base commit on main and changes on a branch."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from app.workspace.git import git


class Repo:
    """A work tree with helpers to write files and commit them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        git(["init", "-q", "-b", "main"], cwd=path)

    def write(self, files: Mapping[str, str | None]) -> None:
        """Write (or, for None, delete) files relative to the repository root."""
        for name, text in files.items():
            target = self.path / name
            if text is None:
                git(["rm", "-q", "--", name], cwd=self.path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def commit(self, files: Mapping[str, str | None], message: str = "change") -> str:
        self.write(files)
        git(["add", "-A"], cwd=self.path)
        git(["commit", "-q", "--allow-empty", "-m", message], cwd=self.path)
        return git(["rev-parse", "HEAD"], cwd=self.path).stdout.strip()

    def branch(self, name: str) -> None:
        git(["checkout", "-q", "-b", name], cwd=self.path)

    def checkout(self, rev: str) -> None:
        git(["checkout", "-q", rev], cwd=self.path)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    path = tmp_path / "repo"
    path.mkdir()
    return Repo(path)
