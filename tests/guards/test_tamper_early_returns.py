"""A bare `return` added at the top of a test that existed ends it before its checks: a skip
with no marker (`app.guards.tamper.early_returns`). Read with the repository (the whole new file)
and from a bare diff (its context lines)."""

from __future__ import annotations

import subprocess

import pytest

from tests.guards.conftest import GitRepo, by_rule, diff_result, edited, tamper

PY = (
    "from calc import add\n\n\n"
    "def test_add():\n    total = add(1, 2)\n    assert total == 3\n\n\n"
    "def test_other():\n    assert add(2, 2) == 4\n"
)
GO = (
    'package calc\n\nimport "testing"\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("bad")\n\t}\n}\n'
)
JS = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n\n"
    "test('adds', () => {\n  const total = add(1, 2);\n  assert.equal(total, 3);\n});\n"
)
MESSAGE = "early return added to a test (the rest of it never runs)"


@pytest.mark.parametrize(
    ("path", "content", "old", "new", "line"),
    [
        ("tests/test_calc.py", PY, "def test_add():\n", "def test_add():\n    return\n", 5),
        ("tests/test_calc.py", PY, "def test_add():\n", "def test_add():\n    return None\n", 5),
        (
            "tests/test_calc.py",
            PY,
            "    total = add(1, 2)\n",
            "    total = add(1, 2)\n    return\n",
            6,
        ),
        ("calc_test.go", GO, "*testing.T) {\n", "*testing.T) {\n\treturn\n", 6),
        ("calc_test.go", GO, "*testing.T) {\n", "*testing.T) {\n\treturn // later\n", 6),
        # pytest passes a test that returns a value (with a warning).
        ("tests/test_calc.py", PY, "def test_add():\n", "def test_add():\n    return add\n", 5),
        ("tests/test_calc.py", PY, "def test_add():\n", "def test_add():\n    return  # wip\n", 5),
        ("test/calc.js", JS, "test('adds', () => {\n", "test('adds', () => {\n  return true;\n", 5),
        ("test/calc.js", JS, "test('adds', () => {\n", "test('adds', () => {\n  return;\n", 5),
    ],
)
def test_a_bare_return_at_the_top_of_a_test_that_existed_is_reported(
    repo: GitRepo, path: str, content: str, old: str, new: str, line: int
):
    found = tamper(repo, {path: content}, edited(path, old, new))
    assert found == [f"{path}:{line} {MESSAGE}"]


def test_a_bare_diff_shows_the_header_in_its_context_and_is_reported(repo: GitRepo):
    repo.write("tests/test_calc.py", PY)
    repo.commit("base")
    edited("tests/test_calc.py", "def test_add():\n", "def test_add():\n    return\n")(repo)
    diff = subprocess.run(
        ["git", "diff"], cwd=repo.path, env=repo.env, capture_output=True, text=True, check=True
    ).stdout
    assert by_rule(diff_result(diff), "test-tamper") == [("tests/test_calc.py", 5, MESSAGE)]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # In a loop or a nested function: it ends that block, not the test.
        (
            "    total = add(1, 2)\n",
            "    for _ in range(2):\n        return\n    total = add(1, 2)\n",
        ),
        (
            "    total = add(1, 2)\n",
            "    def helper():\n        return\n\n    total = add(1, 2)\n",
        ),
        # The last statement of the body: nothing after it is skipped.
        ("    assert total == 3\n", "    assert total == 3\n    return\n"),
    ],
)
def test_a_return_that_ends_less_than_the_test_passes(repo: GitRepo, old: str, new: str):
    path = "tests/test_calc.py"
    assert tamper(repo, {path: PY}, edited(path, old, new)) == []


def test_a_return_in_a_new_test_or_a_helper_passes(repo: GitRepo):
    path = "tests/test_calc.py"
    new_test = "\n\ndef test_new():\n    return\n    assert add(0, 0) == 0\n"
    helper = "\n\ndef make():\n    return\n    add(0, 0)\n"
    assert tamper(repo, {path: PY}, edited(path, "== 4\n", "== 4\n" + new_test + helper)) == []


