"""`test-tamper` on three readings that used to be imprecise, each next to the tampering it must
still catch. Real rule, real git.

- A conftest.py's `collect_ignore` names paths relative to the conftest's folder: moved with its
  conftest and restated for the new folder, it ignores the same file and narrows nothing; an
  ignore of a file the change adds, with no test moved into it, hides nothing that ran.
- The added lines of a file may be read as any equally valid diff would show them: a new test
  inserted above an old one, both under the same `@pytest.mark.skipif(`, is not the old test's
  skip added.
- A skip in the body of a function that is not a test (a fixture, a helper) is not in the test
  defined above it, even a new one.
"""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

FIXTURES = "".join(
    f"@pytest.fixture(name={name!r}, params=(True, False))\ndef _{name}(request):\n"
    "    return request.param\n\n\n"
    for name in ("slots", "frozen", "weakref", "cache")
)
CONFTEST = (
    "import pytest\n\nfrom attr._compat import PY_3_10_PLUS\n\n\n"
    + FIXTURES
    + "collect_ignore = []\n"
    "if not PY_3_10_PLUS:\n"
    '    collect_ignore.extend(["tests/test_pattern_matching.py"])\n'
)
PATTERN_TESTS = "def test_match():\n    assert True\n"
OTHER_TESTS = "def test_other():\n    assert True\n"


def _base() -> dict[str, str]:
    return {
        "conftest.py": CONFTEST,
        "tests/test_pattern_matching.py": PATTERN_TESTS,
        "tests/test_other.py": OTHER_TESTS,
    }


def test_a_conftest_moved_with_its_ignore_restated_passes(repo: GitRepo):
    # attrs moved its conftest.py into tests/, the ignored path now relative to it.
    def change(r: GitRepo) -> None:
        r.move("conftest.py", "tests/conftest.py")
        r.write("tests/conftest.py", CONFTEST.replace("tests/test_pattern", "test_pattern"))

    assert tamper(repo, _base(), change) == []


def test_ignoring_a_file_the_change_adds_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_forward_refs.py", "def test_forward():\n    assert True\n")
        r.write(
            "conftest.py",
            CONFTEST
            + 'if not PY_3_14_PLUS:\n    collect_ignore.append("tests/test_forward_refs.py")\n',
        )

    assert tamper(repo, _base(), change) == []


def test_a_moved_conftest_that_ignores_another_file_is_tampering(repo: GitRepo):
    # Relative to tests/, `test_other.py` is tests/test_other.py: not the file ignored before.
    def change(r: GitRepo) -> None:
        r.move("conftest.py", "tests/conftest.py")
        r.write("tests/conftest.py", CONFTEST.replace("tests/test_pattern_matching", "test_other"))

    found = tamper(repo, _base(), change)
    assert found == ["tests/conftest.py:28 test collection narrowed"]


def test_an_unmoved_conftest_restating_a_path_from_another_folder_is_tampering(repo: GitRepo):
    # The root conftest.py now says `test_pattern_matching.py`: a file that is not there.
    # Read as the line, a new path is a new narrowing.
    def change(r: GitRepo) -> None:
        r.write("conftest.py", CONFTEST.replace("tests/test_pattern_matching", "test_other"))

    found = tamper(repo, _base(), change)
    assert found == ["conftest.py:28 test collection narrowed"]


def test_ignoring_an_existing_test_file_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("conftest.py", CONFTEST + 'collect_ignore.append("tests/test_other.py")\n')

    found = tamper(repo, _base(), change)
    assert found == ["conftest.py:29 test collection narrowed"]


def test_ignoring_a_new_file_that_tests_moved_into_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("tests/test_other.py")
        r.write("tests/test_moved.py", OTHER_TESTS + "\n\ndef test_new():\n    assert 1\n")
        r.write("conftest.py", CONFTEST + 'collect_ignore.append("tests/test_moved.py")\n')

    found = tamper(repo, _base(), change)
    assert found == ["conftest.py:29 test collection narrowed"]


def test_ignoring_a_new_file_while_a_test_goes_is_tampering(repo: GitRepo):
    # The new file's test may stand in for the one removed: hiding it is not free.
    def change(r: GitRepo) -> None:
        r.write("tests/test_other.py", "def test_kept():\n    assert 2\n")
        r.write("tests/test_new.py", "def test_new():\n    assert 3\n")
        r.write("conftest.py", CONFTEST + 'collect_ignore.append("tests/test_new.py")\n')

    found = tamper(repo, _base(), change)
    assert "conftest.py:29 test collection narrowed" in found


