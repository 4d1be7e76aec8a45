"""Which sections of pyproject.toml, setup.cfg and tox.ini a change touched: a version bump is
not runner configuration, a new `addopts` is, and a file that does not parse counts."""

from __future__ import annotations

import pytest

from app.guards.runner_sections import managers_run, runner_change

PYPROJECT = """\
[project]
name = "calc"
version = "1.0"
dependencies = ["attrs"]

[tool.pytest.ini_options]
addopts = "-q"
testpaths = ["tests"]

[tool.ruff]
line-length = 100
"""

SETUP_CFG = """\
[metadata]
name = calc
version = 1.0

[options]
python_requires = >=3.10

[tool:pytest]
addopts = -q

[flake8]
max-line-length = 100
"""

TOX_INI = """\
[tox]
envlist = py311, lint

[testenv]
deps = pytest
commands = pytest {posargs}

[flake8]
ignore = E501
"""


@pytest.mark.parametrize(
    ("name", "base", "old", "new"),
    [
        ("pyproject.toml", PYPROJECT, 'version = "1.0"', 'version = "1.1"'),
        ("pyproject.toml", PYPROJECT, '["attrs"]', '["attrs", "rich"]'),
        ("pyproject.toml", PYPROJECT, "line-length = 100", "line-length = 88"),
        ("pyproject.toml", PYPROJECT, 'addopts = "-q"', '# the quiet run\naddopts = "-q"'),
        ("pyproject.toml", PYPROJECT, "[tool.ruff]", "[tool.ruff]\nfix = true"),
        ("setup.cfg", SETUP_CFG, "version = 1.0", "version = 1.1"),
        ("setup.cfg", SETUP_CFG, ">=3.10", ">=3.11"),
        ("setup.cfg", SETUP_CFG, "max-line-length = 100", "max-line-length = 88"),
        ("tox.ini", TOX_INI, "E501", "E501, W503"),
        ("tox.ini", TOX_INI, "[flake8]", "# linters below\n[flake8]"),
    ],
)
def test_a_change_outside_the_runner_sections_is_no_runner_configuration(name, base, old, new):
    assert old in base
    assert runner_change(name, base, base.replace(old, new)) is None


@pytest.mark.parametrize(
    ("name", "base", "old", "new", "section"),
    [
        ("pyproject.toml", PYPROJECT, 'addopts = "-q"', 'addopts = "-q -p no:randomly"',
         "tool.pytest.ini_options"),
        ("pyproject.toml", PYPROJECT, '["tests"]', '["tests/unit"]', "tool.pytest.ini_options"),
        ("pyproject.toml", PYPROJECT, "[tool.ruff]",
         "[tool.coverage.report]\nfail_under = 0\n\n[tool.ruff]", "tool.coverage.report"),
        ("pyproject.toml", PYPROJECT, "[tool.ruff]",
         "[tool.hatch.envs.test.scripts]\nrun = 'pytest || true'\n\n[tool.ruff]",
         "tool.hatch.envs.test"),
        ("pyproject.toml", PYPROJECT, "[tool.ruff]",
         "[tool.pytest]\nminversion = '9.0'\n\n[tool.ruff]", "tool.pytest"),
        ("pyproject.toml", PYPROJECT, "[tool.ruff]",
         "[tool.tox]\nlegacy_tox_ini = '[testenv]'\n\n[tool.ruff]", "tool.tox"),
        ("setup.cfg", SETUP_CFG, "addopts = -q", "addopts = -q -p no:cacheprovider", "tool:pytest"),
        # pytest reads `addopts`, not `Addopts`: a key's case is its name.
        ("setup.cfg", SETUP_CFG, "addopts = -q", "Addopts = -q", "tool:pytest"),
        ("setup.cfg", SETUP_CFG, "[flake8]", "[coverage:report]\nfail_under = 0\n\n[flake8]",
         "coverage:report"),
        # `[DEFAULT]` is read into every section, the runner's too.
        ("setup.cfg", SETUP_CFG, "[metadata]", "[DEFAULT]\nxfail_strict = false\n\n[metadata]",
         "tool:pytest"),
        ("tox.ini", TOX_INI, "pytest {posargs}", "pytest {posargs} || true", "testenv"),
        ("tox.ini", TOX_INI, "[flake8]", "[testenv:lint]\ncommands = true\n\n[flake8]",
         "testenv:lint"),
        ("tox.ini", TOX_INI, "py311, lint", "lint", "tox"),
        ("tox.ini", TOX_INI, "[flake8]", "[pytest]\naddopts = -x\n\n[flake8]", "pytest"),
    ],
)  # fmt: skip
def test_a_change_to_a_runner_section_is_runner_configuration(name, base, old, new, section):
    assert old in base
    assert runner_change(name, base, base.replace(old, new)) == (
        f"{name}: [{section}] changed, where the test runner's configuration is read"
    )


