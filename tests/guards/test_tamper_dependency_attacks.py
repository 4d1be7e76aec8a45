"""Red team of the exemption for skips that fire only when a package installed for the tests is
missing (`app.guards.tamper.conditions.test_dependencies`,
`app.guards.tamper.conditions.dependency_skips`): each change below writes one of the three shapes
so that it fires although the package is installed, or makes an installed package fail to import,
and must still be reported. Real rule, real git."""

from __future__ import annotations

import ast

import pytest

from tests.guards.conftest import GitRepo, tamper
from tests.guards.test_tamper_dependency_skips import (
    HANDLER_GUARD,
    HANDLER_SKIP,
    IMPORTORSKIP,
    LISTED_FILES,
    TESTS,
    extras,
    reported,
    skipped,
)

# The base imports these unguarded: `from pytest_codspeed import BenchmarkFixture`, a name
# taken from the package, not a submodule of it.
NAME_AS_MODULE = [
    # `import a.n` of a name `n` the base took `from a`: no module `a.n` exists, so the
    # import always fails.
    HANDLER_SKIP.replace(
        "from pytest_codspeed import BenchmarkFixture", "import pytest_codspeed.BenchmarkFixture"
    ),
    TESTS.replace("():\n", '():\n    pytest.importorskip("pytest_codspeed.BenchmarkFixture")\n'),
]
# Names that are the distribution's once normalised, but no module Python can import: import
# names are case-sensitive, and `pytest__codspeed` is not `pytest_codspeed`.
MISSPELT = [
    IMPORTORSKIP.replace('"mock"', '"Mock"'),
    IMPORTORSKIP.replace('"mock"', '"MOCK"'),
    IMPORTORSKIP.replace('"mock"', '"Pytest__Codspeed"'),
    HANDLER_SKIP.replace("from pytest_codspeed import BenchmarkFixture", "import pytest__codspeed"),
]


@pytest.mark.parametrize("head", NAME_AS_MODULE + MISSPELT)
def test_an_import_that_always_fails_is_reported(repo: GitRepo, head: str):
    ast.parse(head)
    found = reported(tamper(repo, LISTED_FILES, skipped(head)))
    assert len(found) == 1
    assert found[0].startswith(("skip marker added", "module-wide skip marker added"))


# Ways to make an installed package fail to import without a file of its name in the tree
# and without the words `sys.modules`, `meta_path`, `__import__` or `builtins`.
SHADOW_AT_RUN_TIME = """\
import pathlib
import sys
import tempfile

_STUBS = tempfile.mkdtemp()
pathlib.Path(_STUBS, "mock.py").write_text("raise ImportError('not here')\\n")
sys.path.insert(0, _STUBS)
"""
# pytest puts the folder of a conftest.py first on `sys.path` (its default `prepend` import
# mode): a module written there at run time shadows the installed one, and no file of that
# name is in the tree.
SHADOW_NEXT_TO_CONFTEST = """\
import pathlib

pathlib.Path(__file__).with_name("mock.py").write_text("raise ImportError\\n")
"""
SHADOW_BY_PYTHONPATH = """\
import pathlib

STUBS = pathlib.Path(__file__).parent / ".stubs"
STUBS.mkdir(exist_ok=True)
(STUBS / "mock.py").write_text("raise ImportError\\n")
"""


@pytest.mark.parametrize(
    "extra",
    [
        {"tests/conftest.py": SHADOW_AT_RUN_TIME},
        {"tests/conftest.py": SHADOW_NEXT_TO_CONFTEST},
        {
            "tests/conftest.py": SHADOW_BY_PYTHONPATH,
            "pytest.ini": "[pytest]\npythonpath = tests/.stubs\n",
        },
    ],
)
def test_an_installed_package_made_to_fail_its_import_is_reported(
    repo: GitRepo, extra: dict[str, str]
):
    found = reported(tamper(repo, LISTED_FILES, skipped(IMPORTORSKIP, extra)))
    assert found == ["skip marker added inside a test"]


# The guard made None whatever the import did, by a statement `binding_count` does not see.
GUARD_REBOUND = [
    HANDLER_GUARD.replace("@pytest", 'globals()["mypy_api"] = None\n\n\n@pytest'),
    HANDLER_GUARD.replace("@pytest", 'vars()["mypy_api"] = None\n\n\n@pytest'),
]


@pytest.mark.parametrize("head", GUARD_REBOUND)
def test_a_guard_rebound_out_of_sight_is_reported(repo: GitRepo, head: str):
    ast.parse(head)
    found = reported(tamper(repo, LISTED_FILES, skipped(head)))
    assert found == ["skip marker added to a test"]


# What decides the installed version besides the listing: pinned, by a file the change edits,
# to one that does not have the name the base imported.
PINNED = [
    {
        "requirements/test.txt": "-c constraints.txt\npytest-codspeed\n",
        "constraints.txt": "pytest-codspeed==1.0.0\n",
    },
    {
        "pyproject.toml": LISTED_FILES["pyproject.toml"]
        + '\n[tool.uv]\nconstraint-dependencies = ["pytest-codspeed<2"]\n'
    },
    {"uv.lock": 'version = 1\n\n[[package]]\nname = "pytest-codspeed"\nversion = "1.0.0"\n'},
]