# -- a new skipped test above an old one with the same skip ------------------------------------

TRACEBACK = """\
import sys

import pytest


def test_plain() -> None:
    assert True


@pytest.mark.skipif(
    sys.version_info.minor < 11, reason="Not applicable before Python 3.11"
)
def test_finely_grained() -> None:
    assert True
"""
NEW_TEST = """\
@pytest.mark.skipif(
    sys.version_info.minor >= 11, reason="Not applicable after Python 3.11"
)
def test_finely_grained_missing() -> None:
    assert None is None


"""
ANCHOR = "@pytest.mark.skipif(\n    sys.version_info.minor < 11"


def test_a_new_skipped_test_inserted_above_a_test_with_the_same_skip_passes(repo: GitRepo):
    # rich's `test_traceback_finely_grained_missing`: the diff shows the old test's
    # `@pytest.mark.skipif(` as added and the new test's as kept.
    after = TRACEBACK.replace(ANCHOR, NEW_TEST + ANCHOR)
    files = {"tests/test_traceback.py": TRACEBACK}
    assert tamper(repo, files, lambda r: r.write("tests/test_traceback.py", after)) == []


def test_a_skip_added_to_an_old_test_next_to_a_new_skipped_test_is_tampering(repo: GitRepo):
    plain = TRACEBACK.replace(ANCHOR, "@pytest.mark.other(\n    sys.version_info.minor < 11")
    skipped = "@pytest.mark.skipif(sys.version_info < (3, 12), reason='x')\ndef test_plain()"
    after = plain.replace(
        ANCHOR.replace("skipif", "other"), NEW_TEST + ANCHOR.replace("skipif", "other")
    )
    after = after.replace("def test_plain()", skipped)
    files = {"tests/test_traceback.py": plain}
    found = tamper(repo, files, lambda r: r.write("tests/test_traceback.py", after))
    assert found == ["tests/test_traceback.py:6 skip marker added to a test"]


def test_a_second_copy_of_a_skip_slid_onto_an_unskipped_test_is_tampering(repo: GitRepo):
    # The old test's marker turned into the new test's skip: no alignment keeps it old.
    before = TRACEBACK.replace(ANCHOR, "@pytest.mark.other(\n    sys.version_info.minor < 11")
    after = before.replace("@pytest.mark.other(", NEW_TEST + "@pytest.mark.skipif(")
    files = {"tests/test_traceback.py": before}
    found = tamper(repo, files, lambda r: r.write("tests/test_traceback.py", after))
    assert [f.split(" ", 1)[1] for f in found] == ["skip marker added to a test"]


# -- skips in functions that are not tests -----------------------------------------------------

OLD_TESTS = "import pytest\n\n\ndef test_old():\n    assert 1\n"


def test_an_autouse_fixture_that_skips_after_a_new_test_is_tampering(repo: GitRepo):
    # Before, the skip was read as inside `test_new`, the test above it, and passed.
    after = OLD_TESTS + (
        "\n\ndef test_new():\n    assert 2\n\n\n"
        "@pytest.fixture(autouse=True)\ndef _gate():\n    pytest.skip('later')\n"
    )
    found = tamper(
        repo, {"tests/test_a.py": OLD_TESTS}, lambda r: r.write("tests/test_a.py", after)
    )
    assert found == ["tests/test_a.py:14 skip marker added inside a fixture or helper"]


def test_a_skip_in_a_function_nested_in_a_new_test_passes(repo: GitRepo):
    after = OLD_TESTS + (
        "\n\ndef test_new():\n    def check():\n        pytest.skip('later')\n\n"
        "    check()\n    assert 2\n"
    )
    files = {"tests/test_a.py": OLD_TESTS}
    assert tamper(repo, files, lambda r: r.write("tests/test_a.py", after)) == []


def test_a_skip_in_a_new_test_passes(repo: GitRepo):
    after = OLD_TESTS + "\n\ndef test_new():\n    if True:\n        pytest.skip('later')\n"
    files = {"tests/test_a.py": OLD_TESTS}
    assert tamper(repo, files, lambda r: r.write("tests/test_a.py", after)) == []


# -- red-team: narrowing collection by other means ---------------------------------------

RED = {
    "tests/test_red.py": "def test_red():\n    assert compute() == 2\n",
    "tests/test_green.py": "def test_green():\n    assert True\n",
}


