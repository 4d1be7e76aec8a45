"""bubblewrap for the sandboxed test runner's tests.

Fixtures:
  bwrap   the path of a `bwrap` that can build a sandbox here; the test skips with a one-line
          reason where there is none (a developer's machine without bubblewrap: CI installs it)
  tinyproxy  the path of tinyproxy (the setup phase's filtering proxy), skipping likewise
"""

from __future__ import annotations

import shutil

import pytest

from app.workspace.cage.entry import bwrap_problem, find_bwrap


@pytest.fixture
def bwrap() -> str:
    path = find_bwrap()
    if path is None:
        pytest.skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    problem = bwrap_problem(path)
    if problem is not None:
        pytest.skip(f"bubblewrap cannot build a sandbox here: {problem}")
    return path


@pytest.fixture
def tinyproxy() -> str:
    path = shutil.which("tinyproxy")
    if path is None:
        pytest.skip("tinyproxy is not installed: apt-get install tinyproxy")
    return path
