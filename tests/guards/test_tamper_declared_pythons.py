"""`test-tamper` and where the suite runs: on Linux on x86_64, on a Python the project declares,
from its `requires-python` to the newest of its `Programming Language :: Python :: 3.X` classifiers,
both read at the base (`app.guards.tamper.conditions.classifiers`). A skip on Pythons newer than any
declared (loguru's `skipif(sys.version_info >= (3, 16))`, attrs' `xfail(PY_3_14_PLUS)`) or off
x86_64 (yarl's `platform.machine() != "x86_64"`) still lets the test run there; one that holds on a
declared Python, or where the classifiers cannot be read, is reported. Real rule, real git."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.guards.changes import Line
from app.guards.tamper.conditions.skip_conditions import Version, decorator_skips_elsewhere_only
from tests.guards.conftest import GitRepo, tamper

CLASSIFIERS = "".join(
    f'  "Programming Language :: Python :: 3.{minor}",\n' for minor in range(8, 14)
)
PROJECT = f"""\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "p"
requires-python = ">=3.8"
classifiers = [
  "Programming Language :: Python :: 3",
{CLASSIFIERS}  "Programming Language :: Python :: 3 :: Only",
]
"""
# The newest declared is 3.14.
WITH_314 = PROJECT.replace(
    '"Programming Language :: Python :: 3 :: Only"',
    '"Programming Language :: Python :: 3.14",\n  "Programming Language :: Python :: 3 :: Only"',
)
TESTS = """\
import os
import platform
import sys

import pytest


def test_loop():
    assert run() == 1
