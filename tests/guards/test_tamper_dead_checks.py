"""Assertions kept in the file but made to check nothing (`app.guards.tamper.dead_checks`): put
under an added `if False:` / `if false {`, or replaced by one that always holds. Real rule,
real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, edited, tamper

PY = "from calc import add\n\n\ndef test_add():\n    total = add(1, 2)\n    assert total == 3\n"
GO = (
    'package calc\n\nimport "testing"\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("bad")\n\t}\n}\n'
)
JS = "test('adds', () => {\n  const total = add(1, 2);\n  expect(total).toBe(3);\n});\n"
DEAD = "assertions put under a condition that never holds"
ALWAYS = "assertion that always holds added"


@pytest.mark.parametrize(
    ("path", "content", "new", "line"),
    [
        (
            "tests/test_calc.py",
            PY,
            PY.replace("    assert total", "    if False:\n        assert total"),
            6,
        ),
        # gofmt's layout would re-indent the check; unindented, the braces still close it.
        (
            "calc_test.go",
            GO,
            GO.replace("\tif Add", "\tif false {\n\tif Add").replace("\t}\n}", "\t}\n\t}\n}"),
            6,
        ),
        (
            "test/calc.test.js",
            JS,
            JS.replace("  expect(", "  if (false) {\n  expect(").replace(";\n})", ";\n  }\n})"),
            3,
        ),
    ],
)
def test_an_assertion_under_a_condition_that_never_holds_is_reported(
    repo: GitRepo, path: str, content: str, new: str, line: int
):
    found = tamper(repo, {path: content}, lambda r: r.write(path, new))
    assert found == [f"{path}:{line} {DEAD}"]


@pytest.mark.parametrize(
    "new",
    [
        "    assert True or total == 3\n",
        "    assert total == 3 or 1\n",
        '    assert (total == 3, "three")\n',
        "    assert True\n",
    ],
)
def test_an_assertion_replaced_by_one_that_always_holds_is_reported(repo: GitRepo, new: str):
    path = "tests/test_calc.py"
    found = tamper(repo, {path: PY}, edited(path, "    assert total == 3\n", new))
    assert found == [f"{path}:6 {ALWAYS}"]


@pytest.mark.parametrize(
    "new",
    ["  expect(true).toBe(true);\n", "  assert.ok(true);\n", "  expect(1).toBeTruthy();\n"],
)
def test_a_javascript_check_that_always_holds_is_reported(repo: GitRepo, new: str):
    path = "test/calc.test.js"
    found = tamper(repo, {path: JS}, edited(path, "  expect(total).toBe(3);\n", new))
    assert found == [f"{path}:3 {ALWAYS}"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A new test's placeholder: the file loses no assertion.
        (
            "    assert total == 3\n",
            "    assert total == 3\n\n\ndef test_todo():\n    assert True\n",
        ),
        # An assertion rewritten into a stronger one.
        ("    assert total == 3\n", "    assert total == 3 and isinstance(total, int)\n"),
        # A condition that is not a literal is not read as dead.
        ("    assert total == 3\n", "    if TYPE_CHECKING:\n        pass\n    assert total == 3\n"),
        # `if False:` over new code only.
        ("    total =", "    if False:\n        print('debug')\n    total ="),
    ],
)
def test_checks_that_still_check_pass(repo: GitRepo, old: str, new: str):
    path = "tests/test_calc.py"
    assert tamper(repo, {path: PY}, edited(path, old, new)) == []


SWALLOWED = "assertions put under a handler that swallows failures"


@pytest.mark.parametrize(
    "new",
    [
        "    try:\n        assert total == 3\n    except AssertionError:\n        pass\n",
        "    try:\n        assert total == 3\n    except:\n        print('no')\n",
        "    try:\n        assert total == 3\n    except (KeyError, Exception) as e:\n"
        "        log(e)\n",
        "    with contextlib.suppress(AssertionError):\n        assert total == 3\n",
        "    with suppress(BaseException):\n        assert total == 3\n",
    ],
)
def test_an_assertion_whose_failure_is_swallowed_is_reported(repo: GitRepo, new: str):
    path = "tests/test_calc.py"
    found = tamper(repo, {path: PY}, edited(path, "    assert total == 3\n", new))
    assert found == [f"{path}:6 {SWALLOWED}"]


def test_a_javascript_catch_that_swallows_is_reported(repo: GitRepo):
    path = "test/calc.test.js"
    new = JS.replace(
        "  expect(total).toBe(3);\n", "  try {\n  expect(total).toBe(3);\n  } catch (e) {}\n"
    )
    assert tamper(repo, {path: JS}, lambda r: r.write(path, new)) == [f"{path}:3 {SWALLOWED}"]


@pytest.mark.parametrize(
    "new",
    [
        # Another exception, re-raised, or checked in the handler: the failure still shows.
        "    try:\n        assert total == 3\n    except ValueError:\n        pass\n",
        "    try:\n        assert total == 3\n    except Exception as e:\n"
        "        raise RuntimeError(e)\n",
        "    try:\n        assert total == 3\n    except AssertionError:\n"
        "        pytest.fail('no')\n",
        "    with suppress(KeyError):\n        assert total == 3\n",
    ],
)
def test_a_handler_that_lets_the_failure_show_passes(repo: GitRepo, new: str):
    path = "tests/test_calc.py"
    assert tamper(repo, {path: PY}, edited(path, "    assert total == 3\n", new)) == []


@pytest.mark.parametrize(
    ("path", "content", "old", "new", "line"),
    [
        ("tests/test_calc.py", PY, "    assert total == 3\n", "    assert total is total\n", 6),
        ("test/calc.test.js", JS, "expect(total).toBe(3)", "expect(total).toBe(total)", 3),
        ("test/calc.test.js", JS, "expect(total).toBe(3)", "assert.equal(total, total)", 3),
    ],
)
def test_an_expression_compared_with_itself_checks_nothing(
    repo: GitRepo, path: str, content: str, old: str, new: str, line: int
):
    assert tamper(repo, {path: content}, edited(path, old, new)) == [f"{path}:{line} {ALWAYS}"]


@pytest.mark.parametrize(
    "condition",
    ["not True", "1 == 2", "False or None", 'sys.platform == "win32"', '""'],
)
def test_any_condition_false_where_the_suite_runs_makes_a_dead_block(repo: GitRepo, condition: str):
    path = "tests/test_calc.py"
    new = PY.replace("    assert total", f"    if {condition}:\n        assert total")
    assert tamper(repo, {path: PY}, lambda r: r.write(path, new)) == [f"{path}:6 {DEAD}"]


@pytest.mark.parametrize("condition", ["x == x", "total", 'sys.platform == "linux"', "True"])
def test_a_condition_that_may_hold_makes_no_dead_block(repo: GitRepo, condition: str):
    path = "tests/test_calc.py"
    new = PY.replace("    assert total", f"    if {condition}:\n        assert total")
    assert tamper(repo, {path: PY}, lambda r: r.write(path, new)) == []


def test_an_equality_of_an_object_with_itself_tests_its_eq(repo: GitRepo):
    """`assert fc1 == fc1` checks `DistFacade.__eq__`."""
    path = "tests/test_calc.py"
    change = edited(path, "    assert total == 3\n", "    assert total == total\n")
    assert tamper(repo, {path: PY}, change) == []


def test_a_comment_put_beside_an_assertion_adds_no_assertion(repo: GitRepo):
    path = "tests/test_calc.py"
    base = PY.replace("    assert total == 3\n", "    assert total == 3\n    assert True\n")
    change = edited(path, "    assert True\n", "    assert True  # placeholder\n")
    assert tamper(repo, {path: base}, change) == []


def test_a_block_only_re_indented_is_no_new_block(repo: GitRepo):
    """Tests wrapped in a new `describe`, their `if (process.platform ===
    'win32') {` blocks re-indented with them."""
    path = "test/calc.test.js"
    base = JS.replace(
        "  expect(total).toBe(3);\n",
        "  if (process.platform === 'win32') {\n    expect(total).toBe(3);\n  }\n",
    )
    head = (
        "describe('calc', () => {\n"
        + "".join(f"  {line}\n" for line in base.splitlines())
        + "});\n"
    )
    assert tamper(repo, {path: base}, lambda r: r.write(path, head)) == []


UNITTEST = (
    "import unittest\n\n\nclass TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
)
TESTIFY = (
    'package calc\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n'
    "func TestAdd(t *testing.T) {\n\tassert.Equal(t, 3, Add(1, 2))\n}\n"
)


@pytest.mark.parametrize(
    "new",
    [
        "self.assertTrue(True)",
        "self.assertTrue(1)",
        "self.assertFalse(0)",
        "self.assertIsNone(None)",
        "self.assertIsNotNone('x')",
        "self.assertIs(self, self)",
    ],
)
def test_a_unittest_check_that_always_holds_is_reported(repo: GitRepo, new: str):
    path = "tests/test_calc.py"
    change = edited(path, "self.assertEqual(add(1, 2), 3)", new)
    assert tamper(repo, {path: UNITTEST}, change) == [f"{path}:6 {ALWAYS}"]


@pytest.mark.parametrize(
    "new", ["assert.True(t, true)", "require.False(t, false)", "assert.Nil(t, nil)"]
)
def test_a_testify_check_that_always_holds_is_reported(repo: GitRepo, new: str):
    change = edited("calc_test.go", "assert.Equal(t, 3, Add(1, 2))", new)
    assert tamper(repo, {"calc_test.go": TESTIFY}, change) == [f"calc_test.go:10 {ALWAYS}"]


@pytest.mark.parametrize(
    "new",
    ["self.assertTrue(add(1, 2) == 3)", "self.assertEqual(add(1, 2), 3.0)", "self.assertIsNone(x)"],
)
def test_a_unittest_check_of_the_code_passes(repo: GitRepo, new: str):
    path = "tests/test_calc.py"
    change = edited(path, "self.assertEqual(add(1, 2), 3)", new)
    assert tamper(repo, {path: UNITTEST}, change) == []