def test_a_js_callback_returning_early_is_not_the_test_returning(repo: GitRepo):
    path = "test/calc.js"
    new = "  [1, 2].forEach((n) => {\n    return;\n    add(n, n);\n  });\n"
    assert tamper(repo, {path: JS}, edited(path, "  assert.equal", new + "  assert.equal")) == []


def test_a_go_subtest_returning_early_is_its_own_business(repo: GitRepo):
    old = "\tif Add(1, 2) != 3 {"
    new = '\tt.Run("inner", func(t *testing.T) {\n\t\treturn\n\t\tAdd(0, 0)\n\t})\n' + old
    assert tamper(repo, {"calc_test.go": GO}, edited("calc_test.go", old, new)) == []


@pytest.mark.parametrize(
    ("new", "line"),
    [
        ("    if total is None:\n        return\n", 7),
        ('    if os.environ.get("CI"):\n        return\n', 7),
        ("    if total is None: return\n", 6),
    ],
)
def test_a_return_under_a_condition_that_may_hold_is_a_skip(repo: GitRepo, new: str, line: int):
    path = "tests/test_calc.py"
    found = tamper(repo, {path: PY}, edited(path, "    assert total", new + "    assert total"))
    assert found == [f"{path}:{line} {MESSAGE}"]


def test_a_javascript_one_line_conditional_return_is_a_skip(repo: GitRepo):
    path = "test/calc.js"
    new = "  if (!process.env.CI) return;\n  assert.equal"
    assert tamper(repo, {path: JS}, edited(path, "  assert.equal", new)) == [f"{path}:6 {MESSAGE}"]


@pytest.mark.parametrize(
    "new",
    [
        # Only where the suite does not run.
        '    if sys.platform == "win32":\n        return\n',
        # The test fails first.
        "    if total is None:\n        pytest.fail('no total')\n        return\n",
        "    if total is None:\n        assert False, 'no total'\n        return\n",
        # Nested deeper than the test's own body.
        "    if total:\n        if total > 9:\n            return\n",
    ],
)
def test_a_conditional_return_that_skips_nothing_that_runs_passes(repo: GitRepo, new: str):
    path = "tests/test_calc.py"
    assert (
        tamper(repo, {path: PY}, edited(path, "    assert total", new + "    assert total")) == []
    )


def test_a_go_return_after_a_reported_failure_passes(repo: GitRepo):
    old = "\tif Add(1, 2) != 3 {"
    new = (
        '\tgot := Add(1, 2)\n\tif got < 0 {\n\t\tt.Errorf("negative: %d", got)\n\t\treturn\n\t}\n'
        + old
    )
    assert tamper(repo, {"calc_test.go": GO}, edited("calc_test.go", old, new)) == []


def test_a_javascript_test_returning_its_promise_last_ends_nothing(repo: GitRepo):
    path = "test/calc.js"
    new = "  return check(add(1, 2));\n});\n"
    change = edited(path, "  const total = add(1, 2);\n  assert.equal(total, 3);\n});\n", new)
    assert tamper(repo, {path: JS}, change) == []


def test_a_javascript_promise_returned_before_the_checks_ends_the_test(repo: GitRepo):
    path = "test/calc.js"
    change = edited(path, "  const total", "  return Promise.resolve();\n  const total")
    assert tamper(repo, {path: JS}, change) == [f"{path}:5 {MESSAGE}"]


def test_a_return_only_restated_was_there_before(repo: GitRepo):
    """A formatter adds `;` to every line, `return` made `return;`."""
    path = "test/calc.js"
    base = JS.replace("  const total", "  return;\n  const total")
    change = edited(path, "  return;\n", "  return; // unchanged\n")
    assert tamper(repo, {path: base}, change) == []


SKIP_ON_TINYGO = (
    "func skipOnTinyGo(t *testing.T) bool {\n\tt.Helper()\n"
    '\tif runtime.Compiler == "tinygo" {\n\t\tt.Log("SKIP")\n\t\treturn true\n\t}\n'
    "\treturn false\n}\n\n"
)