"""
ADDED = ["tests/test_loop.py:8 skip marker added to a test"]


def skip(condition: str, kind: str = "skipif") -> Callable[[GitRepo], None]:
    marker = f'@pytest.mark.{kind}({condition}, reason="later")\ndef test_loop'
    return lambda r: r.write("tests/test_loop.py", TESTS.replace("def test_loop", marker))


def files(project: str | None = PROJECT, name: str = "pyproject.toml") -> dict[str, str]:
    found = {"tests/test_loop.py": TESTS}
    if project is not None:
        found[name] = project
    return found


# -- Pythons newer than any declared -----------------------------------------------------------


@pytest.mark.parametrize(
    "condition",
    [
        "sys.version_info >= (3, 16)",
        "sys.version_info >= (3, 14)",
        "sys.version_info[:2] > (3, 14)",
        "sys.version_info >= (3, 14, 1)",
        "not sys.version_info < (3, 14)",
        "sys.version_info >= (3, 14) and sys.platform == 'linux'",
        "sys.version_info < (3, 8) or sys.version_info >= (3, 14)",
        "sys.version_info >= (3, 14) or sys.platform == 'win32'",
    ],
)
def test_a_skip_on_undeclared_pythons_only_still_runs(repo: GitRepo, condition: str):
    assert tamper(repo, files(), skip(condition)) == []


@pytest.mark.parametrize(
    "condition",
    [
        "sys.version_info >= (3, 13)",  # the newest declared loses the test
        "sys.version_info > (3, 13)",  # 3.13.1 is past (3, 13)
        "sys.version_info >= (3, 13, 2)",
        "sys.version_info >= (3, 8)",  # every Python the project supports
        "sys.version_info < (3, 9) or sys.version_info >= (3, 14)",  # 3.8 is declared
        "sys.version_info >= (3, 14) or os.environ.get('CI')",
        "sys.version_info.minor == 14",  # not read
    ],
)
def test_a_skip_on_a_declared_python_is_tampering(repo: GitRepo, condition: str):
    assert tamper(repo, files(), skip(condition)) == ADDED


@pytest.mark.parametrize(("project", "reported"), [(PROJECT, False), (WITH_314, True)])
def test_an_xfail_is_read_alike(repo: GitRepo, project: str, reported: bool):
    found = tamper(repo, files(project), skip("sys.version_info >= (3, 14)", "xfail"))
    assert found == (ADDED if reported else [])


def test_a_skip_unless_older_than_any_undeclared_python_still_runs(repo: GitRepo):
    marker = '@unittest.skipUnless(sys.version_info < (3, 14), "later")\ndef test_loop'
    tests = TESTS.replace("import sys\n", "import sys\nimport unittest\n")

    def change(r: GitRepo) -> None:
        r.write("tests/test_loop.py", tests.replace("def test_loop", marker))

    assert tamper(repo, {**files(), "tests/test_loop.py": tests}, change) == []


@pytest.mark.parametrize(
    ("project", "name"),
    [
        (WITH_314, "pyproject.toml"),  # 3.14 is declared: the skip loses the test there
        (None, "pyproject.toml"),  # nothing declared
        (
            PROJECT.replace(CLASSIFIERS, ""),
            "pyproject.toml",
        ),  # no classifier with a minor version
        (PROJECT.replace('name = "p"', 'name = "p"\ndynamic = ["classifiers"]'), "pyproject.toml"),
        (
            PROJECT.replace("hatchling.build", "poetry.core.masonry.api"),
            "pyproject.toml",
        ),  # Poetry adds classifiers from `python`
        (PROJECT.replace("requires-python", "requires-python = \n"), "pyproject.toml"),  # bad TOML
        (
            "from setuptools import setup\n\nMINORS = range(8, 14)\nsetup(\n    name='p',\n"
            "    classifiers=[f'Programming Language :: Python :: 3.{m}' for m in MINORS],\n)\n",
            "setup.py",
        ),
        (
            "[metadata]\nname = p\nclassifiers = file: classifiers.txt\n",
            "setup.cfg",
        ),
    ],
)
def test_a_skip_on_newer_pythons_where_the_newest_declared_is_unknown_or_reached_is_tampering(
    repo: GitRepo, project: str | None, name: str
):
    assert tamper(repo, files(project, name), skip("sys.version_info >= (3, 14)")) == ADDED


@pytest.mark.parametrize(
    ("project", "name"),
    [
        (
            "from setuptools import setup\n\nsetup(\n    name='p',\n    classifiers=[\n"
            "        'Programming Language :: Python :: 3.12',\n"
            "        'Programming Language :: Python :: 3.13',\n    ],\n)\n",
            "setup.py",
        ),
        (
            "[metadata]\nname = p\nclassifiers =\n"
            "    Programming Language :: Python :: 3\n"
            "    Programming Language :: Python :: 3.12\n"
            "    Programming Language :: Python :: 3.13\n\n"
            "[options]\npython_requires = >=3.12\n",
            "setup.cfg",
        ),
    ],
)
def test_classifiers_are_read_from_setup_py_and_setup_cfg(repo: GitRepo, project: str, name: str):
    assert tamper(repo, files(project, name), skip("sys.version_info >= (3, 14)")) == []


def test_classifiers_older_than_the_floor_decide_nothing(repo: GitRepo):
    """`requires-python = ">=3.12"` with classifiers stopping at 3.11: the two disagree, so
    the newest declared is not known."""
    stale = PROJECT.replace(">=3.8", ">=3.12").replace(
        '"Programming Language :: Python :: 3.12",\n  "Programming Language :: Python :: 3.13",\n',
        "",
    )
    assert "3.12" not in stale.split("classifiers")[1]
    assert tamper(repo, files(stale), skip("sys.version_info >= (3, 13)")) == ADDED


def test_classifiers_the_change_adds_are_not_read(repo: GitRepo):
    """The base declares no minor version: a change cannot list classifiers that stop at
    3.13 to excuse the skip on 3.14 it adds."""
    bare = PROJECT.replace(CLASSIFIERS, "")

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT)
        skip("sys.version_info >= (3, 14)")(r)

    assert tamper(repo, files(bare), change) == ADDED


def test_the_newest_classifier_the_change_drops_is_still_declared(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", PROJECT)
        skip("sys.version_info >= (3, 14)")(r)

    assert tamper(repo, files(WITH_314), change) == ADDED


def test_a_change_that_declares_the_python_it_skips_on_is_tampering(repo: GitRepo):
    """The change adds the 3.14 classifier and skips the test there: a Python the head
    declares loses it."""

    def change(r: GitRepo) -> None:
        r.write("pyproject.toml", WITH_314)
        skip("sys.version_info >= (3, 14)")(r)

    assert tamper(repo, files(), change) == ADDED


def test_a_package_with_a_project_file_of_its_own_has_its_own_pythons(repo: GitRepo):
    """The root stops at 3.13; the package's own project file (which may declare 3.14) is
    not read: its tests' skip on 3.14 is reported."""
    package = {
        "pyproject.toml": PROJECT,
        "packages/sub/pyproject.toml": WITH_314,
        "packages/sub/tests/test_loop.py": TESTS,
    }

    def change(r: GitRepo) -> None:
        marker = '@pytest.mark.skipif(sys.version_info >= (3, 14), reason="x")\ndef test_loop'
        r.write("packages/sub/tests/test_loop.py", TESTS.replace("def test_loop", marker))

    assert tamper(repo, package, change) == [
        "packages/sub/tests/test_loop.py:8 skip marker added to a test"
    ]