def test_a_file_added_or_deleted_counts_by_the_runner_sections_it_holds():
    assert runner_change("pyproject.toml", None, PYPROJECT) is not None
    assert runner_change("tox.ini", TOX_INI, None) is not None
    assert runner_change("setup.cfg", None, "[metadata]\nname = calc\n") is None


@pytest.mark.parametrize(
    ("name", "base", "head"),
    [
        ("pyproject.toml", PYPROJECT, PYPROJECT + "[tool.ruff\n"),
        ("pyproject.toml", "version = = 1\n", PYPROJECT),
        ("setup.cfg", SETUP_CFG, "name = calc\n" + SETUP_CFG),
        # Two sections of one name, or one key twice: tox and pytest refuse them too.
        ("setup.cfg", SETUP_CFG, SETUP_CFG + "[flake8]\nselect = E\n"),
        ("tox.ini", TOX_INI, TOX_INI.replace("deps = pytest", "deps = pytest\ndeps = x")),
    ],
)
def test_a_side_that_does_not_parse_counts_whatever_it_touched(name, base, head):
    reason = runner_change(name, base, head)
    assert reason is not None and reason.startswith(f"{name} does not parse (")
    assert reason.endswith("so it cannot be read section by section")


def test_many_sections_changed_are_named_three_at_most():
    head = TOX_INI + "".join(f"\n[testenv:e{n}]\ncommands = true\n" for n in range(5))
    assert runner_change("tox.ini", TOX_INI, head) == (
        "tox.ini: [testenv:e0], [testenv:e1], [testenv:e2] and 2 more changed, where the test "
        "runner's configuration is read"
    )


@pytest.mark.parametrize(
    ("command", "managers"),
    [
        (".venv/bin/python -m pytest", set()),
        ("python3 -m unittest discover -s tests", set()),
        ("tox -e py311", {"tox"}),
        ("python -m tox", {"tox"}),
        ("hatch test", {"hatch"}),
        ("make test", {"tox", "hatch"}),  # a recipe may run either: they count
        ("./run-tests.sh", {"tox", "hatch"}),
        ("sh -c 'pytest'", {"tox", "hatch"}),
    ],
)
def test_the_managers_a_test_command_goes_through(command, managers):
    assert managers_run(command) == managers


def test_a_managers_sections_count_only_when_the_test_run_goes_through_it():
    head = TOX_INI.replace("deps = pytest", "deps = pytest\n    mypy")
    pyproject = PYPROJECT + '\n[tool.tox.env.typing]\ncommands = [["mypy", "src"]]\n'
    pytest_only = managers_run(".venv/bin/python -m pytest")
    assert runner_change("tox.ini", TOX_INI, head, pytest_only) is None
    assert runner_change("pyproject.toml", PYPROJECT, pyproject, pytest_only) is None
    assert runner_change("tox.ini", TOX_INI, head, managers_run("tox")) == (
        "tox.ini: [testenv] changed, where the test runner's configuration is read"
    )
    # pytest's own sections count whatever runs it.
    changed = PYPROJECT.replace('addopts = "-q"', 'addopts = "-q -p no:randomly"')
    assert runner_change("pyproject.toml", PYPROJECT, changed, pytest_only) is not None
