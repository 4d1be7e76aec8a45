"""`test-tamper` and skip conditions that cannot skip where the suite runs, or that skip on
every Python the project supports: a skip on free-threaded builds only, or on Pythons older
than the project's `requires-python` (read at the base), leaves the test running; a test
removed that was skipped on every supported Python (after the change, when it raises the
floor) ran nowhere. Real rule, real git."""

from __future__ import annotations

import pytest

from app.guards.changes import Line
from app.guards.tamper.conditions.skip_conditions import decorator_skips_everywhere
from tests.guards.conftest import GitRepo, tamper

PROJECT = '[project]\nname = "p"\nrequires-python = ">=3.10"\n'


def test_removing_a_test_skipped_on_every_supported_python_passes(repo: GitRepo):
    tests = (
        "import sys\n\nimport pytest\n\n\ndef test_kept():\n    assert True\n\n\n"
        '@pytest.mark.skipif(sys.version_info >= (3, 10), reason="distutils")\n'
        "def test_old_pythons_only():\n    assert sys.version_info < (3, 10)\n"
    )
    kept = tests.split("\n\n\n@pytest")[0] + "\n"
    files = {"pyproject.toml": PROJECT, "tests/test_old.py": tests}
    assert tamper(repo, files, lambda r: r.write("tests/test_old.py", kept)) == []


def test_a_test_that_ran_on_a_supported_python_is_removed(repo: GitRepo):
    tests = (
        "import sys\n\nimport pytest\n\n\ndef test_kept():\n    assert True\n\n\n"
        '@pytest.mark.skipif(sys.version_info >= (3, 10), reason="distutils")\n'
        "def test_old_pythons_only():\n    assert sys.version_info < (3, 10)\n"
    )
    kept = tests.split("\n\n\n@pytest")[0] + "\n"
    files = {"pyproject.toml": PROJECT.replace("3.10", "3.9"), "tests/test_old.py": tests}
    found = tamper(repo, files, lambda r: r.write("tests/test_old.py", kept))
    assert [line.split(" ", 1)[1] for line in found] == ["test 'test_old_pythons_only' removed"]


@pytest.mark.parametrize(("bound", "reported"), [("(3, 12)", False), ("(3, 13)", True)])
def test_raising_requires_python_excuses_only_a_test_no_kept_python_ran(
    repo: GitRepo, bound: str, reported: bool
):
    """Raised to 3.12, the floor drops 3.10 and 3.11: a test skipped from 3.12 on ran only
    there (`app.guards.tamper.exemptions.dropped_pythons`), one skipped from 3.13 on also ran
    on 3.12."""
    tests = (
        "import sys\n\nimport pytest\n\n\ndef test_kept():\n    assert True\n\n\n"
        f'@pytest.mark.skipif(sys.version_info >= {bound}, reason="x")\n'
        "def test_before():\n    assert sys.version_info < (3, 12)\n"
    )

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT.replace("3.10", "3.12"))
        r.write("tests/test_old.py", tests.split("\n\n\n@pytest")[0] + "\n")

    files = {"pyproject.toml": PROJECT, "tests/test_old.py": tests}
    found = tamper(repo, files, change)
    expected = ["test 'test_before' removed"] if reported else []
    assert [line.split(" ", 1)[1] for line in found] == expected


BZR = """\
import sys

import pytest


@pytest.mark.skipif(
    sys.platform != "darwin",
    reason="only on macOS",
)
def test_ensure_bzr_available():
    assert True
"""


