"""The `test-tamper` rule: deleting, removing or silencing tests is caught; adding tests, renaming
them and moving test files are not."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tampered

PY_TESTS = """\
import pytest


def test_parses():
    assert parse("1") == 1


def test_rejects_garbage():
    with pytest.raises(ValueError):
        parse("x")
"""


def test_deleting_a_test_file_is_tampering(repo: GitRepo):
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.remove("tests/test_parse.py")
    )
    assert found == [("tests/test_parse.py", None, "test file deleted")]


def test_removing_a_test_function_is_tampering(repo: GitRepo):
    kept = PY_TESTS.split("\n\ndef test_rejects_garbage")[0] + "\n"
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", kept)
    )
    assert found == [("tests/test_parse.py", 6, "test 'test_rejects_garbage' removed")]


@pytest.mark.parametrize(
    ("path", "original", "edited", "line"),
    [
        (
            "tests/test_parse.py",
            PY_TESTS,
            PY_TESTS.replace("def test_parses", "@pytest.mark.skip\ndef test_parses"),
            4,
        ),
        (
            "tests/test_parse.py",
            PY_TESTS,
            PY_TESTS.replace(
                "def test_parses", '@pytest.mark.xfail(reason="flaky")\ndef test_parses'
            ),
            4,
        ),
        (
            "tests/test_parse.py",
            PY_TESTS,
            PY_TESTS.replace(
                '    assert parse("1")', '    pytest.skip("later")\n    assert parse("1")'
            ),
            5,
        ),
        (
            "tests/test_parse.py",
            "import unittest\n\n\nclass TestP(unittest.TestCase):\n"
            "    def test_a(self):\n        pass\n",
            "import unittest\n\n\nclass TestP(unittest.TestCase):\n    @unittest.skip('x')\n"
            "    def test_a(self):\n        pass\n",
            5,
        ),
        (
            "src/parse.test.js",
            "it('parses', () => {\n  expect(parse('1')).toBe(1);\n});\n",
            "it.skip('parses', () => {\n  expect(parse('1')).toBe(1);\n});\n",
            1,
        ),
        (
            "src/parse.test.js",
            "it('parses', () => {\n  expect(parse('1')).toBe(1);\n});\n",
            "xit('parses', () => {\n  expect(parse('1')).toBe(1);\n});\n",
            1,
        ),
        (
            "parse_test.go",
            "package p\n\nfunc TestParse(t *testing.T) {\n\tcheck(t)\n}\n",
            'package p\n\nfunc TestParse(t *testing.T) {\n\tt.Skip("later")\n\tcheck(t)\n}\n',
            4,
        ),
    ],
)
def test_skip_markers_on_existing_tests_are_tampering(
    repo: GitRepo, path: str, original: str, edited: str, line: int
):
    found = tampered(repo, {path: original}, lambda r: r.write(path, edited))
    assert [(p, n) for p, n, _ in found] == [(path, line)]


def test_a_focused_test_is_tampering_even_in_a_new_file(repo: GitRepo):
    found = tampered(
        repo, {}, lambda r: r.write("src/a.test.ts", "describe.only('a', () => {});\n")
    )
    assert found == [("src/a.test.ts", 1, "focused test added (skips others)")]


def test_narrowing_collection_in_pytest_config_is_tampering(repo: GitRepo):
    found = tampered(
        repo,
        {"pytest.ini": "[pytest]\naddopts = -q\n"},
        lambda r: r.write(
            "pytest.ini", "[pytest]\naddopts = -q --deselect tests/test_a.py::test_x\n"
        ),
    )
    assert found == [("pytest.ini", 2, "test collection narrowed")]


def test_only_adding_tests_passes(repo: GitRepo):
    more = PY_TESTS + '\n\ndef test_parses_negative():\n    assert parse("-1") == -1\n'
    more += '\n\n@pytest.mark.skipif(sys.platform == "win32", reason="posix")\n'
    more += "def test_posix_only():\n    pass\n"
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", more)
    )
    assert found == []


def test_a_new_test_file_with_a_skipped_test_passes(repo: GitRepo):
    new = "import pytest\n\n\n@pytest.mark.skip(reason='needs network')\n"
    new += "def test_remote():\n    pass\n"
    assert tampered(repo, {}, lambda r: r.write("tests/test_remote.py", new)) == []


def test_renaming_a_test_or_moving_the_file_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_parse.py", PY_TESTS.replace("test_parses", "test_parses_integers"))
        r.move("tests/test_parse.py", "tests/unit/test_parsing.py")

    assert tampered(repo, {"tests/test_parse.py": PY_TESTS}, change) == []


def test_moving_tests_out_of_the_test_paths_is_tampering(repo: GitRepo):
    found = tampered(
        repo,
        {"tests/test_parse.py": PY_TESTS},
        lambda r: r.move("tests/test_parse.py", "attic/parse_checks.py"),
    )
    assert found == [("attic/parse_checks.py", None, "test file moved out of the test paths")]


def test_deleting_a_fixture_under_tests_is_not_tampering(repo: GitRepo):
    found = tampered(
        repo,
        {"tests/fixtures/sample.json": "{}\n"},
        lambda r: r.remove("tests/fixtures/sample.json"),
    )
    assert found == []


def test_rewording_an_existing_skip_is_not_a_new_skip(repo: GitRepo):
    before = 'def test_utf8():\n    if enc() != "UTF-8":\n        pytest.skip("old words")\n'
    after = 'def test_utf8():\n    if encoding() != "UTF-8":\n        pytest.skip("new words")\n'
    found = tampered(
        repo, {"tests/test_enc.py": before}, lambda r: r.write("tests/test_enc.py", after)
    )
    assert found == []


def test_renaming_a_test_file_so_the_runner_skips_it_is_tampering(repo: GitRepo):
    found = tampered(
        repo,
        {"tests/test_parse.py": PY_TESTS},
        lambda r: r.move("tests/test_parse.py", "tests/test_parse.py.bak"),
    )
    assert found == [("tests/test_parse.py.bak", None, "test file moved out of the test paths")]


def test_commenting_out_or_renaming_a_test_away_is_removal(repo: GitRepo):
    disabled = PY_TESTS.replace("def test_parses", "def _test_parses")
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", disabled)
    )
    assert [m for _, _, m in found] == ["test 'test_parses' removed"]


@pytest.mark.parametrize("cases", ["[]", "()", "[ ]"])
def test_a_parametrize_with_no_cases_is_a_skip(repo: GitRepo, cases: str):
    """pytest skips a test parametrized over nothing (or xfails it, by
    `empty_parameter_set_mark`): it no longer runs."""
    base = "import pytest\n\n\ndef test_red():\n    assert compute() == 2\n"
    head = base.replace(
        "\ndef test_red():", f'\n@pytest.mark.parametrize("unused", {cases})\ndef test_red(unused):'
    )
    found = tampered(repo, {"tests/test_x.py": base}, lambda r: r.write("tests/test_x.py", head))
    assert found == [("tests/test_x.py", 4, "skip marker added to a test")]


def test_a_parametrize_with_cases_is_no_skip(repo: GitRepo):
    base = "import pytest\n\n\ndef test_red():\n    assert compute() == 2\n"
    head = base.replace(
        "\ndef test_red():", '\n@pytest.mark.parametrize("n", [1, 2])\ndef test_red(n):'
    )
    assert (
        tampered(repo, {"tests/test_x.py": base}, lambda r: r.write("tests/test_x.py", head)) == []
    )
