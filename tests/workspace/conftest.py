"""Fixtures for the workspace tests: the guards-check world the mirror tests fetch from (a
sandbox repository with the App installed, a base branch and pull request heads: its
`make_world` fixture), and real git repositories (the guards suite's `GitRepo`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guards.conftest import GitRepo
from tests.jobs.guards_check.conftest import make_world

__all__ = ["make_world"]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    home = tmp_path / "home"
    home.mkdir()
    return GitRepo(tmp_path / "repo", home)
