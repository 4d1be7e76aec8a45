"""`test-tamper` and Python tests hidden from pytest while their definition stays
(`app.guards.tamper.runners.collection`): `__test__ = False`, a later definition of the same name,
the name rebound or deleted, the definition wrapped where pytest does not look. Before, none of
these was reported. Real rule, real git."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper

RED = """\
import sys

import pytest


def test_red():
    assert compute() == 2


def test_green():
    assert True
"""
CLASS = """\
import pytest


class TestRed:
    def test_red(self):
        assert compute() == 2

    def test_green(self):
        assert True
"""
PATH = "tests/test_red.py"


def _write(text: str) -> Callable[[GitRepo], None]:
    return lambda r: r.write(PATH, text)


def _wrapped(wrapper: str) -> str:
    """`test_red` indented under `wrapper` (an `if`, another function)."""
    body = "def test_red():\n    assert compute() == 2\n"
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    return RED.replace(body, f"{wrapper}\n{indented}")


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" if line else "\n" for line in text.splitlines()).replace(
        "():", "(self):"
    )


@pytest.mark.parametrize(
    ("base", "head", "message"),
    [
        (RED, RED + "\n__test__ = False\n", "test module no longer collected (__test__ = False)"),
        (RED, "__test__ = 0\n" + RED, "test module no longer collected (__test__ = False)"),
        (
            CLASS,
            CLASS.replace("class TestRed:\n", "class TestRed:\n    __test__ = False\n\n"),
            "test class 'TestRed' no longer collected (__test__ = False)",
        ),
        (
            RED,
            RED + "\n\ndef test_red():\n    assert True\n",
            "test 'test_red' shadowed by a later definition of the same name",
        ),
        (
            CLASS,
            CLASS + "\n    def test_red(self):\n        assert True\n",
            "test 'TestRed::test_red' shadowed by a later definition of the same name",
        ),
        (RED, RED + "\ntest_red = None\n", "test 'test_red' rebound"),
        (RED, RED + "\ntest_red = pytest.mark.skip(test_red)\n", "test 'test_red' rebound"),
        (RED, RED + "\ndel test_red\n", "test 'test_red' deleted (del)"),
        (CLASS, CLASS + "\n    test_red = None\n", "test 'TestRed::test_red' rebound"),
        (CLASS, CLASS + "\n\nTestRed.test_red = None\n", "test 'TestRed::test_red' rebound"),
        (
            CLASS,
            CLASS + "\n\nsetattr(TestRed, 'test_red', None)\n",
            "test 'TestRed::test_red' rebound",
        ),
        (RED, RED + "\nglobals()['test_red'] = None\n", "test 'test_red' rebound"),
        (
            RED,
            RED + "\ntest_red.__test__ = False\n",
            "test 'test_red' no longer collected (__test__ = False)",
        ),
        (RED, _wrapped("if False:"), "test 'test_red' no longer collected"),
        (RED, _wrapped("if 0:"), "test 'test_red' no longer collected"),
        (RED, _wrapped("if __name__ == '__main__':"), "test 'test_red' no longer collected"),
        (RED, _wrapped("if sys.platform == 'win32':"), "test 'test_red' no longer collected"),
        (RED, _wrapped("def later():"), "test 'test_red' no longer collected"),
        (RED, _wrapped("if TYPE_CHECKING:"), "test 'test_red' no longer collected"),
        (
            RED,
            "if True:\n    __test__ = False\n" + RED,
            "test module no longer collected (__test__ = False)",
        ),
        (
            RED,
            RED + "\n\ndef __getattr__(name):\n    return False\n",
            "test module may no longer be collected (__getattr__)",
        ),
        (RED, RED + "\nlocals()['test_red'] = None\n", "test 'test_red' rebound"),
    ],
)
def test_a_test_hidden_from_pytest_is_reported(repo: GitRepo, base: str, head: str, message: str):
    found = tamper(repo, {PATH: base}, _write(head))
    assert [f for f in found if f.split(" ", 1)[1] == message], found


@pytest.mark.parametrize(
    "head",
    [
        # Renamed out of `Test*` (two tests bundled into a class of another name).
        CLASS.replace("class TestRed:", "class RedChecks:"),
        CLASS.replace("class TestRed:", "class TestRed:\n    def __init__(self):\n        pass\n"),
        CLASS.replace("class TestRed:", "class TestRed(Helper):\n    __test__ = False\n"),
        # A base class the test class inherits its tests from, made not collected.
        CLASS.replace("class TestRed:", "class Base:\n    __test__ = False\n")
        + "\n\nclass TestRed(Base):\n    pass\n",
        CLASS.replace("import pytest\n", "import pytest\nfrom nose.tools import nottest\n").replace(
            "    def test_red", "    @nottest\n    def test_red"
        ),
    ],
)
def test_a_test_class_pytest_no_longer_collects_is_reported(repo: GitRepo, head: str):
    found = tamper(repo, {PATH: CLASS}, _write(head))
    assert [f for f in found if "test_red" in f or "TestRed" in f or "Red" in f], found
    assert all("removed" not in f for f in found), found


def test_tests_a_skip_kept_from_running_on_linux_may_be_hidden(repo: GitRepo):
    """Windows-only tests, skipped by `pytestmark` off Windows, moved under
    `if sys.platform == "win32":`."""
    marked = RED.replace(
        "\n\ndef test_red",
        "\npytestmark = pytest.mark.skipif(sys.platform != 'win32')\n\n\ndef test_red",
    )
    assert (
        tamper(repo, {PATH: marked}, _write(marked + "\n__test__ = sys.platform == 'win32'\n"))
        == []
    )


def test_a_conditional_skip_made_a_condition_of_definition_passes(repo: GitRepo):
    """`@skipif(redis is None)` on a class, then the class defined under
    `if redis is not None:`; both may or may not run it."""
    base = CLASS.replace(
        "class TestRed:", "@pytest.mark.skipif(redis is None, reason='x')\nclass TestRed:"
    )
    head = "import pytest\n\n\nif redis is not None:\n" + "".join(
        f"    {line}\n" if line else "\n" for line in CLASS.split("\n\n\n", 1)[1].splitlines()
    )
    assert tamper(repo, {PATH: base}, _write(head)) == []
    assert tamper(repo, {PATH: base}, _write(head.replace("if redis is not None:", "if False:")))


def test_a_helper_class_that_holds_no_test_may_set_dunder_test(repo: GitRepo):
    """pip's `TestData` and werkzeug's `TestResponse`: named like a test class, holding none."""
    helper = "class TestData:\n    def __init__(self, root):\n        self.root = root\n"

    def change(r: GitRepo) -> None:
        r.write(PATH, RED + "\n\n" + helper.replace(":\n", ":\n    __test__ = False\n\n", 1))

    assert tamper(repo, {PATH: RED + "\n\n" + helper}, change) == []


@pytest.mark.parametrize(
    ("base", "head"),
    [
        # Restated: already there, reformatted.
        (RED + "\n__test__ = False\n", RED + "\n__test__ = False  # helpers only\n"),
        # A new helper named like a test, defined once.
        (RED, RED + "\n\ndef test_helper_data():\n    return [1, 2]\n"),
        # Moved from the top level into a test class of the same module.
        (RED, "import pytest\n\n\nclass TestAll:\n" + _indent(RED.split("\n\n\n", 1)[1])),
        # A new test with an old one's name, put above it: the old one still runs.
        (RED, RED.replace("def test_red", "def test_red():\n    assert 1\n\n\ndef test_red", 1)),
        # A subclass's own version of a test it inherits.
        (
            CLASS + "\n\nclass TestMore(TestRed):\n    pass\n",
            CLASS + "\n\nclass TestMore(TestRed):\n    def test_red(self):\n        assert 3\n",
        ),
        # Still defined on Linux.
        (RED, _wrapped("if sys.platform != 'win32':")),
        # An abstract base and a test class that runs its tests.
        (
            CLASS,
            CLASS.replace("class TestRed:", "class Base:\n    __test__ = False\n")
            + "\n\nclass TestRed(Base):\n    __test__ = True\n",
        ),
        # A data table named like a test.
        (RED, RED + "\ntest_cases = [(1, 2), (3, 4)]\n"),
        # A conditional `__test__` on a class that holds no test, a `setattr` of a helper.
        (RED, RED + "\n\nclass Data:\n    __test__ = False\n\n\nsetattr(Data, 'x', 1)\n"),
    ],
)
def test_what_hides_no_test_that_ran_passes(repo: GitRepo, base: str, head: str):
    assert tamper(repo, {PATH: base}, _write(head)) == []


def test_a_test_only_moved_under_a_new_name_is_left_to_the_removal_rules(repo: GitRepo):
    found = tamper(repo, {PATH: RED}, _write(RED.replace("def test_red", "def xtest_red")))
    assert found == [f"{PATH}:6 test 'test_red' removed"]


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (RED + "\n__test__ = False\n", "test module no longer collected (__test__ = False)"),
        (RED + "\ndel test_red\n", "test 'test_red' deleted (del)"),
        (RED + "\ntest_red = None\n", "test 'test_red' rebound"),
        (_wrapped("if False:"), "tests no longer collected (under a condition that never holds)"),
    ],
)
def test_from_a_bare_diff_the_added_lines_are_read(repo: GitRepo, head: str, message: str):
    repo.write(PATH, RED)
    base = repo.commit("base")
    repo.write(PATH, head)
    found = by_rule(
        diff_result(repo.git("diff", base, repo.commit("change")) + "\n"), "test-tamper"
    )
    assert [m for _, _, m in found] == [message]


@pytest.mark.parametrize(
    "head",
    [
        # The generator idiom, in a test's body.
        RED.replace("    assert True\n", "    def gen():\n        if 0:\n            yield None\n"),
        RED.replace("    assert True\n", "    test_dir = None\n    assert test_dir is None\n"),
    ],
)
def test_from_a_bare_diff_lines_inside_a_function_pass(repo: GitRepo, head: str):
    repo.write(PATH, RED)
    base = repo.commit("base")
    repo.write(PATH, head)
    found = by_rule(
        diff_result(repo.git("diff", base, repo.commit("change")) + "\n"), "test-tamper"
    )
    assert found == []


def test_from_a_bare_diff_a_restated_flag_passes(repo: GitRepo):
    repo.write(PATH, RED + "\n__test__ = False\n")
    base = repo.commit("base")
    repo.write(PATH, "__test__ = False\n" + RED)
    head = repo.commit("change")
    assert by_rule(diff_result(repo.git("diff", base, head) + "\n"), "test-tamper") == []


SUITE = "class BaseSuite:\n    def test_red(self):\n        assert compute() == 2\n"
SUITES = {
    "tests/suites.py": SUITE,
    PATH: "from tests.suites import BaseSuite\n\n\nclass TestRed(BaseSuite):\n    pass\n",
}


def _flag_suite(r: GitRepo) -> None:
    r.write("tests/suites.py", SUITE.replace(":\n", ":\n    __test__ = False\n\n", 1))


def test_a_base_suite_another_module_inherits_made_not_collected_is_reported(repo: GitRepo):
    found = tamper(repo, SUITES, _flag_suite)
    assert found == [
        "tests/suites.py:2 test class 'BaseSuite' no longer collected (__test__ = False)"
    ]


def test_a_base_suite_whose_subclasses_set_their_own_flag_passes(repo: GitRepo):
    own = SUITES[PATH].replace("    pass\n", "    __test__ = True\n")
    assert tamper(repo, {**SUITES, PATH: own}, _flag_suite) == []


def test_a_data_class_outside_the_test_modules_may_set_dunder_test(repo: GitRepo):
    """`TestData.__test__ = False` in tests/lib/__init__.py, a class of paths."""
    data = "class TestData:\n    def __init__(self, root):\n        self.root = root\n"

    def change(r: GitRepo) -> None:
        r.write("tests/lib/__init__.py", data + "\n\nTestData.__test__ = False\n")

    files = {"tests/lib/__init__.py": data, PATH: RED}
    assert tamper(repo, files, change) == []


@pytest.mark.parametrize(
    ("home", "reported"),
    [
        ("class Helpers:\n", True),
        ("class TestOther:\n    def __init__(self):\n        pass\n\n", True),
        ("class TestOther:\n", False),
    ],
)
def test_a_test_moved_into_a_class_pytest_does_not_collect_is_reported(
    repo: GitRepo, home: str, reported: bool
):
    other = "tests/test_other.py"
    kept = RED.replace("def test_red():\n    assert compute() == 2\n\n\n", "")
    moved = home + "    def test_red(self):\n        assert compute() == 2\n"

    def change(r: GitRepo) -> None:
        r.write(PATH, kept)
        r.write(other, moved)

    found = tamper(repo, {PATH: RED}, change)
    line = moved.count("\n", 0, moved.index("def test_red")) + 1
    expected = [f"{other}:{line} test 'test_red' moved where pytest does not collect it"]
    assert found == (expected if reported else [])


def test_a_module_that_does_not_parse_is_read_past_the_lines_it_cannot(repo: GitRepo):
    """A Python 2 module (its `print` statement read as one that may bind anything):
    `test_modified_url_encoding = None` in a class body under a condition is reported; a
    local of the same shape in a function is not."""
    py2 = CLASS.replace("import pytest\n", "import pytest\n\nprint 'python 2'\n")
    hidden = py2 + "\n    if not has_codec():\n        test_red = None\n"
    local = py2.replace("        assert True\n", "        test_dir = None\n        assert True\n")
    expected = [f"{PATH}:14 test 'TestRed::test_red' rebound"]
    assert tamper(repo, {PATH: py2}, _write(hidden)) == expected
    assert tamper(repo, {PATH: py2}, _write(local)) == []
