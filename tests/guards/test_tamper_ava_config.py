"""AVA told to leave tests out (`app.guards.tamper.runners.runner_config`,
`app.guards.tamper.runners.ava_files`): its `match` option or setting, and `files` globs judged by
the test files they stop running."""

from __future__ import annotations

import json

import pytest

from tests.guards.conftest import GitRepo, tamper

RED = "import test from 'ava';\n\ntest('adds', t => {\n\tt.is(1 + 1, 2);\n});\n"
GREEN = RED.replace("adds", "subtracts").replace("1 + 1, 2", "2 - 1, 1")


def _manifest(**sections: object) -> str:
    return json.dumps({"name": "pkg", "scripts": {"test": "ava"}, **sections}, indent=2) + "\n"


BASE = {"package.json": _manifest(), "test/red.js": RED, "test/green.js": GREEN}


def _narrowed(repo: GitRepo, change) -> list[str]:
    return [f for f in tamper(repo, BASE, change) if "test collection narrowed (ava" in f]


@pytest.mark.parametrize(
    "manifest",
    [
        # the red file left out of the globs, or never named
        _manifest(ava={"files": ["test/*", "!test/red.js"]}),
        _manifest(ava={"files": ["test/green.js"]}),
        # the red test's title matched away
        _manifest(ava={"match": ["!adds"]}),
        _manifest(scripts={"test": "ava --match '!adds'"}),
        _manifest(scripts={"test": "ava -m subtracts"}),
        # extensions that leave the JavaScript tests out
        _manifest(ava={"files": ["test/*"], "extensions": ["ts"]}),
    ],
)
def test_ava_told_to_leave_a_test_out_is_narrowing(repo: GitRepo, manifest: str):
    assert _narrowed(repo, lambda r: r.write("package.json", manifest))


@pytest.mark.parametrize(
    "manifest",
    [
        # every test file AVA ran still runs (ky's `"files": ["test/*"]`)
        _manifest(ava={"files": ["test/*"]}),
        _manifest(ava={"files": ["test/**/*.js", "!test/fixtures/**"]}),
        # settings that select nothing out
        _manifest(ava={"timeout": "2m", "verbose": True}),
    ],
)
def test_ava_settings_that_run_every_test_pass(repo: GitRepo, manifest: str):
    assert _narrowed(repo, lambda r: r.write("package.json", manifest)) == []


def test_an_ava_config_file_is_not_read_so_its_files_narrow(repo: GitRepo):
    config = "export default {\n\tfiles: ['test/*'],\n};\n"
    assert _narrowed(repo, lambda r: r.write("ava.config.js", config))
