"""Real git repositories for the workspace tests (the guards suite's `GitRepo`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guards.conftest import GitRepo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    home = tmp_path / "home"
    home.mkdir()
    return GitRepo(tmp_path / "repo", home)
