"""`test-tamper` and a parametrized case's skip mark moved into its test's body: werkzeug's
"upgrade watchdog" turned `pytest.param("watchdog", marks=[require_watchdog])` into the plain
case `"watchdog"` and put `if reloader_type == "watchdog": pytest.importorskip("watchdog")` in
the test. The skip applies to the very case the mark skipped: a rewording. A skip that reaches
further (the whole test, another case, another test), or that replaces a mark that never
skipped on Linux, is still reported."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, tamper

BASE = """\
import sys

import pytest

require_watchdog = pytest.mark.skipif(
    "watchdog" not in sys.modules, reason="watchdog not installed"
)


@pytest.mark.parametrize(
    "reloader_type", ["stat", pytest.param("watchdog", marks=[require_watchdog])]
)
def test_reloader(reloader_type):
    assert reload(reloader_type)


def test_other():
    assert other()
"""
PLAIN = """\
@pytest.mark.parametrize("reloader_type", ["stat", "watchdog"])
def test_reloader(reloader_type):
"""
HEAD = """\
import sys

import pytest


@pytest.mark.parametrize("reloader_type", ["stat", "watchdog"])
def test_reloader(reloader_type):
    if reloader_type == "watchdog":
        pytest.importorskip("watchdog")

    assert reload(reloader_type)


def test_other():
    assert other()
"""


def check(base: str, head: str, repo: GitRepo) -> list[str]:
    return tamper(repo, {"tests/test_x.py": base}, lambda r: r.write("tests/test_x.py", head))


def test_a_case_mark_moved_into_the_body_under_its_case_passes(repo: GitRepo):
    assert check(BASE, HEAD, repo) == []


def test_a_case_mark_written_in_place_moved_into_the_body_passes(repo: GitRepo):
    """The mark written in the case, the guard written the other way round."""
    base = BASE.replace("marks=[require_watchdog]", "marks=pytest.mark.skip(reason='later')")
    head = HEAD.replace('if reloader_type == "watchdog"', 'if "watchdog" == reloader_type')
    assert check(base, head, repo) == []


def test_the_skip_made_unconditional_skips_every_case(repo: GitRepo):
    """The mark skipped one case; the body skip skips `stat` too, which ran."""
    head = HEAD.replace('    if reloader_type == "watchdog":\n        pytest', "    pytest")
    assert check(BASE, head, repo) == ["tests/test_x.py:8 skip marker added inside a test"]


def test_the_skip_guarded_on_another_case_is_reported(repo: GitRepo):
    head = HEAD.replace('reloader_type == "watchdog"', 'reloader_type == "stat"')
    assert check(BASE, head, repo) == ["tests/test_x.py:9 skip marker added inside a test"]


def test_the_case_mark_removed_from_one_test_pays_nothing_in_another(repo: GitRepo):
    """The mark comes off `test_reloader`, the skip goes into `test_other` (guarded on a name
    it does not have: the guard proves nothing there)."""
    head = HEAD.replace(
        '    if reloader_type == "watchdog":\n        pytest.importorskip("watchdog")\n\n', ""
    ).replace(
        "def test_other():\n",
        'def test_other():\n    pytest.importorskip("watchdog")\n',
    )
    assert check(BASE, head, repo) == ["tests/test_x.py:12 skip marker added inside a test"]


def test_a_case_guard_in_another_parametrized_test_is_reported(repo: GitRepo):
    """Both tests take `reloader_type`; the mark leaves one and the guarded skip goes into the
    other, whose `watchdog` case ran."""
    other = (
        '@pytest.mark.parametrize("reloader_type", ["stat", "watchdog"])\n'
        "def test_other(reloader_type):\n"
    )
    base = BASE.replace("def test_other():\n", other)
    head = HEAD.replace(
        '    if reloader_type == "watchdog":\n        pytest.importorskip("watchdog")\n\n', ""
    ).replace(
        "def test_other():\n",
        other + '    if reloader_type == "watchdog":\n        pytest.importorskip("watchdog")\n',
    )
    assert check(base, head, repo) == ["tests/test_x.py:14 skip marker added inside a test"]


def test_a_case_mark_that_never_skipped_on_linux_pays_nothing(repo: GitRepo):
    """The named mark skipped only on Windows: on Linux the case ran, and now it is skipped."""
    base = BASE.replace('"watchdog" not in sys.modules', 'sys.platform == "win32"')
    assert check(base, HEAD, repo) == ["tests/test_x.py:9 skip marker added inside a test"]


def test_the_skip_in_the_guards_else_branch_is_reported(repo: GitRepo):
    """Under `else` the skip reaches every case but the one the mark skipped."""
    head = HEAD.replace(
        '    if reloader_type == "watchdog":\n',
        '    if reloader_type == "watchdog":\n        pass\n    else:\n',
    )
    assert check(BASE, head, repo) == ["tests/test_x.py:11 skip marker added inside a test"]


def test_an_unmarked_case_equal_to_the_marked_one_is_reported(repo: GitRepo):
    """`1 == True`: the guard also holds for the unmarked case `1`, which ran."""
    base = BASE.replace('["stat", pytest.param("watchdog",', "[1, pytest.param(True,")
    head = HEAD.replace('["stat", "watchdog"]', "[1, True]").replace(
        'if reloader_type == "watchdog"', "if reloader_type == True"
    )
    assert check(base, head, repo) == ["tests/test_x.py:9 skip marker added inside a test"]


def test_a_case_mark_whose_name_is_bound_twice_pays_nothing(repo: GitRepo):
    """Which mark the name held where the case used it cannot be told: it may be no skip."""
    base = BASE.replace("\n\n@pytest", "require_watchdog = pytest.mark.slow\n\n\n@pytest", 1)
    assert check(base, HEAD, repo) == ["tests/test_x.py:9 skip marker added inside a test"]


def test_the_guard_name_rebound_in_the_test_is_reported(repo: GitRepo):
    """`reloader_type` set to the skipped case's value before the guard: every case skips."""
    head = HEAD.replace(
        '    if reloader_type == "watchdog":',
        '    reloader_type = "watchdog"\n    if reloader_type == "watchdog":',
    )
    assert check(BASE, head, repo) == ["tests/test_x.py:10 skip marker added inside a test"]