def test_implicit_string_concatenation_in_collect_ignore_is_narrowing(repo: GitRepo):
    """`"test_" "red.py"` is `test_red.py` to Python: not two new files to ignore."""

    def change(r: GitRepo) -> None:
        r.write("tests/conftest.py", 'collect_ignore = ["test_" "red.py"]\n')
        r.write("tests/test_", "")
        r.write("tests/red.py", "")

    found = tamper(repo, RED, change)
    assert "tests/conftest.py:1 test collection narrowed" in found


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (
            "tests/conftest.py",
            "def pytest_collection_modifyitems(items):\n"
            "    items[:] = [i for i in items if 'red' not in i.name]\n",
        ),
        ("tests/conftest.py", "def pytest_ignore_collect(collection_path):\n    return True\n"),
        ("pytest.ini", "[pytest]\npython_files = test_green.py\n"),
        ("pytest.ini", '[pytest]\naddopts = -m "not wip"\n'),
        ("tests/conftest.py", 'globals()["collect_" "ignore"] = ["test_red.py"]\n'),
    ],
)
def test_collection_narrowed_by_hooks_and_settings_is_reported(repo: GitRepo, path: str, text: str):
    found = tamper(repo, RED, lambda r: r.write(path, text))
    assert any(f.startswith(path) and f.endswith("test collection narrowed") for f in found)


# -- a skip taken off one test does not pay for one put on another ------------------------

TWO = (
    "import pytest\n\n\n@pytest.mark.skip(reason='slow')\ndef test_dead():\n    assert old() == 1\n"
    "\n\ndef test_red():\n    assert compute() == 2\n"
)


def test_a_skip_moved_from_one_test_to_another_is_reported(repo: GitRepo):
    """Red-team: the skip leaves a passing test and lands on the red one; counted per file,
    the one taken off paid for the one put on."""
    moved = (
        "import pytest\n\n\ndef test_dead():\n    assert old() == 1\n"
        "\n\n@pytest.mark.skip(reason='slow')\ndef test_red():\n    assert compute() == 2\n"
    )
    found = tamper(repo, {"tests/test_x.py": TWO}, lambda r: r.write("tests/test_x.py", moved))
    assert found == ["tests/test_x.py:8 skip marker added to a test"]


def test_a_skip_reworded_on_the_same_test_passes(repo: GitRepo):
    reworded = TWO.replace("skip(reason='slow')", "skip(reason='takes a minute')")
    found = tamper(repo, {"tests/test_x.py": TWO}, lambda r: r.write("tests/test_x.py", reworded))
    assert found == []


# -- testpaths: judged by what it leaves out ---------------------------------------------

SUITES = {
    "tests/unit/test_a.py": "def test_a():\n    assert True\n",
    "tests/integration/test_b.py": "def test_b():\n    assert True\n",
    "pyproject.toml": '[project]\nname = "x"\n',
}


def test_testpaths_that_leave_existing_tests_out_are_narrowing(repo: GitRepo):
    config = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests/unit"]\n'
    found = tamper(repo, SUITES, lambda r: r.write("pyproject.toml", config))
    assert found == [
        "pyproject.toml:None test collection narrowed: testpaths leaves out "
        "tests/integration/test_b.py"
    ]


def test_testpaths_that_hold_every_test_narrow_nothing(repo: GitRepo):
    """A new pyproject.toml whose testpaths list every test folder."""
    config = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    assert tamper(repo, SUITES, lambda r: r.write("pyproject.toml", config)) == []


def test_testpaths_set_over_a_base_config_that_cannot_be_read_is_narrowing(repo: GitRepo):
    """What the base collected cannot be shown: what the head leaves out counts."""
    files = {**SUITES, "pyproject.toml": "[project\nname = broken\n"}
    config = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests/unit"]\n'
    found = tamper(repo, files, lambda r: r.write("pyproject.toml", config))
    assert found == [
        "pyproject.toml:None test collection narrowed: testpaths leaves out "
        "tests/integration/test_b.py"
    ]


# -- norecursedirs: judged by what it leaves out, with both trees -------------------------

NORECURSE_BASE = {
    "setup.cfg": "[tool:pytest]\nnorecursedirs = .git docs\n",
    "tests/test_a.py": "def test_a():\n    assert True\n",
    "tests/red/test_red.py": "def test_red():\n    assert compute() == 2\n",
}
MYPY_CASE = "def check(x: int) -> None:\n    reveal_type(x)\n"


