"""`test-tamper` and tests removed with the Pythons they ran on: a change that raises the
project's floor (`requires-python`, `python_requires`) may remove a test whose skip, at the
base, holds on every Python from the new floor on (multidict's "Drop Python 3.8" removing a
`skipif(sys.version_info >= (3, 9))` test, attrs' "Drop Python 3.9" removing a
`skipif(PY_3_10_PLUS)` one): kept, it would be skipped on every Python the head supports.
Skips a change adds are still judged against the base's floor. Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper

SETUP_CFG = "[metadata]\nname = multidict\n\n[options]\npython_requires = >= 3.8\n"
TYPES = """\
import sys

import pytest


def test_kept():
    assert kept()


@pytest.mark.skipif(
    sys.version_info >= (3, 9), reason="Python 3.9 uses GenericAlias which is different"
)
def test_generic_exists():
    assert generic_exists()


def test_generic_alias():
    assert generic_alias()
"""
REMOVED = "test 'test_generic_exists' removed"


def without(text: str, start: str, end: str) -> str:
    """`text` with the lines from the one starting `start` up to the one starting `end` cut."""
    head, rest = text.split(start, 1)
    return head + end + rest.split(end, 1)[1]


def drop(condition: str = "sys.version_info >= (3, 9)", floor: str = "3.9"):
    """A change raising setup.cfg's floor to `floor` and removing the test skipped on
    `condition`."""

    def change(r: GitRepo) -> None:
        r.write("setup.cfg", SETUP_CFG.replace("3.8", floor))
        r.write(
            "tests/test_types.py", without(TYPES, "@pytest.mark.skipif(", "def test_generic_alias")
        )

    return change


def files(condition: str = "sys.version_info >= (3, 9)") -> dict[str, str]:
    return {
        "setup.cfg": SETUP_CFG,
        "tests/test_types.py": TYPES.replace("sys.version_info >= (3, 9)", condition),
    }


def messages(found: list[str]) -> list[str]:
    return [line.split(" ", 1)[1] for line in found]


def test_a_test_that_ran_only_on_a_dropped_python_may_go_with_it(repo: GitRepo):
    """`python_requires = >= 3.8` raised to 3.9."""
    assert tamper(repo, files(), drop()) == []


def test_removing_it_without_raising_the_floor_is_a_removal(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write(
            "tests/test_types.py", without(TYPES, "@pytest.mark.skipif(", "def test_generic_alias")
        )

    assert messages(tamper(repo, files(), change)) == [REMOVED]


@pytest.mark.parametrize(
    ("condition", "floor", "reported"),
    [
        ("sys.version_info >= (3, 9)", "3.9", False),
        ("sys.version_info >= (3, 9)", "3.12", False),
        ("sys.version_info[:2] >= (3, 9)", "3.9", False),
        ("not sys.version_info < (3, 9)", "3.9", False),
        ("sys.version_info >= (3, 9) or sys.platform == 'win32'", "3.9", False),
        # It ran on 3.9 and 3.10, and the head still supports 3.10.
        ("sys.version_info >= (3, 11)", "3.10", True),
        # It ran on 3.12 and later, which the head supports.
        ("sys.version_info < (3, 12)", "3.10", True),
        ("sys.version_info > (3, 9)", "3.9", True),
        ("sys.version_info >= (3, 9, 2)", "3.9", True),
        ("sys.version_info[:1] >= (3, 9)", "3.9", True),
        ("sys.version_info >= (3, 9) and sys.platform == 'win32'", "3.12", True),
        ('sys.version_info >= (3, 9) or os.environ.get("CI")', "3.9", False),
        ('sys.version_info >= (3, 9) and os.environ.get("CI")', "3.12", True),
    ],
)
def test_the_skip_must_hold_on_every_python_from_the_new_floor_on(
    repo: GitRepo, condition: str, floor: str, reported: bool
):
    found = tamper(repo, files(condition), drop(condition, floor))
    assert messages(found) == ([REMOVED] if reported else [])


def test_an_xfail_on_the_dropped_pythons_still_ran(repo: GitRepo):
    xfail = TYPES.replace("mark.skipif(", "mark.xfail(")

    def change(r: GitRepo) -> None:
        r.write("setup.cfg", SETUP_CFG.replace("3.8", "3.9"))
        r.write(
            "tests/test_types.py", without(xfail, "@pytest.mark.xfail(", "def test_generic_alias")
        )

    assert messages(tamper(repo, {**files(), "tests/test_types.py": xfail}, change)) == [REMOVED]


def test_an_unskipped_test_removed_with_a_floor_bump_is_a_removal(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("setup.cfg", SETUP_CFG.replace("3.8", "3.9"))
        r.write("tests/test_types.py", without(TYPES, "def test_kept", "@pytest.mark.skipif("))

    assert messages(tamper(repo, files(), change)) == ["test 'test_kept' removed"]


@pytest.mark.parametrize(
    "head_setup_cfg",
    [
        # The floor raised in a section no build reads: `[options]` still says 3.8.
        SETUP_CFG + "\n[tool:other]\npython_requires = >= 3.12\n",
        SETUP_CFG.replace("[metadata]", "[tool:other]\npython_requires = >= 3.12\n\n[metadata]"),
        # Written twice: which one a build reads cannot be told.
        SETUP_CFG.replace("3.8", "3.9") + "python-requires = >= 3.8\n",
        # Not a lower bound of its own.
        SETUP_CFG.replace(">= 3.8", "~= 3.9"),
    ],
)
def test_only_the_floor_the_build_reads_counts(repo: GitRepo, head_setup_cfg: str):
    def change(r: GitRepo) -> None:
        r.write("setup.cfg", head_setup_cfg)
        r.write(
            "tests/test_types.py", without(TYPES, "@pytest.mark.skipif(", "def test_generic_alias")
        )

    assert messages(tamper(repo, files(), change)) == [REMOVED]


def test_a_setup_py_that_may_set_its_own_floor_is_not_read(repo: GitRepo):
    def change(r: GitRepo) -> None:
        drop()(r)
        r.write("setup.py", 'from setuptools import setup\n\nsetup(python_requires=">=3.8")\n')

    assert messages(tamper(repo, files(), change)) == [REMOVED]


def test_a_pyproject_project_table_outranks_setup_cfg(repo: GitRepo):
    pyproject = '[project]\nname = "multidict"\nrequires-python = ">=3.8"\n'
    base = {**files(), "pyproject.toml": pyproject}
    assert messages(tamper(repo, base, drop())) == [REMOVED]

    def change(r: GitRepo) -> None:
        drop()(r)
        r.write("pyproject.toml", pyproject.replace("3.8", "3.9"))

    assert tamper(repo, base, change) == []


def test_from_a_bare_diff_the_head_floor_is_not_read(repo: GitRepo):
    """Without the trees the head's configuration cannot be read whole: the base's floor."""
    for path, content in {"README.md": "x\n", **files()}.items():
        repo.write(path, content)
    base = repo.commit("base")
    drop()(repo)
    head = repo.commit("change")
    found = by_rule(diff_result(repo.git("diff", base, head) + "\n"), "test-tamper")
    assert [message for _, _, message in found] == [REMOVED]


# -- version flags, class markers, pytestmark ---------------------------------------------------

PROJECT = '[project]\nname = "attrs"\nrequires-python = ">=3.9"\n'
COMPAT = """\
import sys

