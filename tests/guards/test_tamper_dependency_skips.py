"""`test-tamper` and skips that fire only when a package is missing: `pytest.importorskip`, a skip
in the `except ImportError:` of an import, a `skipif` on an import guard. Such a skip passes when
the package is one the project installs for its tests, listed at the base and still at the head
(`app.guards.tamper.conditions.test_dependencies`, `app.guards.tamper.conditions.dependency_skips`);
any other is reported, as before. Real rule, real git."""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest

from tests.guards.conftest import GitRepo, tamper

PROJECT = '[project]\nname = "p"\nrequires-python = ">=3.9"\n'
# The base: the test module imports what the shapes below guard, unguarded.
TESTS = (
    "import os\n\nimport mypy.api\nimport pytest\nfrom pytest_codspeed import BenchmarkFixture\n"
    "\n\ndef test_edit():\n    assert edit('a') == 'a'\n"
)
# An `importorskip` at the top of an existing test.
IMPORTORSKIP = TESTS.replace("():\n", '():\n    pytest.importorskip("mock")\n')
# A module skipped where its benchmark plugin does not import.
HANDLER_SKIP = TESTS.replace(
    "from pytest_codspeed import BenchmarkFixture\n",
    "\ntry:\n    from pytest_codspeed import BenchmarkFixture\nexcept ImportError:\n"
    '    pytestmark = pytest.mark.skip("pytest-codspeed needs to be installed")\n',
)
SKIPIF = '@pytest.mark.skipif(mypy_api is None, reason="needs mypy")\ndef test_edit'
# The name bound to None in the `try`, before its import.
LOGURU_GUARD = TESTS.replace(
    "import mypy.api\n",
    "try:\n    mypy_api = None  # type: Optional[ModuleType]\n"
    "    import mypy.api as mypy_api  # noqa: F811\nexcept ImportError:\n    pass\n",
).replace("def test_edit", SKIPIF)
# The same, bound to None in the handler.
HANDLER_GUARD = TESTS.replace(
    "import mypy.api\n",
    "try:\n    from mypy import api as mypy_api\nexcept ImportError:\n    mypy_api = None\n",
).replace("def test_edit", SKIPIF)


def extras(group: str, *requirements: str) -> str:
    listed = ", ".join(f'"{requirement}"' for requirement in requirements)
    return PROJECT + f"\n[project.optional-dependencies]\n{group} = [{listed}]\n"


# The project lists everything the shapes import, and itself, for its tests.
LISTED_FILES = {
    "pyproject.toml": extras("dev", "mock", "pytest-codspeed", "mypy", "p[test]"),
    "p/__init__.py": "",
    "tests/test_edit.py": TESTS,
}


def skipped(head: str, extra: dict[str, str] | None = None) -> Callable[[GitRepo], None]:
    """The change: `head` written over the test file, and `extra` files written too."""

    def change(r: GitRepo) -> None:
        r.write("tests/test_edit.py", head)
        for path, text in (extra or {}).items():
            r.write(path, text)

    return change


def reported(found: list[str]) -> list[str]:
    return [line.split(" ", 1)[1] for line in found]


@pytest.mark.parametrize(
    ("head", "files"),
    [
        (IMPORTORSKIP, {"pyproject.toml": extras("test", "mock>=4")}),
        (IMPORTORSKIP, {"pyproject.toml": extras("Testing", "Mock")}),
        (IMPORTORSKIP, {"pyproject.toml": PROJECT, "tox.ini": "[testenv]\ndeps =\n    mock\n"}),
        (
            HANDLER_SKIP,
            {
                "pyproject.toml": PROJECT,
                "requirements/test.txt": "-r base.txt\npytest==8.3.5\n",
                "requirements/base.txt": "pytest_codspeed==3.2.0  # benchmarks\n",
            },
        ),
        (HANDLER_SKIP, {"requirements-dev.txt": "pytest-codspeed ; sys_platform != 'win32'\n"}),
        (
            LOGURU_GUARD,
            {
                "pyproject.toml": extras(
                    "dev",
                    "mypy==v0.910 ; python_version<'3.10'",
                    "mypy==v1.18.2 ; python_version>='3.10' and python_version<'3.12'",
                    "mypy==v1.20.0 ; python_version>='3.12'",
                )
            },
        ),
        (
            HANDLER_GUARD,
            {
                "pyproject.toml": PROJECT
                + '\n[dependency-groups]\ntyping = ["mypy"]\ndev = [{include-group = "typing"}]\n'
            },
        ),
    ],
)
def test_a_skip_on_a_package_installed_for_the_tests_passes(
    repo: GitRepo, head: str, files: dict[str, str]
):
    assert tamper(repo, {**files, "tests/test_edit.py": TESTS}, skipped(head)) == []


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (IMPORTORSKIP, "tests/test_edit.py:9 skip marker added inside a test"),
        (HANDLER_SKIP, "tests/test_edit.py:9 module-wide skip marker added"),
        (LOGURU_GUARD, "tests/test_edit.py:12 skip marker added to a test"),
    ],
)
def test_the_shapes_on_a_package_listed_for_the_docs_only_are_reported(
    repo: GitRepo, head: str, expected: str
):
    files = {"pyproject.toml": extras("docs", "mock", "pytest-codspeed", "mypy")}
    assert tamper(repo, {**files, "tests/test_edit.py": TESTS}, skipped(head)) == [expected]