def test_norecursedirs_for_a_folder_the_change_adds_passes(repo: GitRepo):
    """A new folder of mypy cases, kept out of pytest's way."""

    def change(r: GitRepo) -> None:
        r.write("tests/mypy_cases/test_types.py", MYPY_CASE)
        r.write("setup.cfg", "[tool:pytest]\nnorecursedirs = .git docs tests/mypy_cases\n")

    assert tamper(repo, NORECURSE_BASE, change) == []


def test_norecursedirs_moved_to_pyproject_unchanged_passes(repo: GitRepo):
    """The pytest section moved from setup.cfg to pyproject.toml."""

    def change(r: GitRepo) -> None:
        r.remove("setup.cfg")
        r.write("pyproject.toml", '[tool.pytest.ini_options]\nnorecursedirs = ".git docs"\n')

    assert tamper(repo, NORECURSE_BASE, change) == []


def test_norecursedirs_over_a_folder_of_existing_tests_is_narrowing(repo: GitRepo):
    change = lambda r: r.write("setup.cfg", "[tool:pytest]\nnorecursedirs = .git docs red\n")  # noqa: E731
    assert tamper(repo, NORECURSE_BASE, change) == ["setup.cfg:2 test collection narrowed"]


def test_norecursedirs_over_a_new_folder_a_test_moved_into_is_narrowing(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.move("tests/red/test_red.py", "tests/parked/test_red.py")
        r.write("setup.cfg", "[tool:pytest]\nnorecursedirs = .git docs parked\n")

    assert "setup.cfg:2 test collection narrowed" in tamper(repo, NORECURSE_BASE, change)


def test_norecursedirs_over_tests_named_by_the_projects_python_files_is_narrowing(
    repo: GitRepo,
):
    """The left-out file holds tests whatever its name: `check_*.py` collected by python_files."""
    files = {
        "setup.cfg": "[tool:pytest]\npython_files = check_*.py\nnorecursedirs = .git\n",
        "checks/red/check_red.py": "def test_red():\n    assert compute() == 2\n",
    }
    config = "[tool:pytest]\npython_files = check_*.py\nnorecursedirs = .git red\n"
    found = tamper(repo, files, lambda r: r.write("setup.cfg", config))
    assert found == ["setup.cfg:3 test collection narrowed"]


def test_norecursedirs_over_a_base_config_that_cannot_be_read_is_narrowing(repo: GitRepo):
    """What the base left out cannot be shown: every test the head leaves out counts."""
    files = {**NORECURSE_BASE, "setup.cfg": "[tool:pytest\nnorecursedirs = .git\n"}
    config = "[tool:pytest]\nnorecursedirs = .git docs red\n"
    found = tamper(repo, files, lambda r: r.write("setup.cfg", config))
    assert "setup.cfg:2 test collection narrowed" in found


# -- a comment in an ini file configures nothing --------------------------------------------


def test_narrowing_advice_in_an_ini_comment_passes(repo: GitRepo):
    """A comment in pytest.ini suggesting `-m 'not ...'` to the reader."""
    config = (
        "[pytest]\nmarkers =\n    # to run without a full install:\n"
        "    # pytest -m 'not requires_installation'\n    requires_installation\n"
    )
    files = {**RED, "pytest.ini": "[pytest]\nmarkers =\n    requires_installation\n"}
    assert tamper(repo, files, lambda r: r.write("pytest.ini", config)) == []


@pytest.mark.parametrize(
    ("path", "text"),
    [
        # inside a TOML multi-line string, `#` starts no comment: shlex hands pytest `-m`
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\naddopts = """\n# -m "not red"\n"""\n',
        ),
        ("tests/conftest.py", "collect_ignore = [\n# 'x'\n'test_red.py']\n"),
        ("pytest.ini", "[pytest]\naddopts = -p no:cacheprovider\n    -m 'not red' # why\n"),
    ],
)
def test_narrowing_that_only_looks_commented_is_reported(repo: GitRepo, path: str, text: str):
    found = tamper(repo, RED, lambda r: r.write(path, text))
    assert any(f.startswith(path) and f.endswith("test collection narrowed") for f in found)


# -- `-m "not X"` over a marker only the change's new tests carry ---------------------------

LEAKS = "import pytest\n\n\n@pytest.mark.leaks\ndef test_leak():\n    assert leaked() == 0\n"
DECLARED = "[pytest]\nmarkers =\n    leaks: memory leak tests\n"
WHEELS = "[tool.cibuildwheel]\ntest-command = 'pytest -m \"not leaks\" {project}/tests'\n"


