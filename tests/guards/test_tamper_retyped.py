"""A JavaScript test suite moved to TypeScript as a whole (`app.guards.tamper.exemptions.retyped`):
renamed `.js` to `.ts` with a runner that reads TypeScript, it stays in reach; one file alone, or
with no runner said to read TypeScript, is still moved out of the test paths."""

from __future__ import annotations

import json

import pytest

from tests.guards.conftest import GitRepo, tamper

MAIN = "import test from 'ava';\n\ntest('adds', t => {\n\tt.is(1 + 1, 2);\n});\n"
OTHER = "import test from 'ava';\n\ntest('subtracts', t => {\n\tt.is(2 - 1, 1);\n});\n"
MOVED = "test/main.test.ts: test file moved out of the test paths"


def _manifest(**sections: object) -> str:
    return json.dumps({"name": "pkg", "type": "module", **sections}, indent=2) + "\n"


def _retype(
    repo: GitRepo, head_manifest: str, *, all_files: bool = True, **extra: str
) -> list[str]:
    files = {
        "package.json": _manifest(scripts={"test": "ava"}),
        "test/main.test.js": MAIN,
        "test/other.test.js": OTHER,
    }

    def change(r: GitRepo) -> None:
        r.write("package.json", head_manifest)
        r.move("test/main.test.js", "test/main.test.ts")
        if all_files:
            r.move("test/other.test.js", "test/other.test.ts")
        for path, text in extra.items():
            r.write(path, text)

    return [found.replace(":None ", ": ") for found in tamper(repo, files, change)]


AVA_TS = {"extensions": {"ts": "module"}, "nodeArguments": ["--loader=ts-node/esm"]}


@pytest.mark.parametrize(
    "manifest",
    [
        _manifest(scripts={"test": "ava"}, ava=AVA_TS),
        _manifest(scripts={"test": "ava"}, ava={**AVA_TS, "files": ["test/*"]}),
        _manifest(scripts={"test": "jest"}, jest={"preset": "ts-jest"}),
        _manifest(
            scripts={"test": "mocha"}, mocha={"extension": ["ts"], "require": "ts-node/register"}
        ),
        _manifest(scripts={"test": "vitest run"}),
    ],
)
def test_a_whole_suite_moved_to_a_runner_that_reads_typescript_stays_in_reach(
    repo: GitRepo, manifest: str
):
    """ky's "Move to TypeScript": every test file renamed, AVA given the `ts` extension."""
    assert _retype(repo, manifest) == []


@pytest.mark.parametrize(
    ("manifest", "all_files", "extra"),
    [
        # no runner said to read TypeScript (Node's own runner passes on finding no test)
        (_manifest(scripts={"test": "node --test"}), True, {}),
        # one file moved, the rest left as JavaScript: a runner may read only those
        (_manifest(scripts={"test": "ava"}, ava=AVA_TS), False, {}),
        # the runner's files leave the moved file out
        (_manifest(scripts={"test": "ava"}, ava={**AVA_TS, "files": ["test/*.js"]}), True, {}),
        (
            _manifest(scripts={"test": "ava"}, ava={**AVA_TS, "files": ["test/*", "!test/main*"]}),
            True,
            {},
        ),
        # Jest with its own test match
        (_manifest(jest={"preset": "ts-jest", "testMatch": ["**/*.spec.ts"]}), True, {}),
        # a configuration file of the runner's own, which is not read
        (_manifest(ava=AVA_TS), True, {"ava.config.js": "export default {files: ['x/*']};\n"}),
        # a package.json that does not parse
        ("{not json\n", True, {}),
    ],
)
def test_a_file_retyped_out_of_a_runners_reach_is_reported(
    repo: GitRepo, manifest: str, all_files: bool, extra: dict[str, str]
):
    assert MOVED in _retype(repo, manifest, all_files=all_files, **extra)


def test_a_helper_script_renamed_to_typescript_holds_no_test(repo: GitRepo):
    helper = "export const setup = () => {\n\tprocess.env.TZ = 'UTC';\n};\n"
    files = {
        "package.json": _manifest(scripts={"test": "ava"}),
        "test/other.js": OTHER,
        "test/_setup.js": helper,
    }
    assert tamper(repo, files, lambda r: r.move("test/_setup.js", "test/_setup.ts")) == []


@pytest.mark.parametrize(
    "moved",
    [
        # AVA, Mocha and Jest do not run a fixtures folder
        "test/fixtures/red.js",
        # AVA leaves out a script or a folder whose name starts with `_`: its helpers
        "test/_red.js",
        "test/_helpers/red.js",
        # a backup no runner reads
        "test/red.js.bak",
    ],
)
def test_a_test_script_renamed_where_the_runner_does_not_look_is_reported(
    repo: GitRepo, moved: str
):
    files = {"package.json": _manifest(scripts={"test": "ava"}), "test/red.js": MAIN}
    found = tamper(repo, files, lambda r: r.move("test/red.js", moved))
    assert found == [f"{moved}:None test file moved out of the test paths"]