def test_a_package_the_change_itself_adds_to_the_requirements_is_reported(repo: GitRepo):
    """The change lists `mock` in tox.ini in the same change: the base did not
    install it, so the skip may fire where the suite ran before."""
    tox = "[testenv]\ndeps =\n    coverage\n"
    change = skipped(IMPORTORSKIP, {"tox.ini": tox + "    mock\n"})
    found = tamper(repo, {"tox.ini": tox, "tests/test_edit.py": TESTS}, change)
    assert reported(found) == ["skip marker added inside a test"]


def test_a_package_moved_to_another_requirements_file_passes(repo: GitRepo):
    """The change moves `pytest_codspeed==3.2.0` from requirements/test.txt to a new
    requirements/codspeed.txt that requirements/dev.txt includes: listed alike at the head."""
    files = {
        "requirements/test.txt": "pytest==8.3.5\npytest_codspeed==3.2.0\n",
        "requirements/dev.txt": "-r test.txt\n",
        "tests/test_edit.py": TESTS,
    }
    moved = {
        "requirements/test.txt": "pytest==8.3.5\n",
        "requirements/codspeed.txt": "-r test.txt\npytest-codspeed == 3.2.0\n",
        "requirements/dev.txt": "-r codspeed.txt\n",
    }
    assert tamper(repo, files, skipped(HANDLER_SKIP, moved)) == []


def test_a_package_the_change_drops_from_the_requirements_is_reported(repo: GitRepo):
    files = {"requirements/test.txt": "mock\npytest\n", "tests/test_edit.py": TESTS}
    change = skipped(IMPORTORSKIP, {"requirements/test.txt": "pytest\n"})
    assert reported(tamper(repo, files, change)) == ["skip marker added inside a test"]


@pytest.mark.parametrize(
    "listed",
    [
        # Not installed on every supported Python (3.9 on), or not known to be.
        'mock ; python_version < "3.8"',
        'mock ; python_version >= "3.10"',
        "mock ; platform_machine == 'x86_64'",
        "mock ; sys_platform == 'win32'",
        "mock ; implementation_name == 'pypy'",
        # Another distribution, or none.
        "mocking",
        "git+https://example.invalid/mock.git",
        "-e ./mock",
        # For some tox factors only.
        "py39: mock",
    ],
)
def test_a_package_not_installed_everywhere_the_suite_runs_is_reported(repo: GitRepo, listed: str):
    tox = "[testenv]\ndeps =\n    " + listed + "\n"
    files = {"pyproject.toml": PROJECT, "tox.ini": tox, "tests/test_edit.py": TESTS}
    assert reported(tamper(repo, files, skipped(IMPORTORSKIP))) == [
        "skip marker added inside a test"
    ]


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("requirements.txt", "mock\n"),
        ("requirements/docs.txt", "mock\n"),
        ("docs/requirements-dev.txt", "mock\n"),
        ("tox.ini", "[testenv:docs]\ndeps =\n    mock\n"),
        ("pyproject.toml", PROJECT + '\n[dependency-groups]\ndocs = ["mock"]\n'),
    ],
)
def test_a_package_listed_only_for_something_else_is_reported(repo: GitRepo, where: str, text: str):
    files = {"pyproject.toml": PROJECT, where: text, "tests/test_edit.py": TESTS}
    assert reported(tamper(repo, files, skipped(IMPORTORSKIP))) == [
        "skip marker added inside a test"
    ]