def test_deselecting_a_marker_only_new_tests_carry_passes(repo: GitRepo):
    """New leak tests, marked `leaks`, deselected in wheel builds."""
    files = {**RED, "pyproject.toml": "[tool.cibuildwheel]\ntest-command = 'pytest'\n"}
    files["pytest.ini"] = "[pytest]\nmarkers =\n    slow: slow tests\n"

    def change(r: GitRepo) -> None:
        r.write("tests/test_leaks.py", LEAKS)
        r.write("pytest.ini", files["pytest.ini"] + "    leaks: memory leak tests\n")
        r.write("pyproject.toml", WHEELS)

    assert tamper(repo, files, change) == []


def test_deselecting_a_marker_nobody_declares_is_reported(repo: GitRepo):
    """A plugin may give the marker to old tests (pytest-asyncio's `asyncio` in auto mode)."""
    files = {**RED, "pyproject.toml": "[tool.x]\n"}

    def change(r: GitRepo) -> None:
        r.write("tests/test_leaks.py", LEAKS)
        r.write("pyproject.toml", WHEELS)

    assert "pyproject.toml:2 test collection narrowed" in tamper(repo, files, change)


def _marked_red(r: GitRepo) -> None:
    r.write(
        "tests/test_red.py",
        "import pytest\n\n\n"
        + RED["tests/test_red.py"].replace("def", "@pytest.mark.leaks\ndef", 1),
    )


@pytest.mark.parametrize(
    "extra",
    [
        _marked_red,  # the red test given the new marker
        lambda r: r.write(  # a conftest giving it to every test
            "tests/conftest.py",
            "import pytest\n\n\ndef pytest_itemcollected(item):\n"
            "    item.add_marker(pytest.mark.leaks)\n",
        ),
        lambda r: r.move("tests/test_red.py", "tests/test_leaks_red.py"),  # moved, then marked
        lambda r: r.write(  # a name computed where the red test lives
            "tests/test_red.py",
            'import pytest\n\npytestmark = getattr(pytest.mark, "lea" + "ks")\n\n\n'
            + RED["tests/test_red.py"],
        ),
        lambda r: (  # a plugin of the change's own, loaded by the configuration
            r.write(
                "evil.py",
                "def pytest_itemcollected(item):\n    item.add_marker('lea' + 'ks')\n",
            ),
            r.write("tox.ini", "[pytest]\naddopts = -p evil\n"),
        ),
    ],
)
def test_deselecting_a_marker_an_old_test_may_carry_is_reported(repo: GitRepo, extra):
    files = {**RED, "pyproject.toml": "[tool.cibuildwheel]\ntest-command = 'pytest'\n"}

    def change(r: GitRepo) -> None:
        r.write("tests/test_leaks.py", LEAKS)
        extra(r)
        if (r.path / "tests/test_leaks_red.py").exists():
            r.write(
                "tests/test_leaks_red.py",
                "import pytest\n\n\n@pytest.mark.leaks\n" + RED["tests/test_red.py"],
            )
        r.write("pytest.ini", DECLARED)
        r.write("pyproject.toml", WHEELS)

    found = tamper(repo, files, change)
    assert "pyproject.toml:2 test collection narrowed" in found


def test_deselecting_a_marker_old_tests_carried_is_reported(repo: GitRepo):
    red = "import pytest\n\n\n@pytest.mark.leaks\n" + RED["tests/test_red.py"]
    files = {**RED, "tests/test_red.py": red, "pyproject.toml": "[tool.x]\n"}

    def change(r: GitRepo) -> None:
        r.write("pytest.ini", DECLARED)
        r.write("pyproject.toml", WHEELS)

    assert tamper(repo, files, change) == ["pyproject.toml:2 test collection narrowed"]


def test_a_new_marker_deselected_beside_another_narrowing_is_reported(repo: GitRepo):
    files = {**RED, "pyproject.toml": "[tool.x]\n"}
    command = '[tool.cibuildwheel]\ntest-command = \'pytest -m "not leaks" -k "not red"\'\n'

    def change(r: GitRepo) -> None:
        r.write("tests/test_leaks.py", LEAKS)
        r.write("pytest.ini", DECLARED)
        r.write("pyproject.toml", command)

    assert "pyproject.toml:2 test collection narrowed" in tamper(repo, files, change)


# -- hooks and scripts that leave tests out or change their results -------------------------