@pytest.mark.parametrize(
    ("condition", "floor", "newest", "elsewhere"),
    [
        ("sys.version_info >= (3, 14)", (3, 8), (3, 13), True),
        ("sys.version_info >= (3, 14)", (3, 8), (3, 14), False),
        ("sys.version_info >= (3, 14)", None, (3, 13), True),  # no Python up to 3.13 is 3.14
        ("sys.version_info >= (3, 14)", (3, 8), None, False),
        ("sys.version_info < (3, 8)", None, (3, 13), False),  # the floor is not known
        ("not sys.version_info <= (3, 12)", (3, 8), (3, 12), False),  # 3.12.1 > (3, 12)
        ("not sys.version_info <= (3, 13)", (3, 8), (3, 12), True),
        ("sys.version_info >= (3, 13)", (3, 12), (3, 11), False),  # the two disagree
        ("sys.version_info >= (3, 12)", (3, 12), (3, 11), False),
        ("sys.version_info == (3, 14)", (3, 8), (3, 13), False),
    ],
)
def test_which_version_skips_hold_only_past_the_newest_declared(
    condition: str, floor: Version | None, newest: Version | None, elsewhere: bool
):
    lines = [Line(1, f"@pytest.mark.skipif({condition}, reason='x')", 1)]
    found = decorator_skips_elsewhere_only(lines, 0, lambda: floor, newest=lambda: newest)
    assert found is elsewhere


# -- the real shapes: a version flag, a body xfail, a marker name -------------------------------

COMPAT = "import sys\n\nPY_3_10_PLUS = sys.version_info[:2] >= (3, 10)\n"
ANNOTATIONS = """\
import pytest

from attr._compat import PY_3_10_PLUS


def test_forward_references():
    assert resolve() == 1


@pytest.mark.parametrize("slots", [True, False])
def test_references(slots):
    assert resolve(slots) == 1
"""