PYPY = sys.implementation.name == "pypy"
PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)
PY_3_11_PLUS = sys.version_info[:2] >= (3, 11)
"""
MAKE = """\
import pytest

from attr._compat import PY_3_10_PLUS


class TestMatchArgs:
    def test_match_args(self):
        assert match_args()

    @pytest.mark.skipif(PY_3_10_PLUS, reason="Pre-3.10 only.")
    def test_match_args_pre_310(self):
        assert no_match_args()
"""
ATTRS = {
    "pyproject.toml": PROJECT,
    "src/attr/__init__.py": "",
    "src/attr/_compat.py": COMPAT,
    "tests/test_make.py": MAKE,
}
PRE_310 = "test 'test_match_args_pre_310' removed"


def drop_39(make: str = MAKE, flag: str = "PY_3_10_PLUS", floor: str = "3.10"):
    """The floor raised, the flag and the pre-3.10 test removed."""

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.9", floor))
        r.write(
            "src/attr/_compat.py",
            COMPAT.replace("PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)\n", ""),
        )
        kept = make.replace(f"from attr._compat import {flag}\n", "")
        r.write("tests/test_make.py", kept.split("\n\n    @pytest.mark.skipif(")[0] + "\n")

    return change


def test_a_test_skipped_on_a_version_flag_may_go_with_the_pythons_it_ran_on(repo: GitRepo):
    """attrs' `skipif(PY_3_10_PLUS)`, the flag read from the base's `attr/_compat.py`."""
    assert tamper(repo, ATTRS, drop_39()) == []


def test_a_version_flag_that_holds_on_only_some_remaining_pythons_is_a_removal(repo: GitRepo):
    make = MAKE.replace("PY_3_10_PLUS", "PY_3_11_PLUS")
    found = tamper(repo, {**ATTRS, "tests/test_make.py": make}, drop_39(make, "PY_3_11_PLUS"))
    assert messages(found) == [PRE_310]


@pytest.mark.parametrize(
    "rebinding",
    [
        ("tests/conftest.py", "import attr._compat\n\nattr._compat.PY_3_10_PLUS = False\n"),
        ("tests/conftest.py", 'import attr._compat\n\nsetattr(attr._compat, "PY_3_10_PLUS", 0)\n'),
        ("src/attr/_compat.py", COMPAT + "\nif PYPY:\n    PY_3_10_PLUS = False\n"),
        ("tests/test_make.py", MAKE + "\n\nPY_3_10_PLUS = False\n"),
    ],
)
def test_a_version_flag_bound_again_may_not_hold(repo: GitRepo, rebinding: tuple[str, str]):
    path, text = rebinding
    assert messages(tamper(repo, {**ATTRS, path: text}, drop_39())) == [PRE_310]


@pytest.mark.parametrize(
    ("meaning", "reported"),
    [
        # Skipped wherever the head runs, whatever the environment.
        ('sys.version_info[:2] >= (3, 10) or bool(os.environ.get("X"))', False),
        ('sys.version_info[:2] >= (3, 10) and bool(os.environ.get("X"))', True),
        ("sys.version_info[:2] >= (3, 10) and PYPY", True),
        ('sys.platform == "win32"', True),
    ],
)
def test_a_version_flag_is_read_as_what_it_stands_for(repo: GitRepo, meaning: str, reported: bool):
    compat = COMPAT.replace("sys.version_info[:2] >= (3, 10)", meaning)
    compat = compat.replace("import sys", "import os\nimport sys")
    found = tamper(repo, {**ATTRS, "src/attr/_compat.py": compat}, drop_39())
    assert messages(found) == ([PRE_310] if reported else [])


CLASS_SKIPPED = """\
import sys