@pytest.mark.parametrize(
    ("predicate", "reported"),
    [
        # True only on TinyGo, never where the suite runs.
        (SKIP_ON_TINYGO, False),
        # True on the suite's own compiler.
        (SKIP_ON_TINYGO.replace('"tinygo"', '"gc"'), True),
        # `return true` after the `if`, not in it: true everywhere.
        (
            SKIP_ON_TINYGO.replace("\t\treturn true\n\t}\n", "\t}\n\treturn true\n"),
            True,
        ),
        # Defined twice, or not at all: not read.
        (SKIP_ON_TINYGO + SKIP_ON_TINYGO, True),
        ("", True),
    ],
)
def test_a_go_return_on_a_predicate_of_the_file_reads_what_it_tests(
    repo: GitRepo, predicate: str, reported: bool
):
    base = GO.replace("func TestAdd", predicate.replace("skipOnTinyGo", "unused") + "func TestAdd")
    head = GO.replace("func TestAdd", predicate + "func TestAdd").replace(
        "*testing.T) {\n\tif Add",
        "*testing.T) {\n\tif skipOnTinyGo(t) {\n\t\treturn\n\t}\n\tif Add",
    )
    found = tamper(repo, {"calc_test.go": base}, lambda r: r.write("calc_test.go", head))
    assert bool(found) == reported, found


def test_a_python_predicate_of_one_return_is_read(repo: GitRepo):
    path = "tests/test_calc.py"
    helper = 'def on_windows():\n    return sys.platform == "win32"\n\n\n'
    base = PY.replace("def test_add", helper + "def test_add")
    change = edited(
        path, "    total = add", "    if on_windows():\n        return\n    total = add"
    )
    assert tamper(repo, {path: base}, change) == []


SPEC = 'describe Calc do\n  it "adds" do\n    expect(Calc.add(1, 2)).to eq(3)\n  end\nend\n'
MINITEST = (
    "class TestCalc < Minitest::Test\n  def test_add\n    assert_equal 3, Calc.add(1, 2)\n"
    "  end\nend\n"
)


@pytest.mark.parametrize(
    ("path", "content", "old", "new"),
    [
        ("spec/calc_spec.rb", SPEC, '  it "adds" do\n', '  it "adds" do\n    next\n'),
        ("spec/calc_spec.rb", SPEC, '  it "adds" do\n', '  it "adds" do\n    next if ENV["CI"]\n'),
        ("test/test_calc.rb", MINITEST, "  def test_add\n", "  def test_add\n    return\n"),
    ],
)
def test_a_ruby_test_ended_early_is_reported(
    repo: GitRepo, path: str, content: str, old: str, new: str
):
    assert tamper(repo, {path: content}, edited(path, old, new)) == [f"{path}:3 {MESSAGE}"]


def test_a_next_in_a_loop_of_a_spec_ends_one_turn(repo: GitRepo):
    path = "spec/calc_spec.rb"
    loop = "    [1, 2].each do |n|\n      next if n == 1\n      expect(n).to eq(2)\n    end\n"
    change = edited(path, "    expect(Calc", loop + "    expect(Calc")
    assert tamper(repo, {path: SPEC}, change) == []


TWO = (
    "from calc import add\n\n\n"
    "def test_one():\n    if skip_one():\n        return\n    assert add(1, 2) == 3\n\n\n"
    "def test_two():\n    assert add(2, 2) == 4\n"
)


def test_a_return_reworded_in_its_own_test_replaces_the_old_one(repo: GitRepo):
    """`next if a or b or c` made `next if a or c`."""
    path = "tests/test_calc.py"
    change = edited(path, "    if skip_one():\n", "    if skip_one() or skip_all():\n")
    assert tamper(repo, {path: TWO}, change) == []


def test_a_return_taken_off_one_test_pays_for_none_put_on_another(repo: GitRepo):
    path = "tests/test_calc.py"

    def change(r: GitRepo) -> None:
        text = TWO.replace("    if skip_one():\n        return\n", "")
        r.write(path, text.replace("    assert add(2, 2)", "    return\n    assert add(2, 2)"))

    assert tamper(repo, {path: TWO}, change) == [f"{path}:9 {MESSAGE}"]


def test_a_return_only_re_indented_pays_for_no_new_one(repo: GitRepo):
    path = "tests/test_calc.py"

    def change(r: GitRepo) -> None:
        text = TWO.replace("        return\n", "        return  # still\n")
        r.write(path, text.replace("    assert add(2, 2)", "    return\n    assert add(2, 2)"))

    assert tamper(repo, {path: TWO}, change) == [f"{path}:11 {MESSAGE}"]