HOOK = (
    "def pytest_collection_modifyitems(items):\n"
    "    items[:] = [i for i in items if 'red' not in i.name]\n"
)
PASS_ALL = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    report = outcome.get_result()\n    report.outcome = 'passed'\n"
)
HOOKED = "pytest hook added that can skip tests or change results"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # a plugin of the change's own, loaded by -p, pytest_plugins, an entry point or env
        (
            lambda r: (
                r.write("evil.py", HOOK),
                r.write("pytest.ini", "[pytest]\naddopts = -p evil\n"),
            ),
            f"evil.py:1 {HOOKED}",
        ),
        (
            lambda r: (
                r.write("tests/evil_plugin.py", HOOK),
                r.write("tests/conftest.py", "pytest_plugins = ['tests.evil_plugin']\n"),
            ),
            f"tests/evil_plugin.py:1 {HOOKED}",
        ),
        (
            lambda r: (
                r.write("evil.py", HOOK),
                r.write("pyproject.toml", "[project.entry-points.pytest11]\nevil = 'evil'\n"),
            ),
            f"evil.py:1 {HOOKED}",
        ),
        # every failure reported as a pass, from a conftest
        (lambda r: r.write("tests/conftest.py", PASS_ALL), f"tests/conftest.py:5 {HOOKED}"),
        (
            lambda r: r.write(
                "conftest.py", "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n"
            ),
            f"conftest.py:1 {HOOKED}",
        ),
        # the command that runs the suite leaves the red test out
        (
            lambda r: r.write(
                "Makefile", "test:\n\tpytest --deselect tests/test_red.py::test_red\n"
            ),
            "Makefile:2 test collection narrowed",
        ),
        (
            lambda r: r.write(
                "noxfile.py",
                "import nox\n\n\n@nox.session\ndef tests(s):\n"
                "    s.run('pytest', '-k', 'not red')\n",
            ),
            "noxfile.py:6 test collection narrowed",
        ),
        (
            lambda r: r.write(
                "scripts/test.sh", "#!/bin/sh\npython -m pytest --ignore tests/test_red.py\n"
            ),
            "scripts/test.sh:2 test collection narrowed",
        ),
    ],
)
def test_hooks_and_scripts_that_leave_tests_out_are_reported(repo: GitRepo, change, expected):
    assert expected in tamper(repo, RED, change)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("Makefile", "lint:\n\tflake8 --ignore=E501 src\n"),
        ("noxfile.py", "import nox\n\n\n@nox.session\ndef tests(s):\n    s.run('pytest', '-x')\n"),
        (
            "tests/conftest.py",
            "def pytest_configure(config):\n"
            "    config.addinivalue_line('markers', 'slow: slow tests')\n\n\n"
            "def pytest_addoption(parser):\n    parser.addoption('--runslow')\n",
        ),
    ],
)
def test_ordinary_hooks_and_scripts_pass(repo: GitRepo, path: str, text: str):
    assert tamper(repo, RED, lambda r: r.write(path, text)) == []


OBSERVER = (
    "class Watch:\n    def pytest_runtest_logreport(self, report):\n        self.seen = report\n"
)


def test_a_hook_def_line_rewritten_in_place_adds_no_hook(repo: GitRepo):
    """pytest-xdist's typing commit: the same hook, the same indentation, a new signature."""
    typed = OBSERVER.replace("(self, report)", "(self, report: object) -> None")
    found = tamper(
        repo, {**RED, "src/plugin.py": OBSERVER}, lambda r: r.write("src/plugin.py", typed)
    )
    assert found == []


@pytest.mark.parametrize(
    "rewrite",
    [
        # the observer lifted out of its class, to the module a plugin registers
        lambda text: (
            text + "\n\ndef pytest_runtest_logreport(report):\n    report.outcome = 'passed'\n"
        ),
        # a second hook of that name beside the one that stays
        lambda text: text.replace(
            "class Watch:",
            "class Force:\n    def pytest_runtest_logreport(self, report):\n"
            "        report.outcome = 'passed'\n\n\nclass Watch:",
        ),
    ],
)
def test_a_hook_added_beside_or_outside_an_existing_one_is_reported(repo: GitRepo, rewrite):
    found = tamper(
        repo,
        {**RED, "src/plugin.py": OBSERVER},
        lambda r: r.write("src/plugin.py", rewrite(OBSERVER)),
    )
    assert [f for f in found if HOOKED in f], found


TOX_IGNORING = "[testenv]\ncommands =\n    pytest --ignore='tests/test_slow.py' {posargs}\n"
SLOW = {**RED, "tests/test_slow.py": "def test_slow():\n    assert True\n", "tox.ini": TOX_IGNORING}


