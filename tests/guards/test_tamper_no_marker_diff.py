"""From a bare diff (`ourobot guards check --diff`, a red-team corpus of patches), the ways a
test is made to pass with no marker are read on the added and context lines the diff shows:
a block that never runs, a handler that swallows, a Go build constraint, a test command that
ignores failures, a return on a condition, a runner's own skip."""

from __future__ import annotations

import subprocess

import pytest

from tests.guards.conftest import GitRepo, by_rule, diff_result, edited

PY = "import os\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
GO = (
    'package calc\n\nimport "testing"\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("bad")\n\t}\n}\n'
)
JS = "const test = require('node:test');\n\ntest('adds', function () {\n  check(add(1, 2));\n});\n"
FILES = {
    "tests/test_calc.py": PY,
    "calc_test.go": GO,
    "test/calc.js": JS,
    "Makefile": "test:\n\tpytest\n",
}


@pytest.mark.parametrize(
    ("path", "old", "new", "line", "message"),
    [
        (
            "tests/test_calc.py",
            "    assert add",
            "    if False:\n        assert add",
            7,
            "assertions put under a condition that never holds",
        ),
        (
            "tests/test_calc.py",
            "    assert add(1, 2) == 3\n",
            "    try:\n        assert add(1, 2) == 3\n    except Exception:\n        pass\n",
            7,
            "assertions put under a handler that swallows failures",
        ),
        (
            "tests/test_calc.py",
            "    assert add",
            '    if os.environ.get("CI"):\n        return\n    assert add',
            8,
            "early return added to a test (the rest of it never runs)",
        ),
        (
            "calc_test.go",
            "package calc",
            "//go:build ignore\n\npackage calc",
            1,
            "build constraint added to a test file (its tests may not be built)",
        ),
        (
            "Makefile",
            "\tpytest",
            "\t-pytest",
            2,
            "test command made to pass whatever the tests say",
        ),
        (
            "test/calc.js",
            "  check(",
            "  this.skip();\n  check(",
            4,
            "skip marker added inside a test",
        ),
    ],
)
def test_a_bare_diff_shows_enough_to_report_it(
    repo: GitRepo, path: str, old: str, new: str, line: int, message: str
):
    for name, text in FILES.items():
        repo.write(name, text)
    repo.commit("base")
    edited(path, old, new)(repo)
    diff = subprocess.run(
        ["git", "diff"], cwd=repo.path, env=repo.env, capture_output=True, text=True, check=True
    ).stdout
    assert by_rule(diff_result(diff), "test-tamper") == [(path, line, message)]