@pytest.mark.parametrize(
    ("project", "expected"),
    [
        (PROJECT, []),
        (WITH_314, ["skip marker added to a test", "skip marker added inside a test"]),
    ],
)
def test_attrs_xfails_on_a_flag_for_an_undeclared_python_still_run(
    repo: GitRepo, project: str, expected: list[str]
):
    """`PY_3_14_PLUS` added to `attr/_compat.py` by the change itself (the
    flag is what the condition says; the classifiers, stopping at 3.13, are the base's), used
    by an `xfail` decorator and by an imperative `pytest.xfail` under `if PY_3_14_PLUS and
    not slots:`. While the classifiers list 3.14, both lose the test on a declared Python."""
    base = {
        "pyproject.toml": project.replace(">=3.8", ">=3.7"),
        "src/attr/__init__.py": "",
        "src/attr/_compat.py": COMPAT,
        "tests/test_annotations.py": ANNOTATIONS,
    }

    def change(r: GitRepo) -> None:
        r.write("src/attr/_compat.py", COMPAT + "PY_3_14_PLUS = sys.version_info[:2] >= (3, 14)\n")
        r.write(
            "tests/test_annotations.py",
            ANNOTATIONS.replace("PY_3_10_PLUS\n", "PY_3_10_PLUS, PY_3_14_PLUS\n")
            .replace(
                "def test_forward_references",
                '@pytest.mark.xfail(PY_3_14_PLUS, reason="broken on 3.14")\n'
                "def test_forward_references",
            )
            .replace(
                "def test_references(slots):\n",
                "def test_references(slots):\n    if PY_3_14_PLUS and not slots:\n"
                '        pytest.xfail("References are changing a lot in 3.14.")\n',
            ),
        )

    assert [f.split(" ", 1)[1] for f in tamper(repo, base, change)] == expected


def test_a_body_skip_under_an_older_python_than_supported_still_runs(repo: GitRepo):
    body = "def test_loop():\n    if sys.version_info < (3, 8):\n        pytest.skip('old')\n"
    tests = TESTS.replace("def test_loop():\n", body)
    assert tamper(repo, files(), lambda r: r.write("tests/test_loop.py", tests)) == []


MARKED = TESTS.replace(
    "\n\ndef test_loop",
    '\nskip_py314 = pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14")\n\n\n'
    "@skip_py314\ndef test_loop",
)


@pytest.mark.parametrize(("project", "reported"), [(PROJECT, False), (WITH_314, True)])
def test_a_marker_name_for_a_newer_python_is_read_against_the_classifiers(
    repo: GitRepo, project: str, reported: bool
):
    """A marker named once, `skip_py314 = pytest.mark.skipif(...)` applied as `@skip_py314`:
    while the classifiers list 3.14 the test is lost on a declared Python."""
    found = tamper(repo, files(project), lambda r: r.write("tests/test_loop.py", MARKED))
    assert bool(found) is reported, found


# -- the machine ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "reported"),
    [
        ('sys.platform != "linux" or platform.machine() != "x86_64"', False),
        ('platform.machine() == "aarch64"', False),
        ('platform.machine() in ("arm64", "aarch64")', False),
        ('platform.machine().startswith("arm")', False),
        ('platform.machine() == "AMD64"', False),
        ('platform.machine() not in ("x86_64", "AMD64")', False),
        ('platform.machine() != "aarch64"', True),
        ('platform.machine() == "x86_64"', True),
        ('platform.machine() != "AMD64"', True),
        ('platform.machine() != "X86_64"', True),
        ('platform.machine() != "x86-64"', True),
        ('platform.machine() == "aarch64" or os.environ.get("QEMU")', True),
    ],
)
def test_a_skip_off_x86_64_still_runs(repo: GitRepo, condition: str, reported: bool):
    found = tamper(repo, files(None), skip(condition))
    assert found == (ADDED if reported else [])


# -- a `sys` or `platform` of the module's own, and more conditions than the first --------------

FAKE_SYS = "version_info = (3, 99)\nplatform = 'win32'\n"


def written(tests: str, decorator: str) -> Callable[[GitRepo], None]:
    return lambda r: r.write("tests/test_loop.py", tests.replace("def test_loop", decorator, 1))