@pytest.mark.parametrize(
    ("head", "extra"),
    [
        # A module of the project's own, even when it lists itself for its tests.
        (TESTS.replace("():\n", '():\n    pytest.importorskip("p.extra")\n'), {}),
        # A module of the project's own of the package's name.
        (IMPORTORSKIP, {"tests/mock.py": "raise ImportError\n"}),
        # The package made to fail its import.
        (IMPORTORSKIP, {"tests/conftest.py": "import sys\n\nsys.modules['mock'] = None\n"}),
        # A version the installed package may not have, a submodule or a name it may not
        # have (the base's file never imported them), or a version changed with the skip.
        (IMPORTORSKIP.replace('"mock")', '"mock", minversion="9")'), {}),
        (IMPORTORSKIP.replace('"mock")', '"mock.nothing")'), {}),
        (HANDLER_SKIP.replace("import BenchmarkFixture", "import BenchmarkFixture, Missing"), {}),
        (
            HANDLER_GUARD,
            {"pyproject.toml": extras("dev", "mock", "pytest-codspeed", "mypy>=2", "p[test]")},
        ),
        # An import of the project's own code in the same `try`.
        (HANDLER_SKIP.replace("Fixture\n", "Fixture\n    from p import feature\n"), {}),
        # A handler that catches more than a failed import.
        (HANDLER_SKIP.replace("except ImportError", "except Exception"), {}),
        # The statement skipping is not the handler's.
        (
            HANDLER_SKIP.replace("    pytestmark =", "    pass\npytestmark ="),
            {},
        ),
        # A condition on another name than the import guards.
        (HANDLER_GUARD.replace("(mypy_api is None", "(os.environ.get('CI') is None"), {}),
        (
            HANDLER_GUARD.replace("(mypy_api is None", "(mypy_api is None or os.environ.get('CI')"),
            {},
        ),
        # The guard bound again elsewhere, or to None whatever the import does.
        (HANDLER_GUARD.replace("@pytest", "mypy_api = None\n\n\n@pytest"), {}),
        (
            HANDLER_GUARD.replace(
                "except ImportError:\n", "    mypy_api = None\nexcept ImportError:\n"
            ),
            {},
        ),
    ],
)
def test_a_skip_that_may_fire_with_the_package_installed_is_reported(
    repo: GitRepo, head: str, extra: dict[str, str]
):
    ast.parse(head)  # the near miss is Python, not a file that cannot be read
    found = reported(tamper(repo, LISTED_FILES, skipped(head, extra)))
    assert len(found) == 1
    assert found[0].startswith(("skip marker added", "module-wide skip marker added"))


@pytest.mark.parametrize("head", [IMPORTORSKIP, HANDLER_SKIP, HANDLER_GUARD])
def test_the_near_misses_differ_from_a_skip_that_passes(repo: GitRepo, head: str):
    """The same files with each shape written plainly: what the near misses change is what
    gets them reported."""
    assert tamper(repo, LISTED_FILES, skipped(head)) == []


def test_an_importorskip_taken_off_pays_for_no_other_skip(repo: GitRepo):
    """A skip on an installed package never fired: replacing it with an unconditional skip
    is a new skip, not a rewording."""
    files = {"pyproject.toml": extras("test", "mock"), "tests/test_edit.py": IMPORTORSKIP}
    head = IMPORTORSKIP.replace('pytest.importorskip("mock")', 'pytest.skip("broken")')
    found = tamper(repo, files, skipped(head))
    assert reported(found) == ["skip marker added inside a test"]


# A flag set in the `try` of the imports, read in a test's body.
FLAG_TRY = (
    "try:\n    import mock\n\n    HAVE_MOCK = True\nexcept ImportError:  # pragma: no cover\n"
    "    HAVE_MOCK = False\n"
)
FLAG_SKIP = TESTS.replace(
    "\n\n\ndef test_edit():\n", "\n" + FLAG_TRY + "\n\ndef test_edit():\n"
).replace("():\n", '():\n    if not HAVE_MOCK:\n        pytest.skip("mock not installed")\n')
FLAG_MARKER = TESTS.replace(
    "\n\n\ndef test_edit",
    "\n" + FLAG_TRY + '\n\n@pytest.mark.skipif(not HAVE_MOCK, reason="needs mock")\ndef test_edit',
)
# A distribution's version, empty where it is not installed, read by a
# marker the module names.
VERSION_TRY = (
    'try:\n    mock_version: str = importlib.metadata.version("mock")\n'
    'except PackageNotFoundError:\n    mock_version = ""\n'
)
VERSION_MARKER = TESTS.replace(
    "import os\n",
    "import importlib.metadata\nimport os\nfrom importlib.metadata import PackageNotFoundError\n",
).replace(
    "\n\n\ndef test_edit",
    "\n" + VERSION_TRY + "\n\nrequire_mock = pytest.mark.skipif(\n"
    '    not mock_version, reason="mock not installed"\n)\n\n\n@require_mock\ndef test_edit',
)


