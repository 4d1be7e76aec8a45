"""Which files are tests, which drive the test run, and where a canary test goes."""

from __future__ import annotations

import pytest

from app.loop.canary import place_canary
from app.loop.suite_files import language_of_test, surface_reason


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("tests/test_app.py", "python"),
        ("pkg/app_test.py", "python"),
        ("tests/conftest.py", None),
        ("app.py", None),
        ("pkg/server_test.go", "go"),
        ("src/util.test.ts", "javascript"),
        ("src/__tests__/util.js", "javascript"),
        ("web/app.spec.jsx", "javascript"),
        ("spec/model_spec.rb", "ruby"),
        ("test/test_model.rb", "ruby"),
        ("spec/spec_helper.rb", None),
    ],
)
def test_tests_are_recognised_by_their_runners_conventions(path, language):
    assert language_of_test(path) == language


def reason(
    path: str, command: str = "pytest -q", base: dict | None = None, head: dict | None = None
):
    texts = {"base": base or {}, "head": head or {}}
    return surface_reason(
        path,
        test_command=command,
        test_dirs={"tests", "pkg/checks"},
        read=lambda rev, p: texts[rev].get(p),
    )


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "tests/conftest.py",
        "pytest.ini",
        "jest.config.js",
        "vitest.config.ts",
        ".mocharc.yml",
        "lib/python3.11/site-packages/hook.pth",
        "sitecustomize.py",
        "tests/__init__.py",
        "pkg/checks/__init__.py",
        "spec/spec_helper.rb",
    ],
)
def test_the_files_that_configure_the_run_are_the_surface(path):
    assert reason(path) is not None


def test_what_the_test_command_calls_is_the_surface():
    assert reason("scripts/test.sh", "bash ./scripts/test.sh") == "the test command runs it"
    assert reason("Makefile", "make test") == "the test command runs it"
    assert reason("build/rules.mk", "make -C . check") is not None
    assert reason("Makefile", "pytest -q") is None


def test_project_files_are_the_surface_where_a_change_touches_their_runner_sections():
    pytest_section = "[project]\nversion = '1.0'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n"
    assert reason("pyproject.toml", head={"pyproject.toml": pytest_section}) is not None
    assert reason("pyproject.toml", base={"pyproject.toml": pytest_section}) is not None
    bumped = {"pyproject.toml": pytest_section.replace("1.0", "1.1")}
    assert reason("pyproject.toml", base={"pyproject.toml": pytest_section}, head=bumped) is None
    plugin_off = {"pyproject.toml": pytest_section.replace("-q", "-q -p no:randomly")}
    assert reason("pyproject.toml", base={"pyproject.toml": pytest_section}, head=plugin_off) == (
        "pyproject.toml: [tool.pytest.ini_options] changed, where the test runner's "
        "configuration is read"
    )
    envs = "[tox]\nenvlist = py311\n\n[testenv]\ncommands = pytest\n\n[flake8]\nignore = E1\n"
    lint = {"tox.ini": envs.replace("E1", "E2")}
    assert reason("tox.ini", base={"tox.ini": envs}, head=lint) is None
    skipping = {"tox.ini": envs.replace("commands = pytest", "commands = true")}
    assert reason("tox.ini", "tox -e py311", base={"tox.ini": envs}, head=skipping) is not None
    # tox's sections decide nothing when the test command does not go through tox.
    assert reason("tox.ini", base={"tox.ini": envs}, head=skipping) is None
    assert reason("setup.cfg", base={"setup.cfg": "[metadata\n"}, head={"setup.cfg": ""})
    scripts = '{"scripts": {"test": "jest"}, "dependencies": {}}'
    skipping_json = '{"scripts": {"test": "jest || true"}, "dependencies": {}}'
    more_deps = '{"scripts": {"test": "jest"}, "dependencies": {"x": "1"}}'
    assert reason(
        "package.json", base={"package.json": scripts}, head={"package.json": skipping_json}
    )
    assert (
        reason("package.json", base={"package.json": scripts}, head={"package.json": more_deps})
        is None
    )


def test_ordinary_code_and_tests_are_not_the_surface():
    for path in ("app/core.py", "tests/test_core.py", "src/__init__.py", "README.md"):
        assert reason(path) is None


def test_a_canary_goes_where_most_tests_live_in_their_own_style():
    tracked = ["tests/test_a.py", "tests/test_b.py", "tests/unit/test_c.py", "app/x.py"]
    canary = place_canary(tracked, lambda path: None)
    assert not isinstance(canary, str)
    assert canary.path.startswith("tests/test_") and canary.path.endswith(".py")
    assert canary.path not in tracked and "/" not in canary.path.removeprefix("tests/")
    assert "self.assertEqual(" in canary.content and f"def {canary.test_name}(" in canary.content
    assert "ourobot" not in canary.path + canary.content + canary.test_name
    go = place_canary(["pkg/a.go", "pkg/a_test.go"], lambda p: "// x\npackage pkg_test\n")
    assert not isinstance(go, str)
    assert go.path.endswith("_test.go") and go.content.startswith("package pkg_test\n")
    js = place_canary(["src/a.test.ts", "src/b.test.ts"], lambda p: None)
    assert not isinstance(js, str) and js.path.endswith(".test.ts")
    assert place_canary(["app/x.py"], lambda p: None) == (
        "no test file was found to place a canary test beside"
    )