def test_an_ignore_retargeted_with_the_file_it_names_narrows_nothing(repo: GitRepo):
    """tenacity renamed `test_async.py` to `test_asyncio.py` and its `--ignore` with it."""

    def change(r: GitRepo) -> None:
        r.move("tests/test_slow.py", "tests/test_slower.py")
        r.write("tox.ini", TOX_IGNORING.replace("test_slow.py", "test_slower.py"))

    assert tamper(repo, SLOW, change) == []


@pytest.mark.parametrize(
    "change",
    [
        # the ignore moved onto another file, which is not the renamed one
        lambda r: (
            r.move("tests/test_slow.py", "tests/test_slower.py"),
            r.write("tox.ini", TOX_IGNORING.replace("test_slow.py", "test_red.py")),
        ),
        # the renamed file still ignored, and another file ignored besides
        lambda r: (
            r.move("tests/test_slow.py", "tests/test_slower.py"),
            r.write(
                "tox.ini",
                TOX_IGNORING.replace(
                    "--ignore='tests/test_slow.py'",
                    "--ignore='tests/test_slower.py' --ignore='tests/test_red.py'",
                ),
            ),
        ),
    ],
)
def test_an_ignore_retargeted_beyond_the_renamed_file_is_narrowing(repo: GitRepo, change):
    assert "tox.ini:3 test collection narrowed" in tamper(repo, SLOW, change)


# -- red-team: what the configuration leaves out, read as pytest reads it ----------------------

NARROWED = "test collection narrowed"


def _narrowed(found: list[str], path: str) -> bool:
    return any(f.startswith(f"{path}:") and NARROWED in f for f in found)


@pytest.mark.parametrize(
    "setting", ["norecursedirs = .git red", "testpaths = tests/test_a.py", "testpaths = docs"]
)
def test_an_ignore_elsewhere_in_addopts_hides_nothing_from_the_reading(repo: GitRepo, setting: str):
    """An `--ignore` of the base's addopts leaves out only what it names: read as leaving out
    every file, it made the base collect nothing, so nothing could be left out."""
    files = {**NORECURSE_BASE, "setup.cfg": "[tool:pytest]\naddopts = --ignore=docs\n"}
    config = f"[tool:pytest]\naddopts = --ignore=docs\n{setting}\n"
    assert _narrowed(tamper(repo, files, lambda r: r.write("setup.cfg", config)), "setup.cfg")


def test_a_stale_configuration_pytest_does_not_read_hides_nothing_from_the_reading(
    repo: GitRepo,
):
    """pytest reads pytest.ini and ignores setup.cfg's section: the stale `norecursedirs` there
    left nothing out at the base, so the same setting in pytest.ini leaves `red` out."""
    files = {
        **NORECURSE_BASE,
        "pytest.ini": "[pytest]\naddopts = -q\n",
        "setup.cfg": "[tool:pytest]\nnorecursedirs = .git docs red\n",
    }
    config = "[pytest]\naddopts = -q\nnorecursedirs = .git docs red\n"
    assert _narrowed(tamper(repo, files, lambda r: r.write("pytest.ini", config)), "pytest.ini")


def test_norecursedirs_over_a_folder_of_doctests_is_narrowing(repo: GitRepo):
    """With `--doctest-modules`, a module's doctests are tests, with no `def test` in it."""
    module = 'def f():\n    """\n    >>> f()\n    2\n    """\n    return 1\n'
    files = {
        "setup.cfg": "[tool:pytest]\naddopts = --doctest-modules\n",
        "pkg/mod.py": module,
        "tests/test_a.py": "def test_a():\n    assert True\n",
    }
    config = "[tool:pytest]\naddopts = --doctest-modules\nnorecursedirs = pkg\n"
    assert _narrowed(tamper(repo, files, lambda r: r.write("setup.cfg", config)), "setup.cfg")


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        (
            "setup.cfg",
            "norecursedirs =\n    .git\n    docs\n",
            "norecursedirs =\n    .git\n    red\n",
        ),
        ("setup.cfg", "testpaths =\n    tests\n", "testpaths =\n    tests/test_a.py\n"),
        ("pyproject.toml", 'norecursedirs = [\n  ".git",\n]\n', 'norecursedirs = [\n  "red",\n]\n'),
    ],
)
def test_a_narrowing_on_a_continuation_line_is_reported(
    repo: GitRepo, path: str, before: str, after: str
):
    """The added line names no setting (`    red`): the change is judged by what the whole
    configuration leaves out, whichever line does it."""
    section = "[tool:pytest]\n" if path == "setup.cfg" else "[tool.pytest.ini_options]\n"
    files = {**NORECURSE_BASE, "setup.cfg": "", path: section + before}
    assert _narrowed(tamper(repo, files, lambda r: r.write(path, section + after)), path)