@pytest.mark.parametrize(
    "requirements",
    [
        # uvicorn's and httpx's development environment: the project, then what the tests use.
        "-e .[standard]\n\n# Testing\nmock==5.1.0\n",
        ".\nmock\n",
        "--editable=.\n-r requirements/tools.txt\n",
    ],
)
@pytest.mark.parametrize("head", [IMPORTORSKIP, FLAG_SKIP, FLAG_MARKER, VERSION_MARKER])
def test_a_root_requirements_file_that_installs_the_project_counts(
    repo: GitRepo, requirements: str, head: str
):
    """`pytest.importorskip("wsproto")`, wsproto listed only in the root
    requirements.txt that starts with `-e .[standard]`."""
    files = {
        "pyproject.toml": PROJECT,
        "requirements.txt": requirements,
        "requirements/tools.txt": "mock\n",
        "tests/test_edit.py": TESTS,
    }
    assert tamper(repo, files, skipped(head)) == []


def test_the_extras_the_requirements_file_installs_the_project_with_count(repo: GitRepo):
    files = {
        "pyproject.toml": PROJECT + '\n[project.optional-dependencies]\nstandard = ["mock"]\n',
        "requirements.txt": "-e .[standard]\n",
        "tests/test_edit.py": TESTS,
    }
    assert tamper(repo, files, skipped(IMPORTORSKIP)) == []


@pytest.mark.parametrize(
    ("requirements", "edited"),
    [
        # An application's requirements, or another package's, not the project's.
        ("mock\n", None),
        ("-e ./plugins/p\nmock\n", None),
        ("-e .[standard]\n", None),  # mock is in the `docs` extra only
        # The change lists the package, installs the project, or stops installing it (or
        # the extra that lists it).
        ("-e .\n", "-e .\nmock\n"),
        ("mock\n", "-e .\nmock\n"),
        ("-e .\nmock\n", "mock\n"),
        ("-e .[docs]\n", "-e .\n"),
    ],
)
def test_a_root_requirements_file_that_does_not_install_the_project_at_both_sides_is_reported(
    repo: GitRepo, requirements: str, edited: str | None
):
    project = PROJECT + '\n[project.optional-dependencies]\ndocs = ["mock"]\n'
    files = {
        "pyproject.toml": project,
        "requirements.txt": requirements,
        "tests/test_edit.py": TESTS,
    }
    change = skipped(IMPORTORSKIP, {"requirements.txt": edited} if edited else None)
    assert reported(tamper(repo, files, change)) == ["skip marker added inside a test"]


def test_uvicorns_trustme_flag_in_a_fixture_passes_where_its_requirements_list_trustme(
    repo: GitRepo,
):
    """The change guards the imports of tests/conftest.py (the base imported them
    unguarded) with `HAVE_TRUSTME` and skips a fixture on it; trustme and cryptography are
    listed in the root requirements.txt, which installs the project."""
    imports = (
        "import trustme\nfrom cryptography.hazmat.backends import default_backend\n"
        "from cryptography.hazmat.primitives import serialization\n"
    )
    fixture = "\n\n@pytest.fixture\ndef tls_certificate_authority() -> trustme.CA:\n"
    body = "    return trustme.CA()\n"
    base = "import pytest\n" + imports + fixture + body
    guarded = "    " + imports.replace("\n", "\n    ")
    skip = '    if not HAVE_TRUSTME:\n        pytest.skip("trustme not installed")\n'
    head = (
        "import pytest\n\ntry:\n" + guarded + "\n    HAVE_TRUSTME = True\n"
        "except ImportError:  # pragma: no cover\n    HAVE_TRUSTME = False\n"
        + fixture.replace("trustme.CA", '"trustme.CA"')
        + skip
        + body
    )
    ast.parse(head)
    requirements = "-e .[standard]\n\n# Testing\ntrustme==0.9.0\ncryptography==39.0.1\n"

    def change(r: GitRepo) -> None:
        r.write("tests/conftest.py", head)

    files = {"pyproject.toml": PROJECT, "tests/conftest.py": base, "tests/test_a.py": TESTS}
    assert tamper(repo, {**files, "requirements.txt": requirements}, change) == []
    application = requirements.replace("-e .[standard]\n", "")
    found = reported(tamper(repo, {**files, "requirements.txt": application}, change))
    assert found == ["skip marker added inside a fixture or helper"]