@pytest.mark.parametrize("pin", PINNED)
def test_a_package_pinned_by_the_change_is_reported(repo: GitRepo, pin: dict[str, str]):
    base = {
        **LISTED_FILES,
        "requirements/test.txt": "-c constraints.txt\npytest-codspeed\n",
        "constraints.txt": "pytest-codspeed==3.2.0\n",
        "uv.lock": 'version = 1\n\n[[package]]\nname = "pytest-codspeed"\nversion = "3.2.0"\n',
    }
    found = reported(tamper(repo, base, skipped(HANDLER_SKIP, pin)))
    assert found == ["module-wide skip marker added"]


def test_deps_left_uninstalled_by_the_change_are_reported(repo: GitRepo):
    """tox's `[testenv] deps` stay listed, but the change tells tox not to install them."""
    tox = "[testenv]\ndeps =\n    mock\ncommands = pytest\n"
    files = {
        "pyproject.toml": '[project]\nname = "p"\n',
        "tox.ini": tox,
        "tests/test_edit.py": TESTS,
    }
    head_tox = tox + "install_command = python -c pass {packages}\n"
    found = reported(tamper(repo, files, skipped(IMPORTORSKIP, {"tox.ini": head_tox})))
    assert found == ["skip marker added inside a test"]


def test_an_importorskip_of_a_pytest_of_the_modules_own_is_reported(repo: GitRepo):
    """`pytest` in the module is the project's helper, whose `importorskip` always skips."""
    helper = "import pytest as _pytest\n\n\ndef importorskip(name):\n    _pytest.skip(name)\n"
    head = IMPORTORSKIP.replace("import pytest\n", "from tests import helpers as pytest\n")
    found = reported(tamper(repo, LISTED_FILES, skipped(head, {"tests/helpers.py": helper})))
    assert found == ["skip marker added inside a test"]


def test_a_guard_given_a_second_condition_is_reported(repo: GitRepo):
    """pytest's `skipif` skips when any of its positional conditions holds: the `True` after
    the guard skips wherever the package is installed."""
    head = HANDLER_GUARD.replace("(mypy_api is None,", "(mypy_api is None, True,")
    ast.parse(head)
    assert reported(tamper(repo, LISTED_FILES, skipped(head))) == ["skip marker added to a test"]


def test_a_package_pinned_exactly_passes_whatever_else_the_change_pins(repo: GitRepo):
    """yarl and loguru pin what they guard exactly (`==3.2.0`): a lock file the change
    rewrites cannot install another version."""
    files = {**LISTED_FILES, "pyproject.toml": extras("dev", "mock", "pytest-codspeed==3.2.0")}
    lock = 'version = 1\n\n[[package]]\nname = "pytest-codspeed"\nversion = "1.0.0"\n'
    assert tamper(repo, files, skipped(HANDLER_SKIP, {"uv.lock": lock})) == []


def test_a_constraints_file_named_by_the_listing_is_one_whatever_its_name(repo: GitRepo):
    base = {**LISTED_FILES, "requirements/test.txt": "-c ../pins.txt\npytest-codspeed\n"}
    change = skipped(HANDLER_SKIP, {"pins.txt": "pytest-codspeed==1.0.0\n"})
    assert reported(tamper(repo, base, change)) == ["module-wide skip marker added"]


def test_a_plugin_the_change_loads_first_is_reported(repo: GitRepo):
    """`-p tests.stubs` loads, before any test module, a plugin that may shadow `mock`."""
    found = reported(
        tamper(
            repo,
            LISTED_FILES,
            skipped(IMPORTORSKIP, {"pytest.ini": "[pytest]\naddopts = -p tests.stubs\n"}),
        )
    )
    assert found == ["skip marker added inside a test"]


CONFTEST = "import pytest\n"
# A fixture whose `params` are marked by what is installed, that imports
# the project's own code it does not touch.
PARAMETRIZED_FIXTURE = """\
import importlib.util

import pytest

from p import helper


@pytest.fixture(
    params=[
        pytest.param("a", marks=pytest.mark.skipif(not importlib.util.find_spec("x"), reason="")),
    ]
)
def protocol(request):
    return helper(request.param)
"""
AUTOUSE_FIXTURE = """\
import pathlib

import pytest


@pytest.fixture(autouse=True)
def stubs():
    pathlib.Path(__file__).with_name("mock.py").write_text("raise ImportError\\n")
"""


@pytest.mark.parametrize(
    ("conftest", "expected"),
    [(PARAMETRIZED_FIXTURE, []), (AUTOUSE_FIXTURE, ["skip marker added inside a test"])],
)
def test_a_conftest_change_unsettles_only_with_code_that_runs_before_every_test(
    repo: GitRepo, conftest: str, expected: list[str]
):
    files = {**LISTED_FILES, "p/__init__.py": "def helper(x):\n    return x\n"}
    base = {**files, "tests/conftest.py": CONFTEST}
    change = skipped(IMPORTORSKIP, {"tests/conftest.py": conftest})
    assert reported(tamper(repo, base, change)) == expected