import pytest


def test_kept():
    assert kept()


@pytest.mark.skipif(sys.version_info >= (3, 10), reason="3.9 only")
class TestOld:
    def test_one(self):
        assert one()

    def test_two(self):
        assert two()
"""


def one_test_less(r: GitRepo) -> None:
    r.write("tests/test_old.py", CLASS_SKIPPED.split("\n\n    def test_two")[0] + "\n")


def test_a_test_in_a_class_skipped_on_the_dropped_pythons_may_go(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.9", "3.10"))
        one_test_less(r)

    base = {"pyproject.toml": PROJECT, "tests/test_old.py": CLASS_SKIPPED}
    assert tamper(repo, base, change) == []


def test_a_test_in_a_class_skipped_where_the_head_runs_it_is_a_removal(repo: GitRepo):
    """The floor not raised: it ran on 3.9."""
    base = {"pyproject.toml": PROJECT, "tests/test_old.py": CLASS_SKIPPED}
    assert messages(tamper(repo, base, one_test_less)) == ["test 'test_two' removed"]


MODULE_SKIPPED = """\
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 10), reason="3.9 only")


def test_one():
    assert one()


def test_two():
    assert two()
"""


@pytest.mark.parametrize(
    ("module", "reported"),
    [
        (MODULE_SKIPPED, False),
        (
            MODULE_SKIPPED.replace(
                "= pytest.mark.skipif(", "= [pytest.mark.slow, pytest.mark.skipif("
            ).replace('"3.9 only")', '"3.9 only")]'),
            False,
        ),
        # Bound again: which marks the module ends with cannot be told.
        (MODULE_SKIPPED.replace("\n\n\ndef test_one", "\npytestmark = []\n\n\ndef test_one"), True),
        (MODULE_SKIPPED.replace("pytestmark = ", "marks = "), True),
        (MODULE_SKIPPED.replace("pytest.mark.skipif(", "pytest.mark.xfail("), True),
    ],
)
def test_a_module_skipped_on_the_dropped_pythons_may_lose_a_test(
    repo: GitRepo, module: str, reported: bool
):
    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.9", "3.10"))
        r.write("tests/test_old.py", module.split("\n\n\ndef test_two")[0] + "\n")

    base = {"pyproject.toml": PROJECT, "tests/test_old.py": module}
    found = tamper(repo, base, change)
    assert messages(found) == (["test 'test_two' removed"] if reported else [])


# -- skips a change adds: still the base's floor ------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "reported"),
    [
        ("not PY_3_10_PLUS", False),  # never holds on 3.10+
        ("PY_3_10_PLUS", True),
        ("not PY_3_11_PLUS", True),  # holds on 3.10
    ],
)
def test_a_skip_added_on_a_version_flag_is_judged_against_the_base_floor(
    repo: GitRepo, condition: str, reported: bool
):
    tests = (
        "import pytest\n\nfrom attr._compat import PY_3_10_PLUS, PY_3_11_PLUS\n\n\n"
        "def test_a():\n    assert True\n"
    )
    skipped = tests.replace(
        "def test_a", f'@pytest.mark.skipif({condition}, reason="x")\ndef test_a'
    )
    base = {**ATTRS, "pyproject.toml": PROJECT.replace("3.9", "3.10"), "tests/test_a.py": tests}
    found = tamper(repo, base, lambda r: r.write("tests/test_a.py", skipped))
    assert messages(found) == (["skip marker added to a test"] if reported else [])


def test_raising_the_floor_excuses_no_skip_a_change_adds(repo: GitRepo):
    """The test ran on 3.10 and later before the change; skipped there, it runs nowhere."""
    tests = "import sys\n\nimport pytest\n\n\ndef test_a():\n    assert True\n"
    skipped = tests.replace(
        "def test_a", '@pytest.mark.skipif(sys.version_info >= (3, 10), reason="x")\ndef test_a'
    )

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.9", "3.10"))
        r.write("tests/test_a.py", skipped)

    found = tamper(repo, {"pyproject.toml": PROJECT, "tests/test_a.py": tests}, change)
    assert messages(found) == ["skip marker added to a test"]


@pytest.mark.parametrize(("module", "reported"), [(CLASS_SKIPPED, True), (MODULE_SKIPPED, False)])
def test_a_test_file_that_ran_only_on_the_dropped_pythons_may_be_deleted(
    repo: GitRepo, module: str, reported: bool
):
    """`CLASS_SKIPPED`'s `test_kept` ran on every Python: its file's deletion is reported."""

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.9", "3.10"))
        r.remove("tests/test_old.py")

    base = {"pyproject.toml": PROJECT, "tests/test_old.py": module}
    found = tamper(repo, base, change)
    assert messages(found) == (["test file deleted"] if reported else [])


# -- red-team: a floor the tests' project does not declare ---------------------------------


def test_the_roots_floor_raised_leaves_a_nested_projects_tests_alone(repo: GitRepo):
    """A monorepo: `packages/sub` has its own pyproject.toml and still supports 3.8; the root's
    floor raised is not its floor, so its test that ran only on 3.8 was removed while 3.8 is
    still supported."""
    sub = '[project]\nname = "sub"\nrequires-python = ">=3.8"\n'
    base = {
        "pyproject.toml": PROJECT.replace("3.9", "3.8"),
        "packages/sub/pyproject.toml": sub,
        "packages/sub/tests/test_types.py": TYPES,
    }

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.9", "3.12"))
        r.write(
            "packages/sub/tests/test_types.py",
            without(TYPES, "@pytest.mark.skipif(", "def test_generic_alias"),
        )

    assert messages(tamper(repo, base, change)) == [REMOVED]


def test_a_project_table_a_poetry_build_ignores_sets_no_floor(repo: GitRepo):
    """Poetry 1 builds from `[tool.poetry.dependencies] python`, whatever `[project]` says."""
    poetry = (
        '[build-system]\nrequires = ["poetry-core<2"]\n'
        'build-backend = "poetry.core.masonry.api"\n\n'
        '[tool.poetry]\nname = "x"\n\n[tool.poetry.dependencies]\npython = ">=3.8"\n\n'
    )

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", poetry + PROJECT.replace("3.9", "3.12"))
        r.write(
            "tests/test_types.py", without(TYPES, "@pytest.mark.skipif(", "def test_generic_alias")
        )

    base = {"pyproject.toml": poetry + PROJECT.replace("3.9", "3.8"), "tests/test_types.py": TYPES}
    assert messages(tamper(repo, base, change)) == [REMOVED]


UNITTEST_STYLE = """\
from sys import version_info
from unittest import TestCase, skipIf


