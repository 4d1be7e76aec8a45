"""Commands that run the suite made to pass whatever the tests say
(`app.guards.tamper.runners.runner_commands`): a failure swallowed, the runner narrowed by its own
options, a package.json `test` script replaced by an echo. Real rule, real git."""

from __future__ import annotations

import pytest

from app.guards.tamper.runners.runner_commands import NARROWED, REPLACED, SWALLOWED
from tests.guards.conftest import GitRepo, edited, tamper

PACKAGE = '{\n  "name": "calc",\n  "scripts": {\n    "test": "node --test"\n  }\n}\n'
MAKEFILE = "test:\n\tgo test ./...\n\tpytest\n"
TOX = "[tox]\nenvlist = py\n\n[testenv]\ncommands = pytest tests\n"
SCRIPT = "#!/bin/sh\nset -e\npytest tests\n"
FILES = {"package.json": PACKAGE, "Makefile": MAKEFILE, "tox.ini": TOX, "ci/test.sh": SCRIPT}


@pytest.mark.parametrize(
    ("path", "old", "new", "line", "message"),
    [
        ("package.json", "node --test", "node --test || true", 4, SWALLOWED),
        ("package.json", "node --test", "node --test || exit 0", 4, SWALLOWED),
        ("package.json", "node --test", "echo ok", 4, REPLACED),
        ("package.json", "node --test", "exit 0", 4, REPLACED),
        ("package.json", "node --test", "true", 4, REPLACED),
        (
            "package.json",
            "node --test",
            "node --test --test-name-pattern=nothing",
            4,
            NARROWED.format(what="node --test"),
        ),
        ("Makefile", "\tpytest", "\t-pytest", 3, SWALLOWED),
        ("Makefile", "\tpytest", "\t@-pytest", 3, SWALLOWED),
        ("Makefile", "\tpytest", "\tpytest; true", 3, SWALLOWED),
        ("Makefile", "go test ./...", "go test -run TestNone ./...", 2, "go test -run/-skip"),
        ("Makefile", "go test ./...", "go test -skip=TestAdd ./...", 2, "go test -run/-skip"),
        ("tox.ini", "commands = pytest", "commands = - pytest", 5, SWALLOWED),
        ("tox.ini", "pytest tests\n", "pytest tests\nignore_outcome = true\n", 6, SWALLOWED),
        ("ci/test.sh", "set -e\n", "set +e\n", 2, SWALLOWED),
        ("ci/test.sh", "pytest tests", "pytest tests || echo failed", 3, SWALLOWED),
    ],
)
def test_a_test_command_made_to_pass_regardless_is_reported(
    repo: GitRepo, path: str, old: str, new: str, line: int, message: str
):
    found = tamper(repo, FILES, edited(path, old, new))
    assert len(found) == 1 and found[0].startswith(f"{path}:{line} ")
    assert message in found[0]


def test_pytest_told_to_collect_only_is_a_narrowing(repo: GitRepo):
    found = tamper(repo, FILES, lambda r: r.write("pytest.ini", "[pytest]\naddopts = --co\n"))
    assert found == ["pytest.ini:2 test collection narrowed"]


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("package.json", "node --test", "node --test && eslint ."),
        ("package.json", "node --test", "node --test --test-concurrency=2"),
        ("Makefile", "go test ./...", "go test -race -count=1 ./..."),
        ("Makefile", "\tpytest", "\t@pytest -q"),
        ("Makefile", "test:\n", "lint:\n\t-ruff check . || true\n\ntest:\n"),
        ("tox.ini", "commands = pytest tests", "commands = pytest tests -n auto"),
        # A command restated as it was passes, whatever it says.
        ("tox.ini", "[tox]\n", "[tox]\nminversion = 4\n"),
        ("ci/test.sh", "pytest tests", "pytest tests --maxfail=1"),
    ],
)
def test_a_test_command_that_still_fails_on_a_failure_passes(
    repo: GitRepo, path: str, old: str, new: str
):
    assert tamper(repo, FILES, edited(path, old, new)) == []


def test_a_command_already_swallowing_failures_is_not_reported_again(repo: GitRepo):
    files = {**FILES, "Makefile": MAKEFILE.replace("\tpytest", "\t-pytest")}
    assert tamper(repo, files, edited("Makefile", "test:\n", "# the suite\ntest:\n")) == []


@pytest.mark.parametrize(
    ("base", "head"),
    [
        # A benchmark run leaves the tests out on purpose (echo's `make benchmark`).
        ("\tgo test ./...\n", '\tgo test ./...\n\tgo test -run="-" -bench=".*" ./...\n'),
        # The same selection, restated with another flag.
        ("\tgo test -run TestAdd ./...\n", "\tgo test -race -run TestAdd ./...\n"),
    ],
)
def test_a_go_selection_that_leaves_no_test_out_passes(repo: GitRepo, base: str, head: str):
    files = {"Makefile": "test:\n" + base}
    assert tamper(repo, files, lambda r: r.write("Makefile", "test:\n" + head)) == []