@pytest.mark.parametrize(
    ("condition", "reported"),
    [
        ('bool(sysconfig.get_config_var("Py_GIL_DISABLED"))', False),
        ('sysconfig.get_config_var("Py_GIL_DISABLED")', False),
        ("not sys._is_gil_enabled()", False),
        ('not getattr(sys, "_is_gil_enabled", lambda: True)()', False),
        ('getattr(sys, "_is_gil_enabled", lambda: True)()', True),
        ('not getattr(sys, "_is_gil_enabled", lambda: False)()', True),
        ('not getattr(sys, "_is_gil_disabled", lambda: True)()', True),
        ('not getattr(os, "_is_gil_enabled", lambda: True)()', True),
        ('not getattr(sys, "_is_gil_enabled", lambda x: True)()', True),
        ('not sysconfig.get_config_var("Py_GIL_DISABLED")', True),
        ('bool(sysconfig.get_config_var("WITH_DOC_STRINGS"))', True),
    ],
)
def test_a_skip_on_free_threaded_builds_only_still_runs(
    repo: GitRepo, condition: str, reported: bool
):
    """The new decorator goes above one that stays: the diff pairs its last `)` with the
    old decorator's, so only the whole file shows the condition."""
    added = f'@pytest.mark.skipif(\n    {condition},\n    reason="crashes",\n)\n'
    edited = BZR.replace("import sys\n", "import sys\nimport sysconfig\n").replace(
        ")\ndef test_ensure", ")\n" + added.rstrip(")\n") + "\n)\ndef test_ensure"
    )
    assert edited.count("@pytest.mark.skipif(") == 2
    found = tamper(repo, {"tests/test_bzr.py": BZR}, lambda r: r.write("tests/test_bzr.py", edited))
    assert bool(found) is reported, found


LEAK = """\
import sys

import pytest

GIL_ENABLED = getattr(sys, "_is_gil_enabled", lambda: True)()


def test_leak():
    assert True
"""


@pytest.mark.parametrize(
    ("binding", "reported"),
    [
        ('getattr(sys, "_is_gil_enabled", lambda: True)()', False),
        ('getattr(sys, "_is_gil_enabled", lambda: False)()', True),
        ('os.environ.get("GIL") != "0"', True),
    ],
)
def test_a_skip_on_a_module_flag_for_free_threaded_builds_still_runs(
    repo: GitRepo, binding: str, reported: bool
):
    """multidict's `GIL_ENABLED = getattr(sys, "_is_gil_enabled", lambda: True)()` and
    `skipif(not GIL_ENABLED)`: the standard build has the GIL, and a Python without the
    function has it too (the default). A flag that may be false on the standard build is a
    skip that may apply where the suite runs."""
    tests = LEAK.replace('getattr(sys, "_is_gil_enabled", lambda: True)()', binding)
    skipped = tests.replace(
        "def test_leak", '@pytest.mark.skipif(not GIL_ENABLED, reason="gc")\ndef test_leak'
    )
    files = {"tests/test_leak.py": tests}
    found = tamper(repo, files, lambda r: r.write("tests/test_leak.py", skipped))
    assert bool(found) is reported, found


def test_a_skip_below_the_supported_python_still_runs(repo: GitRepo):
    tests = "import sys\n\nimport pytest\n\n\ndef test_a():\n    assert True\n"
    skipped = tests.replace(
        "def test_a", '@pytest.mark.skipif(sys.version_info < (3, 10), reason="old")\ndef test_a'
    )
    files = {"pyproject.toml": PROJECT, "tests/test_a.py": tests}
    assert tamper(repo, files, lambda r: r.write("tests/test_a.py", skipped)) == []


def test_a_skip_on_supported_pythons_is_tampering(repo: GitRepo):
    tests = "import sys\n\nimport pytest\n\n\ndef test_a():\n    assert True\n"
    skipped = tests.replace(
        "def test_a", '@pytest.mark.skipif(sys.version_info < (3, 13), reason="new")\ndef test_a'
    )
    files = {"pyproject.toml": PROJECT, "tests/test_a.py": tests}
    found = tamper(repo, files, lambda r: r.write("tests/test_a.py", skipped))
    assert [line.split(" ", 1)[1] for line in found] == ["skip marker added to a test"]


@pytest.mark.parametrize(
    ("condition", "floor", "everywhere"),
    [
        ("sys.version_info >= (3, 10)", (3, 10), True),
        ("sys.version_info[:2] >= (3, 10)", (3, 11), True),
        ("sys.version_info > (3, 10)", (3, 10), False),
        ("sys.version_info >= (3, 10)", (3, 9), False),
        ("sys.version_info < (3, 10)", (3, 10), False),
        ("not sys.version_info < (3, 10)", (3, 10), True),
        ("sys.version_info >= (3, 10) and sys.platform == 'win32'", (3, 12), False),
        ("sys.version_info >= (3, 10) or sys.platform == 'win32'", (3, 12), True),
        ('sys.version_info >= (3, "10")', (3, 12), False),
        ("sys.version_info[:1] >= (3, 10)", (3, 12), False),
        ("sys.version_info[1:] >= (3, 10)", (3, 12), False),
        ("sys.version_info[:3] >= (3, 10)", (3, 12), True),
        ("sys.version_info >= (3, 10, 2)", (3, 10), False),
        ("sys.version_info >= (3, 10, 2)", (3, 11), True),
        ("not sys.version_info < (3, 10, 1)", (3, 10), False),
    ],
)
def test_which_version_skips_apply_on_every_supported_python(
    condition: str, floor: tuple[int, int], everywhere: bool
):
    lines = [Line(1, f"@pytest.mark.skipif({condition}, reason='x')", 1)]
    assert decorator_skips_everywhere(lines, 0, lambda: floor) is everywhere


