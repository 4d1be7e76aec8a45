"""Go test files the go tool ignores (`app.guards.tamper.test_files.collects_tests`): a name or a
folder starting with `_` or `.`, or a `testdata` folder. A test file renamed there no longer runs,
though git shows no line of it."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

RED = (
    'package p\n\nimport "testing"\n\nfunc TestRed(t *testing.T) {\n'
    '\tif compute() != 2 {\n\t\tt.Fatal("red")\n\t}\n}\n'
)
FILES = {"p/red_test.go": RED, "p/other_test.go": RED.replace("Red", "Other")}


@pytest.mark.parametrize(
    "moved",
    [
        "p/_old/red_test.go",
        "p/.old/red_test.go",
        "p/_red_test.go",
        "p/.red_test.go",
        "p/testdata/red_test.go",
    ],
)
def test_a_go_test_file_renamed_where_go_test_does_not_look_is_reported(repo: GitRepo, moved: str):
    found = tamper(repo, FILES, lambda r: r.move("p/red_test.go", moved))
    assert found == [f"{moved}:None test file moved out of the test paths"]


def test_a_go_test_file_renamed_within_its_package_stays(repo: GitRepo):
    assert tamper(repo, FILES, lambda r: r.move("p/red_test.go", "p/compute_test.go")) == []