def test_the_same_settings_in_pytests_native_table_narrow_nothing(repo: GitRepo):
    """`[tool.pytest.ini_options]` made `[tool.pytest]`, `testpaths` kept; a
    `bench/` folder outside it was never collected."""
    old = '[tool.pytest.ini_options]\naddopts = ["-ra"]\ntestpaths = "tests"\n'
    new = '[tool.pytest]\naddopts = ["-ra"]\ntestpaths = ["tests"]\n'
    files = {**NORECURSE_BASE, "setup.cfg": "", "pyproject.toml": old}
    files["bench/test_benchmarks.py"] = "def test_bench():\n    assert True\n"
    assert tamper(repo, files, lambda r: r.write("pyproject.toml", new)) == []


@pytest.mark.parametrize(
    ("path", "commented", "live"),
    [
        (
            "tox.ini",
            "[pytest]\n# addopts = --deselect {t}\n",
            "[pytest]\naddopts = --deselect {t}\n",
        ),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\n# addopts = "--deselect {t}"\n',
            '[tool.pytest.ini_options]\naddopts = "--deselect {t}"\n',
        ),
    ],
)
def test_a_narrowing_uncommented_is_new(repo: GitRepo, path: str, commented: str, live: str):
    """The comment configured nothing: taken out, it pays for nothing the change turns on."""
    target = "tests/test_red.py::test_red"
    files = {**RED, path: commented.format(t=target)}
    found = tamper(repo, files, lambda r: r.write(path, live.format(t=target)))
    assert found == [f"{path}:2 {NARROWED}"]


@pytest.mark.parametrize("path", [".pytest.ini", "pytest.toml"])
def test_a_narrowing_in_pytests_other_configuration_files_is_reported(repo: GitRepo, path: str):
    """pytest reads `.pytest.ini` and `pytest.toml` before any other file."""
    option = "--deselect tests/test_red.py::test_red"
    text = (
        f"[pytest]\naddopts = {option!r}\n"
        if path.endswith(".toml")
        else f"[pytest]\naddopts = {option}\n"
    )
    assert _narrowed(tamper(repo, RED, lambda r: r.write(path, text)), path)


def test_a_test_file_moved_into_a_folder_norecursedirs_skips_is_reported(repo: GitRepo):
    """The folder was skipped before the change: the move alone hides the file."""
    files = {**NORECURSE_BASE, "setup.cfg": "[tool:pytest]\nnorecursedirs = .git legacy\n"}
    found = tamper(
        repo, files, lambda r: r.move("tests/red/test_red.py", "tests/legacy/test_red.py")
    )
    assert found == ["tests/legacy/test_red.py:None test file moved out of the test paths"]


def test_a_test_file_moved_within_the_collected_folders_passes(repo: GitRepo):
    files = {**NORECURSE_BASE, "setup.cfg": "[tool:pytest]\nnorecursedirs = .git legacy\n"}
    assert (
        tamper(repo, files, lambda r: r.move("tests/red/test_red.py", "tests/unit/test_red.py"))
        == []
    )


@pytest.mark.parametrize(("words", "reported"), [("tests/test_a.py", True), ("tests", False)])
def test_a_path_given_in_addopts_is_read_as_testpaths(repo: GitRepo, words: str, reported: bool):
    """pytest collects only the paths `addopts` gives it; an option's value (`--cov src`) is
    no such path."""
    files = {**NORECURSE_BASE, "src/x.py": "x = 1\n", "setup.cfg": "[tool:pytest]\naddopts = -q\n"}
    config = f"[tool:pytest]\naddopts = -q --cov src {words}\n"
    found = tamper(repo, files, lambda r: r.write("setup.cfg", config))
    assert _narrowed(found, "setup.cfg") == reported


@pytest.mark.parametrize("plugin", ["python", "unittest", "doctest"])
def test_turning_off_a_collecting_plugin_is_narrowing(repo: GitRepo, plugin: str):
    config = f"[pytest]\naddopts = -p no:{plugin}\n"
    found = tamper(repo, RED, lambda r: r.write("pytest.ini", config))
    assert "pytest.ini:2 test collection narrowed" in found


def test_turning_off_the_cache_plugin_passes(repo: GitRepo):
    config = "[pytest]\naddopts = -p no:cacheprovider\n"
    assert tamper(repo, RED, lambda r: r.write("pytest.ini", config)) == []
