"""`test-tamper` and the value a platform condition compares with: each subject has its own
Linux value, spelled exactly (`sys.platform` is "linux", `os.name` "posix", `platform.system()`
"Linux"), so `skipif(os.name != "linux")` or `skipif(sys.platform != "Linux")` skips on Linux
and is reported, as is a flag or a JavaScript alias standing for one. Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

TESTS = (
    "import os\nimport platform\nimport sys\nimport unittest\n\nimport pytest\n\n\n"
    "def test_edit():\n    assert edit('a') == 'a'\n"
)
ADDED = ["tests/test_edit.py:9 skip marker added to a test"]


def skip(condition: str):
    marker = condition if condition.startswith("unittest.") else f"pytest.mark.{condition}"
    return lambda r: r.write(
        "tests/test_edit.py", TESTS.replace("def test_edit", f"@{marker}\ndef test_edit")
    )


@pytest.mark.parametrize(
    "condition",
    [
        'skipif(sys.platform != "Linux", reason="linux only")',
        'skipif(not sys.platform.startswith("Linux"), reason="linux only")',
        'skipif(sys.platform != "linux2", reason="linux only")',
        'skipif(sys.platform != "posix", reason="posix only")',
        'skipif(os.name != "linux", reason="linux only")',
        'skipif(platform.system() != "linux", reason="linux only")',
        'unittest.skipUnless(os.name == "linux", "linux only")',
        'unittest.skipUnless(sys.platform == "linux2", "linux only")',
        'skipif(platform.python_implementation() != "cpython", reason="cpython only")',
    ],
)
def test_a_value_the_subject_never_takes_on_linux_is_reported(repo: GitRepo, condition: str):
    assert tamper(repo, {"tests/test_edit.py": TESTS}, skip(condition)) == ADDED


@pytest.mark.parametrize(
    "condition",
    [
        'skipif(sys.platform != "linux", reason="linux only")',
        'skipif(not sys.platform.startswith("linux"), reason="linux only")',
        'skipif(os.name != "posix", reason="posix only")',
        'skipif(platform.system() != "Linux", reason="linux only")',
        'skipif(platform.python_implementation() != "CPython", reason="cpython only")',
        'skipif(sys.platform == "Win32", reason="windows")',
    ],
)
def test_the_linux_value_spelled_exactly_still_passes(repo: GitRepo, condition: str):
    assert tamper(repo, {"tests/test_edit.py": TESTS}, skip(condition)) == []


def test_a_javascript_alias_on_a_wrongly_spelled_platform_is_not_the_plain_function(repo: GitRepo):
    base = "test('adds', () => {\n  expect(add(1, 2)).toBe(3)\n})\n"
    head = "const t = process.platform !== 'Linux' ? test.skip : test\n\n" + base.replace(
        "test(", "t("
    )
    found = tamper(repo, {"test/app.test.js": base}, lambda r: r.write("test/app.test.js", head))
    assert found == ["test/app.test.js:1 test 'adds' removed"]