@pytest.mark.parametrize(
    ("bound", "condition"),
    [
        # The test module's own `sys`, a module of the project that says it is 3.99.
        ("from tests import fakesys as sys", "sys.version_info >= (3, 14)"),
        ("from tests import fakesys as sys", "'sys.version_info >= (3, 14)'"),  # pytest's string
        ("from tests import fakesys as sys", "sys.platform == 'win32'"),
        ("sys = type('S', (), {'version_info': (3, 99)})", "sys.version_info >= (3, 14)"),
        (
            "platform = type('P', (), {'machine': staticmethod(lambda: 'arm64')})",
            "platform.machine() == 'arm64'",
        ),
        # The standard module patched before the decorators are read.
        ("platform.machine = lambda: 'arm64'", "platform.machine() == 'arm64'"),
        ("setattr(sys, 'version_info', (3, 99))", "sys.version_info >= (3, 14)"),
        (
            "globals()['sys'] = type('S', (), {'version_info': (3, 99)})",
            "sys.version_info >= (3, 14)",
        ),
        # A `pytest` of the module's own, whose `mark.skipif` may skip whatever it is given.
        ("from tests import fakesys as pytest", "sys.platform == 'win32'"),
    ],
)
def test_a_condition_on_a_sys_of_the_modules_own_is_tampering(
    repo: GitRepo, bound: str, condition: str
):
    """The condition says what the module's own `sys` or `platform` makes it say: it may hold
    on every Python and machine; and a `pytest` of its own may skip whatever it says."""
    tests = TESTS.replace("import pytest\n", f"import pytest\n\n{bound}\n")
    base = {**files(), "tests/fakesys.py": FAKE_SYS, "tests/test_loop.py": tests}
    marker = f'@pytest.mark.skipif({condition}, reason="later")\ndef test_loop'
    found = [f.split(" ", 1)[1] for f in tamper(repo, base, written(tests, marker))]
    assert found == ["skip marker added to a test"]


def test_a_body_skip_on_a_patched_version_is_tampering(repo: GitRepo):
    """The test patches `sys.version_info` before the condition reads it."""
    body = (
        "def test_loop(monkeypatch):\n    monkeypatch.setattr(sys, 'version_info', (3, 99))\n"
        "    if sys.version_info >= (3, 14):\n        pytest.skip('later')\n"
    )
    found = tamper(
        repo,
        files(),
        lambda r: r.write("tests/test_loop.py", TESTS.replace("def test_loop():\n", body)),
    )
    assert [f.split(" ", 1)[1] for f in found] == ["skip marker added inside a test"]


def test_a_condition_on_the_standard_sys_beside_a_patch_of_something_else_still_runs(
    repo: GitRepo,
):
    """A patch of `os.path` or of `sys.argv` says nothing of `sys.version_info`: the skip on
    an undeclared Python passes."""
    tests = TESTS.replace(
        "    assert run() == 1\n",
        "    assert run() == 1\n\n\ndef test_other(monkeypatch):\n"
        "    monkeypatch.setattr(os.path, 'exists', lambda path: True)\n"
        "    monkeypatch.setattr(sys, 'argv', ['prog'])\n    assert run()\n",
    )
    base = {**files(), "tests/test_loop.py": tests}
    marker = '@pytest.mark.skipif(sys.version_info >= (3, 14), reason="later")\ndef test_loop'
    assert tamper(repo, base, written(tests, marker)) == []


@pytest.mark.parametrize(
    ("kind", "conditions"),
    [
        ("skipif", "sys.platform == 'win32', True"),
        ("skipif", "sys.version_info >= (3, 14), sys.version_info >= (3, 8)"),
        ("skipif", "platform.machine() == 'arm64', 'True'"),
        ("xfail", "sys.version_info >= (3, 14), True"),
    ],
)
def test_a_skip_given_a_second_condition_that_holds_is_tampering(
    repo: GitRepo, kind: str, conditions: str
):
    """pytest's `skipif` and `xfail` skip when any of their positional conditions holds, not
    only the first."""
    assert tamper(repo, files(), skip(conditions, kind)) == ADDED


def test_a_skip_whose_every_condition_holds_elsewhere_only_still_runs(repo: GitRepo):
    conditions = "sys.platform == 'win32', sys.version_info >= (3, 14)"
    assert tamper(repo, files(), skip(conditions)) == []
