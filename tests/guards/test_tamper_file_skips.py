"""Skips the earlier checks did not read: a Go build constraint given to a test file that
existed (a file-wide skip, `app.guards.tamper.build_constraints.constraint_added`), node:test's
`{ skip: ... }` option, and a skip from inside a JavaScript test (`this.skip()`, `t.skip()`).
Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

GO = (
    'package calc\n\nimport "testing"\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("bad")\n\t}\n}\n'
)
JS = "const test = require('node:test');\n\ntest('adds', () => {\n  check(add(1, 2));\n});\n"
BUILD = "build constraint added to a test file (its tests may not be built)"


@pytest.mark.parametrize(
    "constraint",
    ["//go:build ignore", "//go:build windows", "//go:build cgo", "// +build ignore"],
)
def test_a_constraint_that_may_leave_the_file_unbuilt_is_reported(repo: GitRepo, constraint: str):
    found = tamper(
        repo, {"calc_test.go": GO}, lambda r: r.write("calc_test.go", f"{constraint}\n\n{GO}")
    )
    assert found == [f"calc_test.go:1 {BUILD}"]


@pytest.mark.parametrize(
    "constraint",
    [
        "//go:build !windows",
        "//go:build linux && amd64",
        "//go:build unix || windows",
        "// +build linux,amd64 darwin",
        # TinyGo sets its own tag; gc, where the suite runs, does not.
        "//go:build !tinygo",
    ],
)
def test_a_constraint_that_holds_where_the_suite_runs_passes(repo: GitRepo, constraint: str):
    assert (
        tamper(
            repo, {"calc_test.go": GO}, lambda r: r.write("calc_test.go", f"{constraint}\n\n{GO}")
        )
        == []
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # gofmt writing the new form above the old: the same constraint.
        ("// +build integration", "//go:build integration\n// +build integration"),
        # A constraint that already might not hold, reworded.
        ("//go:build integration", "//go:build integration && !race"),
    ],
)
def test_a_constraint_restated_passes(repo: GitRepo, before: str, after: str):
    def change(r: GitRepo) -> None:
        r.write("calc_test.go", f"{after}\n\n{GO}")

    assert tamper(repo, {"calc_test.go": f"{before}\n\n{GO}"}, change) == []


def test_a_constraint_on_a_new_test_file_is_its_own_business(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("win_test.go", "//go:build windows\n\n" + GO.replace("TestAdd", "TestWin"))

    assert tamper(repo, {"calc_test.go": GO}, change) == []


@pytest.mark.parametrize(
    ("header", "line"),
    [
        ("test('adds', { skip: true }, () => {", 3),
        ("test('adds', { skip: 'not today' }, () => {", 3),
        ("test('adds', { todo: true }, () => {", 3),
        ("test('adds', { timeout: 5, skip: !process.env.CI }, () => {", 3),
    ],
)
def test_a_node_test_skip_option_is_a_skip(repo: GitRepo, header: str, line: int):
    change = lambda r: r.write("test/calc.js", JS.replace("test('adds', () => {", header))  # noqa: E731
    assert tamper(repo, {"test/calc.js": JS}, change) == [
        f"test/calc.js:{line} skip marker added to a test"
    ]


@pytest.mark.parametrize(
    "header",
    [
        "test('adds', { skip: false }, () => {",
        "test('adds', { skip: process.platform === 'win32' }, () => {",
        "test('adds', { timeout: 5000 }, () => {",
    ],
)
def test_a_node_test_option_that_runs_the_test_passes(repo: GitRepo, header: str):
    change = lambda r: r.write("test/calc.js", JS.replace("test('adds', () => {", header))  # noqa: E731
    assert tamper(repo, {"test/calc.js": JS}, change) == []


@pytest.mark.parametrize(
    ("header", "skip"),
    [
        ("test('adds', function () {", "  this.skip();"),
        ("test('adds', (t) => {", "  t.skip('later');"),
        ("test('adds', (ctx) => {", "  ctx.skip();"),
        ("test('adds', () => {", "  pending('flaky');"),
    ],
)
def test_a_skip_from_inside_a_javascript_test_is_reported(repo: GitRepo, header: str, skip: str):
    new = JS.replace("test('adds', () => {", f"{header}\n{skip}")
    found = tamper(repo, {"test/calc.js": JS}, lambda r: r.write("test/calc.js", new))
    assert found == ["test/calc.js:4 skip marker added inside a test"]


def test_a_javascript_skip_on_another_platform_only_passes(repo: GitRepo):
    new = JS.replace(
        "test('adds', () => {",
        "test('adds', function () {\n  if (process.platform === 'win32') this.skip();",
    )
    assert tamper(repo, {"test/calc.js": JS}, lambda r: r.write("test/calc.js", new)) == []


LOOP = (
    "describe('methods', function () {\n  methods.forEach(function (method) {\n"
    "    if (method === 'query' && skipQuery()) return\n\n"
    "    it('supports ' + method, function () {\n      check(method);\n    });\n  });\n});\n"
)


def test_a_skip_on_the_condition_a_removed_return_checked_is_a_rewording(repo: GitRepo):
    """The `return` that left the test undefined on that condition made a
    `this.skip()` in the test on the same condition."""
    head = LOOP.replace("    if (method === 'query' && skipQuery()) return\n\n", "").replace(
        "function () {\n      check",
        "function () {\n      if (method === 'query' && skipQuery()) {\n"
        "        this.skip()\n      }\n      check",
    )
    found = tamper(repo, {"test/methods.js": LOOP}, lambda r: r.write("test/methods.js", head))
    assert found == []


def test_a_skip_on_another_condition_than_the_removed_return_is_reported(repo: GitRepo):
    head = LOOP.replace("    if (method === 'query' && skipQuery()) return\n\n", "").replace(
        "function () {\n      check",
        "function () {\n      if (method === 'get') {\n        this.skip()\n      }\n      check",
    )
    found = tamper(repo, {"test/methods.js": LOOP}, lambda r: r.write("test/methods.js", head))
    assert found == ["test/methods.js:5 skip marker added inside a test"]
