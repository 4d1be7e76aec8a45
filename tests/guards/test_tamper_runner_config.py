"""`test-tamper` and JavaScript runners told to leave tests out
(`app.guards.tamper.runners.runner_config`): Jest's `testPathIgnorePatterns`, Vitest's
`test.exclude`, Mocha's `ignore` and `spec`, and a runner's command given `-t`, `--grep ...
--invert` or `--testPathIgnorePatterns`. Before, none was reported. Real rule, real git."""

from __future__ import annotations

import json

import pytest

from tests.guards.conftest import GitRepo, tamper

TEST = "test('red', () => {\n  expect(compute()).toBe(2)\n})\n"
PACKAGE = {"name": "x", "scripts": {"test": "jest"}, "jest": {"testEnvironment": "node"}}
JEST = """\
module.exports = {
  testEnvironment: 'node',
  testPathIgnorePatterns: [
    '/node_modules/',
  ],
}
"""
VITEST = """\
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    environment: 'node',
    coverage: {
      exclude: ['dist'],
    },
  },
})
"""
MOCHARC = "require: test/setup.js\nspec:\n  - test\n"
FILES = {"test/red.test.js": TEST, "test/green.test.js": TEST.replace("red", "green")}


def _package(**changes: object) -> str:
    return json.dumps({**PACKAGE, **changes}, indent=2) + "\n"


@pytest.mark.parametrize(
    ("path", "base", "head"),
    [
        (
            "package.json",
            _package(),
            _package(jest={"testEnvironment": "node", "testPathIgnorePatterns": ["red"]}),
        ),
        (
            "package.json",
            _package(jest={"testPathIgnorePatterns": ["/node_modules/"]}),
            _package(jest={"testPathIgnorePatterns": ["/node_modules/", "red"]}),
        ),
        ("package.json", _package(), _package(scripts={"test": "jest -t green"})),
        ("package.json", _package(), _package(scripts={"test": "jest --testNamePattern=green"})),
        (
            "package.json",
            _package(),
            _package(scripts={"test": "jest --testPathIgnorePatterns red"}),
        ),
        (
            "package.json",
            _package(scripts={"test": "mocha"}),
            _package(scripts={"test": "mocha --grep red --invert"}),
        ),
        (
            "package.json",
            _package(scripts={"test": "mocha"}),
            _package(scripts={"test": "mocha --ignore 'test/red.test.js'"}),
        ),
        (
            "jest.config.js",
            JEST,
            JEST.replace("'/node_modules/',", "'/node_modules/',\n    'red',"),
        ),
        ("jest.config.ts", JEST, JEST.replace("'/node_modules/',", "'/node_modules/', '/red/',")),
        (
            "jest.config.mjs",
            JEST,
            JEST.replace("testEnvironment", "testNamePattern: 'green',\n  testEnvironment"),
        ),
        (
            "vitest.config.ts",
            VITEST,
            VITEST.replace(
                "environment: 'node',", "environment: 'node',\n    exclude: ['test/red*'],"
            ),
        ),
        (".mocharc.yml", MOCHARC, MOCHARC + "ignore:\n  - test/red.test.js\n"),
        (".mocharc.yml", MOCHARC, MOCHARC.replace("  - test\n", "  - test/green.test.js\n")),
        (".mocharc.json", '{"spec": ["test"]}\n', '{"spec": ["test"], "grep": "green"}\n'),
        ("Makefile", "test:\n\tnpx jest\n", "test:\n\tnpx jest -t green\n"),
    ],
)
def test_a_runner_told_to_leave_tests_out_is_reported(
    repo: GitRepo, path: str, base: str, head: str
):
    found = tamper(repo, {**FILES, path: base}, lambda r: r.write(path, head))
    assert found, found
    assert all("test collection narrowed" in f for f in found), found


@pytest.mark.parametrize(
    ("path", "base", "head"),
    [
        # Settings that leave no test out.
        (
            "package.json",
            _package(),
            _package(jest={"testEnvironment": "node", "testTimeout": 10000}),
        ),
        (
            "package.json",
            _package(),
            _package(jest={"coverageThreshold": {"global": {"lines": 90}}}),
        ),
        (
            "jest.config.js",
            JEST,
            JEST.replace("testEnvironment", "coverageThreshold: {},\n  testEnvironment"),
        ),
        # Jest's own default stated.
        ("jest.config.js", "module.exports = {}\n", JEST),
        # A TypeScript configuration's `exclude` is no runner's.
        (
            "tsconfig.json",
            '{"compilerOptions": {}}\n',
            '{"compilerOptions": {}, "exclude": ["test"]}\n',
        ),
        # Coverage exclusions in a Vitest configuration.
        (
            "vitest.config.ts",
            VITEST,
            VITEST.replace("exclude: ['dist'],", "exclude: ['dist', 'test'],"),
        ),
        # A script reworded around the same narrowing.
        (
            "package.json",
            _package(scripts={"test": "jest -t green"}),
            _package(scripts={"test": "jest --ci -t green"}),
        ),
        # Another tool's `--exclude` before the runner's name.
        (
            "package.json",
            _package(scripts={"test": "mocha"}),
            _package(scripts={"test": "nyc --exclude test/fixtures mocha"}),
        ),
        # `spec` widened: the default `test` still runs.
        (".mocharc.json", "{}\n", '{\n  "spec": [\n    "build/test",\n    "test"\n  ]\n}\n'),
        (".mocharc.yml", MOCHARC, MOCHARC + "  - build/test\n"),
    ],
)
def test_a_runner_setting_that_leaves_no_test_out_passes(
    repo: GitRepo, path: str, base: str, head: str
):
    assert tamper(repo, {**FILES, path: base}, lambda r: r.write(path, head)) == []


def test_a_jest_configuration_moved_to_its_own_file_passes(repo: GitRepo):
    """The `"jest"` key of package.json moved to jest.config.js."""
    ignoring = {"testEnvironment": "node", "testPathIgnorePatterns": ["/node_modules/", "/e2e/"]}
    config = JEST.replace("'/node_modules/',", "'/node_modules/',\n    '/e2e/',")

    def change(r: GitRepo) -> None:
        r.write("package.json", _package(jest=None).replace('  "jest": null\n', ""))
        r.write("jest.config.js", config)

    assert tamper(repo, {**FILES, "package.json": _package(jest=ignoring)}, change) == []


def test_a_configuration_moved_that_adds_an_ignore_is_reported(repo: GitRepo):
    ignoring = {"testPathIgnorePatterns": ["/e2e/"]}
    config = "module.exports = {\n  testPathIgnorePatterns: ['/e2e/', 'red'],\n}\n"

    def change(r: GitRepo) -> None:
        r.write("package.json", _package(jest={}))
        r.write("jest.config.js", config)

    found = tamper(repo, {**FILES, "package.json": _package(jest=ignoring)}, change)
    assert found == ["jest.config.js:2 test collection narrowed (jest testPathIgnorePatterns)"]


def test_a_pattern_added_to_a_list_the_setting_is_given_by_name_is_reported(repo: GitRepo):
    config = (
        "const ignored = [\n  '/node_modules/',\n]\n\n"
        "module.exports = {\n  testPathIgnorePatterns: ignored,\n}\n"
    )

    def change(r: GitRepo) -> None:
        r.write(
            "jest.config.js", config.replace("'/node_modules/',", "'/node_modules/',\n  'red',")
        )

    found = tamper(repo, {**FILES, "jest.config.js": config}, change)
    assert found == ["jest.config.js:3 test collection narrowed (jest testPathIgnorePatterns)"]