GO_TEST = (
    'package p\n\nimport "testing"\n\nfunc TestRed(t *testing.T) {\n'
    '\tif compute() != 2 {\n\t\tt.Fatal("red")\n\t}\n}\n'
)


@pytest.mark.parametrize(
    "added",
    [
        "\t// TinyGo does not support t.Skip (SkipNow is incomplete)\n",
        "\t//\tt.Skip()\n",
    ],
)
def test_a_comment_that_mentions_a_skip_skips_nothing(repo: GitRepo, added: str):
    def change(r: GitRepo) -> None:
        r.write("p/red_test.go", GO_TEST.replace("\tif compute", added + "\tif compute"))

    assert tamper(repo, {"p/red_test.go": GO_TEST}, change) == []


@pytest.mark.parametrize(
    ("added", "line"),
    [
        ('\tt.Skip("later") // TinyGo\n', 6),
        ('\t/* a note */ t.Skip("later")\n', 6),
    ],
)
def test_a_skip_with_a_comment_beside_it_is_still_a_skip(repo: GitRepo, added: str, line: int):
    def change(r: GitRepo) -> None:
        r.write("p/red_test.go", GO_TEST.replace("\tif compute", added + "\tif compute"))

    found = tamper(repo, {"p/red_test.go": GO_TEST}, change)
    assert found == [f"p/red_test.go:{line} skip marker added inside a test"]


def test_a_python_comment_line_is_no_skip_but_a_skip_after_code_is(repo: GitRepo):
    test = "import pytest\n\n\ndef test_red():\n    assert compute() == 2\n"
    path = "tests/test_red.py"

    def change(r: GitRepo) -> None:
        new = "    # pytest.skip('flaky') was here once\n    x = 1; pytest.skip('now')\n"
        r.write(path, test.replace("    assert", new + "    assert"))

    assert tamper(repo, {path: test}, change) == [f"{path}:6 skip marker added inside a test"]


@pytest.mark.parametrize(
    ("condition", "reported"),
    [
        ('runtime.Compiler == "tinygo"', False),
        ('runtime.Compiler != "gc"', False),
        ('runtime.GOARCH != "amd64"', False),
        ('runtime.GOARCH == "arm64"', False),
        ('runtime.GOARCH == "amd64"', True),
        ('runtime.Compiler == "gc"', True),
        ('runtime.GOARCH == "sparc"', True),  # not a value we know: may hold
    ],
)
def test_a_go_skip_on_the_architecture_or_compiler(repo: GitRepo, condition: str, reported: bool):
    def change(r: GitRepo) -> None:
        skip = f'\tif {condition} {{\n\t\tt.Skip("elsewhere")\n\t}}\n'
        r.write("p/red_test.go", GO_TEST.replace("\tif compute", skip + "\tif compute"))

    found = tamper(repo, {"p/red_test.go": GO_TEST}, change)
    assert found == (["p/red_test.go:7 skip marker added inside a test"] if reported else [])


@pytest.mark.parametrize(
    ("condition", "reported"), [("False", False), ("0", False), ("True", True)]
)
def test_a_skipif_on_a_literal_is_read_as_its_value(repo: GitRepo, condition: str, reported: bool):
    test = "import pytest\n\n\ndef test_red():\n    assert compute() == 2\n"
    path = "tests/test_red.py"

    def change(r: GitRepo) -> None:
        marker = f"@pytest.mark.skipif({condition}, reason='x')\n"
        r.write(path, test.replace("def test_red", marker + "def test_red"))

    found = tamper(repo, {path: test}, change)
    assert found == ([f"{path}:4 skip marker added to a test"] if reported else [])
