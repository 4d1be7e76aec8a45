"""`test-tamper` and skip markers given a name of the module's own (`slow =
pytest.mark.skip(...)`, then `@slow`): the decorator is read as the marker it names. Before, a
red test silenced this way was not reported at all."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

BASE = "import sys\n\nimport pytest\n\n\ndef test_red():\n    assert compute() == 2\n"


def _named(assignment: str) -> str:
    return BASE.replace("\n\ndef test_red", f"\n{assignment}\n\n\n@named\ndef test_red")


@pytest.mark.parametrize(
    "assignment",
    [
        "named = pytest.mark.skip(reason='slow')",
        "named = pytest.mark.xfail",
        # Spread over lines, as werkzeug's `require_watchdog = pytest.mark.skipif(` is.
        "named = pytest.mark.skipif(\n    sys.version_info >= (3, 12),\n    reason='later',\n)",
    ],
)
def test_a_named_skip_put_on_an_existing_test_is_reported(repo: GitRepo, assignment: str):
    found = tamper(
        repo, {"tests/test_x.py": BASE}, lambda r: r.write("tests/test_x.py", _named(assignment))
    )
    assert [f for f in found if f.endswith("skip marker added to a test")], found


def test_a_named_skip_only_on_windows_passes(repo: GitRepo):
    head = _named("named = pytest.mark.skipif(sys.platform == 'win32', reason='posix only')")
    assert tamper(repo, {"tests/test_x.py": BASE}, lambda r: r.write("tests/test_x.py", head)) == []


def test_a_marker_name_bound_again_is_a_skip_that_may_hold(repo: GitRepo):
    """`named` is rebound below: which marker applies cannot be told, so it is taken to be a
    skip whose condition may hold."""
    head = _named("named = pytest.mark.skipif(sys.platform == 'win32', reason='w')")
    head += "\nnamed = pytest.mark.skip\n"
    found = tamper(repo, {"tests/test_x.py": BASE}, lambda r: r.write("tests/test_x.py", head))
    assert [f for f in found if f.endswith("skip marker added to a test")], found