def test_werkzeugs_watchdog_version_stays_reported_where_the_change_uninstalls_watchdog(
    repo: GitRepo,
):
    """The change adds the `watchdog_version` skip and, in the same change, a tox
    environment that runs `uv pip uninstall watchdog` first: there the skip fires."""
    tox = "[testenv]\ndeps =\n    mock\n"
    uninstall = tox + "\n[testenv:py314t]\ncommands_pre =\n    uv pip uninstall mock\n"
    files = {"pyproject.toml": PROJECT, "tox.ini": tox, "tests/test_edit.py": TESTS}
    assert tamper(repo, files, skipped(VERSION_MARKER)) == []
    found = tamper(repo, files, skipped(VERSION_MARKER, {"tox.ini": uninstall}))
    assert reported(found) == ["skip marker added to a test"]


def test_a_version_named_by_its_distribution_passes(repo: GitRepo):
    head = VERSION_MARKER.replace(
        "import importlib.metadata\n", "from importlib.metadata import version\n"
    ).replace('importlib.metadata.version("mock")', 'version("Pytest-Codspeed")')
    files = {"requirements/test.txt": "pytest-codspeed==3.2.0\n", "tests/test_edit.py": TESTS}
    assert tamper(repo, files, skipped(head)) == []


@pytest.mark.parametrize(
    "head",
    [
        # The flag bound again elsewhere, in a function too, or written from outside.
        FLAG_SKIP.replace("\n\n\ndef test_edit", "\n\nHAVE_MOCK = False\n\n\ndef test_edit"),
        FLAG_SKIP + "\n\ndef helper():\n    global HAVE_MOCK\n    HAVE_MOCK = True\n",
        FLAG_SKIP + '\n\nglobals()["HAVE_MOCK"] = False\n',
        FLAG_SKIP
        + '\n\ndef test_off(monkeypatch):\n    monkeypatch.setattr(f"{__name__}.HAVE_MOCK", 0)\n',
        # A handler that catches more than a failed import, or sets the flag true; a flag
        # false whatever the import does.
        FLAG_SKIP.replace("except ImportError:", "except Exception:"),
        FLAG_MARKER.replace("except ImportError:", "except Exception:"),
        FLAG_SKIP.replace("    HAVE_MOCK = False\n", "    HAVE_MOCK = 1\n"),
        FLAG_SKIP.replace("    HAVE_MOCK = True\n", "    HAVE_MOCK = False\n"),
        # The branch taken where mock imports; the flag set in a `try` of something else.
        FLAG_SKIP.replace("if not HAVE_MOCK", "if HAVE_MOCK"),
        FLAG_SKIP.replace("    import mock\n", "    import mock\n    import requests\n"),
        FLAG_MARKER.replace("(not HAVE_MOCK,", "(not HAVE_MOCK or os.environ.get('CI'),"),
        # A version of a package not installed for the tests, or of one given by another
        # function; a version that may be too old; a handler that may catch anything.
        VERSION_MARKER.replace('version("mock")', 'version("requests")'),
        VERSION_MARKER.replace("import importlib.metadata\n", "import p as importlib\n"),
        VERSION_MARKER.replace("not mock_version,", 'mock_version < "5",'),
        VERSION_MARKER.replace("except PackageNotFoundError:", "except Exception:"),
        VERSION_MARKER.replace('    mock_version = ""\n', '    mock_version = "0"\n'),
        VERSION_MARKER.replace("\n\nrequire_mock", '\n\nmock_version = ""\nrequire_mock'),
    ],
)
def test_a_flag_or_version_that_may_be_false_with_the_package_installed_is_reported(
    repo: GitRepo, head: str
):
    ast.parse(head)  # the near miss is Python, not a file that cannot be read
    found = reported(tamper(repo, LISTED_FILES, skipped(head)))
    assert found in (["skip marker added to a test"], ["skip marker added inside a test"])


@pytest.mark.parametrize("head", [FLAG_SKIP, FLAG_MARKER, VERSION_MARKER])
def test_the_flag_and_version_near_misses_differ_from_a_skip_that_passes(repo: GitRepo, head: str):
    assert tamper(repo, LISTED_FILES, skipped(head)) == []
