"""The pieces `test-tamper` is built from, as plain functions: where runners collect tests,
what a test definition's body and parametrized cases are, and which skip conditions leave a
test running on Linux. Plus the rule over a unified diff (no repository to read)."""

from __future__ import annotations

import pytest

from app.guards.changes import Line
from app.guards.tamper.conditions.skip_conditions import (
    body_skip_elsewhere_only,
    decorator_skips_elsewhere_only,
)
from app.guards.tamper.definitions import definitions
from app.guards.tamper.lang import MIXED, reader_for
from app.guards.tamper.lang.javascript import JAVASCRIPT
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.test_files import collects_tests
from tests.guards.conftest import by_rule, diff_result


def run(*texts: str, start: int = 1) -> list[Line]:
    return [Line(start + n, text, start + n) for n, text in enumerate(texts)]


@pytest.mark.parametrize(
    ("path", "collected"),
    [
        ("tests/test_a.py", True),
        ("pkg/a_test.go", True),
        ("src/a.spec.ts", True),
        ("test/res.status.js", True),
        ("__tests__/a.tsx", True),
        ("tests/integration.rs", True),
        ("src/test/java/ATest.java", True),
        ("tests/conftest.py", False),
        ("tests/helpers.py", False),
        ("tests/fixtures/test_case.py", False),
        ("test/support/utils.js", False),
        ("testdata/a_test.go", False),
        ("src/a.py", False),
        ("tests/test_a.py.bak", False),
    ],
)
def test_where_runners_collect_tests(path: str, collected: bool):
    assert collects_tests(path) is collected


def test_a_python_definition_has_its_whole_body_when_the_run_holds_it():
    lines = run(
        "def test_a(",
        "    tmp_path,",
        ") -> None:",
        "    # why",
        "    value = make(tmp_path)",
        "",
        "    assert value == 1",
        "",
        "",
        "def helper():",
    )
    (found,) = definitions(lines, None, PYTHON)
    assert (found.name, found.body, found.assertions, found.end, found.cases) == (
        "test_a",
        ("value = make(tmp_path)", "assert value == 1"),
        1,
        9,
        1,
    )


def test_a_body_cut_by_the_run_is_unknown_unless_the_file_ends_there():
    lines = run("def test_a():", "    assert f()")
    assert definitions(lines, None, PYTHON)[0].body is None
    assert definitions(lines, 5, PYTHON)[0].body is None
    assert definitions(lines, 2, PYTHON)[0].body == ("assert f()",)


def test_a_braced_body_ends_at_its_closing_line():
    lines = run("it('a', () => {", "  expect(f()).toBe(1)", "})", "it('b', () => {")
    first = definitions(lines, None, JAVASCRIPT)[0]
    assert (first.body, first.end, first.assertions) == (("expect(f()).toBe(1)", "})"), 3, 1)


def test_parametrized_cases_multiply_and_unreadable_lists_count_once():
    lines = run(
        '@pytest.mark.parametrize("a", [1, 2, 3])',
        "@pytest.mark.parametrize(",
        '    "b",',
        "    (True, False),",
        ")",
        "@pytest.mark.parametrize('c', CASES)",
        "def test_a(a, b, c):",
        "    assert a",
    )
    assert definitions(lines, 8, PYTHON)[0].cases == 6


def test_a_broken_parametrize_decorator_counts_once():
    lines = run('@pytest.mark.parametrize("a", [1, 2', "def test_a(a):", "    assert a")
    assert definitions(lines, 3, PYTHON)[0].cases == 1


@pytest.mark.parametrize(
    ("path", "text", "checks"),
    [
        ("tests/test_a.py", "    assert x == 1", True),
        ("tests/test_a.py", "    self.assertEqual(a, b)", True),
        ("test/a.test.js", "  expect(a).toBe(1)", True),
        ("a_test.go", '\tif err != nil { t.Fatalf("x") }', True),
        ("a_test.go", "\texpectSuccess(out, err, t)", True),
        ("tests/test_a.py", "    check_output(result)", True),
        ("tests/test_a.py", "    with pytest.raises(ValueError):", True),
        ("tests/test_a.py", "    value = parse(x)", False),
        ("tests/test_a.py", "    print(result)", False),
    ],
)
def test_what_counts_as_an_assertion(path: str, text: str, checks: bool):
    assert reader_for(path).checks(text) is checks
    # A file of a language with no reader of its own is read by every reader.
    assert MIXED.checks(text) is checks


@pytest.mark.parametrize(
    ("lines", "elsewhere"),
    [
        (run('@pytest.mark.skipif(sys.platform == "win32", reason="x")'), True),
        (run("@pytest.mark.skipif(sys.platform == 'win32',", "    reason='x')"), True),
        (run("@pytest.mark.skipif(sys.platform == 'win32',"), False),  # never closes
        # The closing line is elsewhere in the file: not the same run of lines.
        (
            run("@pytest.mark.skipif(sys.platform == 'win32',") + run("    reason='x')", start=9),
            False,
        ),
        (run("@pytest.mark.skipif(condition=sys.platform == 'darwin', reason='x')"), True),
        (run("@pytest.mark.skipif('sys.platform ==')"), False),
        (run("pytestmark = pytest.mark.skipif(os.name == 'nt', reason='x')"), True),
        (run("pytestmark = pytest.mark.skip"), False),
        (run("@pytest.mark.skipif(" + "(" * 500 + "True" + ")" * 500 + ")"), False),
        (run("@pytest.mark.skipif(sys.platform == 'darwin' == os.name, reason='x')"), False),
    ],
)
def test_decorator_conditions(lines: list[Line], elsewhere: bool):
    assert decorator_skips_elsewhere_only(lines, 0) is elsewhere


@pytest.mark.parametrize(
    ("lines", "elsewhere"),
    [
        (run("def test_a():", "    if sys.platform == 'win32':", "        pytest.skip('x')"), True),
        (run("    if os.name == 'nt': pytest.skip('x')"), True),
        (run("  if (process.platform === 'win32') {", "    this.skip()"), True),
        (run("  if (process.platform !== 'win32') {", "    this.skip()"), False),
        (run("def test_a():", "    if flaky():", "        pytest.skip('x')"), False),
        (run("def test_a():", "    pytest.skip('x')"), False),
        # The `if` is context, not part of the change: we cannot see what guards the skip.
        (run("        pytest.skip('x')", start=3), False),
    ],
)
def test_body_skip_conditions(lines: list[Line], elsewhere: bool):
    assert body_skip_elsewhere_only(lines, len(lines) - 1) is elsewhere


MOVE_DIFF = """\
diff --git a/tests/test_a.py b/tests/test_a.py
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1,6 +1,2 @@
 def test_one():
     assert one() == 1
-
-
-def test_two():
-    assert two() == 2
diff --git a/tests/test_b.py b/tests/test_b.py
--- a/tests/test_b.py
+++ b/tests/test_b.py
@@ -1,2 +1,6 @@
 def test_three():
     assert three() == 3
+
+
+def test_two():
+    assert two() == 2
"""


def test_a_move_between_files_in_a_unified_diff_passes():
    assert by_rule(diff_result(MOVE_DIFF), "test-tamper") == []


def test_a_move_into_a_helper_in_a_unified_diff_is_a_removal():
    diff = MOVE_DIFF.replace("tests/test_b.py", "tests/helpers.py")
    assert by_rule(diff_result(diff), "test-tamper") == [
        ("tests/test_a.py", 3, "test 'test_two' removed")
    ]
