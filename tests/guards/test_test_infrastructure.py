"""Test infrastructure (`guards.test_infrastructure`): tests switched off without touching a
test, through the files that configure or drive the run, are reported as test-tamper; ordinary
edits of those files (a marker registered, a fixture added) are not."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, config

BASE_FILES = {
    "src/app.py": "def add(a, b):\n    return a + b\n",
    "tests/test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n",
    "scripts/test.sh": "#!/bin/sh\nset -eu\npytest -q\n",
    "Makefile": "test:\n\tpytest -q\n",
    "package.json": '{\n  "name": "x",\n  "scripts": {\n    "test": "jest"\n  }\n}\n',
    "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n    session.run('pytest')\n",
    "spec/spec_helper.rb": "RSpec.configure do |config|\nend\n",
}


def infra(repo: GitRepo, edits: dict[str, str], setting: str = "") -> list[tuple[str, str]]:
    for path, text in BASE_FILES.items():
        repo.write(path, text)
    base = repo.commit("base")
    for path, text in edits.items():
        repo.write(path, text)
    result = repo.check(base, repo.commit("change"), config(setting))
    # Every test-tamper finding: some of these the rest of the rule reads (a skip in a fixture,
    # a narrowing ini setting); the infrastructure check covers what it does not.
    return [(v.path or "", v.message) for v in result.violations if v.rule == "test-tamper"]


CONFTEST = BASE_FILES["tests/conftest.py"]
ATTACKS = {
    "autouse skip": {
        "tests/conftest.py": CONFTEST
        + "\n\n@pytest.fixture(autouse=True)\ndef _off():\n    pytest.skip('later')\n"
    },
    "autouse xfail": {
        "tests/conftest.py": CONFTEST
        + "\n\n@pytest.fixture(autouse=True)\ndef _off(request):\n"
        + "    request.node.add_marker(pytest.mark.xfail(run=False))\n"
    },
    "runtestloop": {
        "tests/conftest.py": CONFTEST + "\n\ndef pytest_runtestloop(session):\n    return True\n"
    },
    "cmdline_main": {
        "conftest.py": "def pytest_cmdline_main(config):\n    return 0\n",
    },
    "selection rewritten": {
        "tests/conftest.py": CONFTEST
        + "\n\ndef pytest_collection_modifyitems(config, items):\n    items[:] = []\n"
    },
    "options set in configure": {
        "tests/conftest.py": CONFTEST
        + "\n\ndef pytest_configure(config):\n    config.option.keyword = 'nothing'\n"
    },
    "runtest patched": {
        "tests/conftest.py": CONFTEST
        + "\nfrom _pytest.python import Function\n\nFunction.runtest = lambda self: None\n"
    },
    "TestCase.run patched": {
        "tests/__init__.py": "import unittest\n\nunittest.TestCase.run = lambda self, r=None: r\n"
    },
    "package init skips": {
        "tests/__init__.py": "import pytest\n\npytest.skip('off', allow_module_level=True)\n"
    },
    "make .IGNORE": {"Makefile": ".IGNORE:\ntest:\n\tpytest -q\n"},
    "MAKEFLAGS -i": {"Makefile": "MAKEFLAGS += -i\ntest:\n\tpytest -q\n"},
    "recipe dash": {"Makefile": "test:\n\t-pytest -q\n"},
    "nox success_codes": {
        "noxfile.py": BASE_FILES["noxfile.py"].replace(
            "session.run('pytest')", "session.run('pytest', success_codes=[0, 1])"
        )
    },
    "set -e lost, ends in true": {"scripts/test.sh": "#!/bin/sh\npytest -q\ntrue\n"},
    "passWithNoTests": {
        "package.json": BASE_FILES["package.json"].replace('"jest"', '"jest --passWithNoTests"')
    },
    "jest setup replaces expect": {
        "jest.setup.js": "global.expect = () => ({ toBe() {}, toEqual() {} });\n"
    },
    "rspec exclude": {".rspec": "--exclude-pattern spec/**/*_spec.rb\n"},
    "rspec filter": {
        "spec/spec_helper.rb": "RSpec.configure do |config|\n"
        "  config.filter_run_excluding :all\nend\n"
    },
    "cargo alias": {".cargo/config.toml": '[alias]\ntest = "test --no-run"\n'},
    "pytest.ini addopts": {"pytest.ini": "[pytest]\naddopts = -p no:python\n"},
    "xfail not strict": {"pytest.ini": "[pytest]\nxfail_strict = false\n"},
    "sitecustomize": {"sitecustomize.py": "import os\nos.environ['PYTEST_ADDOPTS'] = '-k none'\n"},
}


@pytest.mark.parametrize("case", sorted(ATTACKS))
def test_tests_switched_off_through_the_infrastructure_are_reported(repo: GitRepo, case: str):
    setting = 'test_command: "make test && ./scripts/test.sh"\n'
    found = infra(repo, ATTACKS[case], setting)
    assert found, case
    infrastructure = [m for _, m in found if "test infrastructure" in m]
    assert all("/ourobot override" in message for message in infrastructure)


NEAR_MISSES = {
    "markers registered": {
        "tests/conftest.py": CONFTEST
        + "\n\ndef pytest_configure(config):\n"
        + '    config.addinivalue_line("markers", "slow: a slow test")\n'
    },
    "a fixture added": {
        "tests/conftest.py": CONFTEST + "\n\n@pytest.fixture\ndef more():\n    return [3]\n"
    },
    "a windows-only skip in a test": {
        "tests/test_app.py": BASE_FILES["tests/test_app.py"]
        + "\n\n@pytest.mark.skipif(sys.platform != 'win32', reason='windows')\n"
        + "def test_paths():\n    assert True\n"
    },
    "a test file moved": {"tests/unit/test_app.py": BASE_FILES["tests/test_app.py"]},
    "a comment in the test script": {"scripts/test.sh": "#!/bin/sh\nset -eu\n# run\npytest -q\n"},
    "package.json version bumped": {
        "package.json": BASE_FILES["package.json"].replace('"x"', '"x",\n  "version": "2.0.0"')
    },
    "a Makefile target the test command does not run": {
        "Makefile": "test:\n\tpytest -q\n\nlint:\n\t-ruff check .\n"
    },
    "pyproject metadata": {"pyproject.toml": '[project]\nname = "x"\nversion = "1.0"\n'},
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_ordinary_edits_of_the_infrastructure_pass(repo: GitRepo, case: str):
    edits = dict(NEAR_MISSES[case])
    if case == "a test file moved":
        repo.write("tests/test_app.py", BASE_FILES["tests/test_app.py"])
    assert infra(repo, edits, 'test_command: "./scripts/test.sh"\n') == []


def test_the_recipe_of_a_makefile_counts_only_when_the_test_command_runs_make(repo: GitRepo):
    edits = {"Makefile": ".IGNORE:\ntest:\n\tpytest -q\n"}
    assert infra(repo, edits) == []  # the default test command is `pytest -q`


@pytest.mark.parametrize(
    ("edits", "setting", "reported"),
    [
        ({"ci/harness.cfg": "[nox]\nsuccess_codes = 0,1\n"}, "", False),
        (
            {"ci/harness.cfg": "[nox]\nsuccess_codes = 0,1\n"},
            "guards:\n  extra_test_infrastructure_paths: ['*.cfg']\n",
            True,
        ),
        (
            {"ci/run-tests": "pytest -q || true\n"},
            "guards:\n  extra_test_infrastructure_paths: ['ci/run-tests']\n",
            True,
        ),
        (ATTACKS["runtestloop"], "guards:\n  test_infrastructure: false\n", False),
        (ATTACKS["runtestloop"], "guards:\n  test_infrastructure_paths: ['noxfile.py']\n", False),
    ],
    ids=["not listed", "extra pattern", "extra file of no known kind", "off", "replaced"],
)
def test_the_check_is_switched_off_and_its_patterns_configured(
    repo: GitRepo, edits: dict[str, str], setting: str, reported: bool
):
    assert bool(infra(repo, edits, setting)) is reported


def test_a_construct_only_moved_within_the_file_is_no_change(repo: GitRepo):
    repo.write("conftest.py", "import pytest\n\n\ndef pytest_runtestloop(session):\n    pass\n")
    base = repo.commit("base")
    repo.write("conftest.py", "def pytest_runtestloop(session):\n    pass\n\n\nimport pytest\n")
    result = repo.check(base, repo.commit("moved"))
    assert [v for v in result.violations if "test infrastructure" in v.message] == []