class TransposeTests(TestCase):
    def test_kept(self):
        self.assertTrue(kept())

    @skipIf(version_info[:2] >= (3, 9), "strict=True missing on 3.8")
    def test_incompatible_allow(self):
        self.assertTrue(allow())
"""


def _drop_allow(r: GitRepo) -> None:
    r.write("setup.cfg", SETUP_CFG.replace("3.8", "3.9"))
    r.write("tests/test_recipes.py", UNITTEST_STYLE.split("\n\n    @skipIf")[0] + "\n")


def test_version_info_imported_from_sys_is_read_as_sys_version_info(repo: GitRepo):
    """`from sys import version_info` and a bare `skipIf`; the test
    ran only on the Python the change drops."""
    files = {"setup.cfg": SETUP_CFG, "tests/test_recipes.py": UNITTEST_STYLE}
    assert tamper(repo, files, _drop_allow) == []


@pytest.mark.parametrize(
    "binding",
    [
        "from sys import version_info\nversion_info = (3, 8)\n",
        "from mycompat import version_info\n",
        "from sys import version_info\nimport sys\nsys.version_info = (3, 8)\n",
    ],
)
def test_a_version_info_of_the_modules_own_making_is_not_read(repo: GitRepo, binding: str):
    """Bound again, imported from the project's own module, or patched: what it holds when
    the decorator runs cannot be told, so the test counts as one that ran."""
    text = UNITTEST_STYLE.replace("from sys import version_info\n", binding)
    files = {
        "setup.cfg": SETUP_CFG,
        "mycompat.py": "version_info = (3, 8)\n",
        "tests/test_recipes.py": text,
    }

    def change(r: GitRepo) -> None:
        r.write("setup.cfg", SETUP_CFG.replace("3.8", "3.9"))
        r.write("tests/test_recipes.py", text.split("\n\n    @skipIf")[0] + "\n")

    assert messages(tamper(repo, files, change)) == ["test 'test_incompatible_allow' removed"]
