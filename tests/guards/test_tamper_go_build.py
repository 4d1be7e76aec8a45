"""`test-tamper` and Go build constraints: a test file whose `//go:build` line no Go the module
supports satisfies (gin's `context_1.18_test.go`, `//go:build !go1.19`, in a module at
`go 1.20`) ran nowhere, so deleting it or its tests removes nothing. The floor is the base
go.mod's; a constraint that may hold on a supported Go, or on a tag we cannot know, is a test
that ran, and its removal is still reported."""

from __future__ import annotations

import pytest

from app.guards.tamper.build_constraints import _evaluate
from tests.guards.conftest import GitRepo, tamper

GO_MOD = "module example.com/m\n\ngo {version}\n"
SOURCE = "package m\n\nfunc Form() int { return 1 }\n"
MAIN_TEST = (
    'package m\n\nimport "testing"\n\n'
    'func TestForm(t *testing.T) {\n\tif Form() != 1 {\n\t\tt.Error("form")\n\t}\n}\n'
)


def old_test(constraint: str) -> str:
    return (
        f'//go:build {constraint}\n\npackage m\n\nimport "testing"\n\n'
        'func TestFormFailed18(t *testing.T) {\n\tif Form() != 1 {\n\t\tt.Error("old")\n\t}\n}\n'
        '\nfunc TestFormOther18(t *testing.T) {\n\tif Form() == 2 {\n\t\tt.Error("two")\n\t}\n}\n'
    )


def base(version: str, constraint: str) -> dict[str, str]:
    return {
        "go.mod": GO_MOD.format(version=version),
        "form.go": SOURCE,
        "form_test.go": MAIN_TEST,
        "form_1.18_test.go": old_test(constraint),
    }


def delete(repo: GitRepo) -> None:
    repo.remove("form_1.18_test.go")


def test_a_test_file_no_supported_go_builds_may_be_deleted(repo: GitRepo):
    assert tamper(repo, base("1.20", "!go1.19"), delete) == []


def test_the_same_file_in_a_module_whose_go_still_builds_it_is_reported(repo: GitRepo):
    assert tamper(repo, base("1.18", "!go1.19"), delete) == [
        "form_1.18_test.go:None test file deleted"
    ]


def test_raising_the_go_directive_in_the_same_change_excuses_nothing(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("go.mod", GO_MOD.format(version="1.22"))
        delete(r)

    assert tamper(repo, base("1.18", "!go1.19"), change) == [
        "form_1.18_test.go:None test file deleted"
    ]


@pytest.mark.parametrize("constraint", ["go1.19", "!go1.19 || linux", "!go1.22", "integration"])
def test_a_constraint_that_may_hold_on_a_supported_go_is_reported(repo: GitRepo, constraint: str):
    assert tamper(repo, base("1.20", constraint), delete) == [
        "form_1.18_test.go:None test file deleted"
    ]


def test_a_constraint_false_whatever_the_other_tags_is_not_reported(repo: GitRepo):
    assert tamper(repo, base("1.20", "!go1.19 && (linux || darwin)"), delete) == []


def test_a_test_removed_from_an_unbuilt_file_that_stays_is_not_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        text = old_test("!go1.19")
        r.write("form_1.18_test.go", text[: text.index("\nfunc TestFormOther18")])

    assert tamper(repo, base("1.20", "!go1.19"), change) == []


def test_a_test_removed_from_a_built_file_next_to_it_is_still_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        delete(r)
        r.write("form_test.go", "package m\n")

    assert tamper(repo, base("1.20", "!go1.19"), change) == [
        "form_test.go:1 test 'TestForm' removed"
    ]


def test_a_constraint_after_the_package_clause_is_no_constraint(repo: GitRepo):
    text = old_test("!go1.19").replace(
        "//go:build !go1.19\n\npackage m\n", "package m\n\n//go:build !go1.19\n"
    )
    files = {**base("1.20", "!go1.19"), "form_1.18_test.go": text}
    assert tamper(repo, files, delete) == ["form_1.18_test.go:None test file deleted"]


@pytest.mark.parametrize(
    ("expr", "truth"),
    [
        ("!go1.19", False),
        ("go1.19", True),
        ("go1.21", None),
        ("!go1.21", None),
        ("!go1.19 && linux", False),
        ("!go1.19 || linux", None),
        ("!(go1.18 && go1.20)", False),
        ("go1.19 &&", None),
        ("(go1.19", None),
    ],
)
def test_constraints_are_read_in_three_valued_logic(expr: str, truth: bool | None):
    assert _evaluate(expr, (1, 20)) is truth


# -- an empty Go test ---------------------------------------------------------------------------

EMPTY = (
    'package m\n\nimport "testing"\n\n'
    'func TestForm(t *testing.T) {\n\tif Form() != 1 {\n\t\tt.Error("form")\n\t}\n}\n\n'
    "func TestName(t *testing.T) {\n\n}\n\n"
    "func TestLater(t *testing.T) {\n\t// to be written\n}\n"
)


def test_removing_go_tests_that_execute_nothing_is_not_reported(repo: GitRepo):
    files = {"go.mod": GO_MOD.format(version="1.20"), "form.go": SOURCE, "form_test.go": EMPTY}
    kept = EMPTY[: EMPTY.index("\nfunc TestName")]
    assert tamper(repo, files, lambda r: r.write("form_test.go", kept)) == []


def test_a_go_test_with_statements_removed_with_empty_ones_kept_is_reported(repo: GitRepo):
    files = {"go.mod": GO_MOD.format(version="1.20"), "form.go": SOURCE, "form_test.go": EMPTY}
    rest = EMPTY[EMPTY.index("func TestName") :]
    assert tamper(repo, files, lambda r: r.write("form_test.go", "package m\n\n" + rest)) == [
        "form_test.go:3 test 'TestForm' removed"
    ]


def test_an_empty_test_in_another_language_is_still_counted(repo: GitRepo):
    base_js = "test('a', () => {\n  expect(1).toBe(1);\n});\n\ntest('b', () => {\n});\n"
    found = tamper(repo, {"test/a.js": base_js}, lambda r: r.write("test/a.js", base_js[:40]))
    assert found == ["test/a.js:3 test 'b' removed"]


def test_an_empty_go_test_is_judged_by_its_body_at_the_base(repo: GitRepo):
    # The base's TestForm checks something: removing it is reported, whatever it looked like
    # on the way out.
    files = {"go.mod": GO_MOD.format(version="1.20"), "form.go": SOURCE, "form_test.go": MAIN_TEST}
    found = tamper(repo, files, lambda r: r.write("form_test.go", "package m\n"))
    assert found == ["form_test.go:1 test 'TestForm' removed"]