def test_an_indirect_parameter_is_not_the_case_value(repo: GitRepo):
    """With `indirect=True` the test gets what a fixture makes of the value, not the value."""
    head = HEAD.replace('["stat", "watchdog"])', '["stat", "watchdog"], indirect=True)')
    assert check(BASE, head, repo) == ["tests/test_x.py:9 skip marker added inside a test"]


def test_a_case_mark_that_stays_pays_nothing(repo: GitRepo):
    """The mark is still on the case: the body skip is a second, new skip."""
    head = BASE.replace(
        "def test_reloader(reloader_type):\n",
        'def test_reloader(reloader_type):\n    if reloader_type == "watchdog":\n'
        '        pytest.importorskip("watchdog")\n',
    )
    found = check(BASE, head, repo)
    assert [f for f in found if f.endswith("skip marker added inside a test")], found


# -- a named marker on the test itself: the decorator form -------------------------------------

DECORATED = """\
import sys

import pytest

require_watchdog = pytest.mark.skipif(
    "watchdog" not in sys.modules, reason="watchdog not installed"
)


@require_watchdog
def test_ignores_opened():
    assert opened()


def test_other():
    assert other()
"""


def test_a_named_marker_taken_off_a_test_pays_for_a_skip_inside_it(repo: GitRepo):
    head = DECORATED.replace("@require_watchdog\n", "").replace(
        "def test_ignores_opened():\n",
        'def test_ignores_opened():\n    pytest.importorskip("watchdog")\n',
    )
    assert check(DECORATED, head, repo) == []


def test_a_named_marker_taken_off_one_test_pays_nothing_in_another(repo: GitRepo):
    head = DECORATED.replace("@require_watchdog\n", "").replace(
        "def test_other():\n",
        'def test_other():\n    pytest.importorskip("watchdog")\n',
    )
    assert check(DECORATED, head, repo) == ["tests/test_x.py:15 skip marker added inside a test"]


def test_a_platform_only_named_marker_made_unconditional_is_reported(repo: GitRepo):
    base = DECORATED.replace('"watchdog" not in sys.modules', 'sys.platform == "win32"')
    head = base.replace("@require_watchdog\n", "").replace(
        "def test_ignores_opened():\n",
        'def test_ignores_opened():\n    pytest.skip("flaky")\n',
    )
    assert check(base, head, repo) == ["tests/test_x.py:11 skip marker added inside a test"]
