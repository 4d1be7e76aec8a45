"""Which files are tests, and which configure or drive the test run.

Tests are recognised by the conventions the common runners discover them by (pytest and
unittest, Go, Jest/Vitest/Mocha, RSpec and minitest). The *test surface* is what changes how
the suite runs rather than what it checks: conftest and runner configurations, `.pth` and
`sitecustomize` files, package `__init__` files of test directories, the make targets and
scripts the test command calls, and the runner sections of project files. The implementer
may not change the surface unless the ticket allows it (`implementer.test_surface_label`):
it is where a green result can be arranged instead of earned.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from typing import Literal

Language = Literal["python", "go", "javascript", "ruby"]

_PYTHON_TEST = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
_GO_TEST = re.compile(r"_test\.go$")
_JS_TEST = re.compile(r"(\.(test|spec)\.[cm]?[jt]sx?$)|((^|/)__tests__/[^/]+\.[cm]?[jt]sx?$)")
_RUBY_TEST = re.compile(r"(^|/)([^/]*_spec|test_[^/]*|[^/]*_test)\.rb$")
_TEST_DIR = re.compile(r"(^|/)(tests?|testing|spec|__tests__)(/|$)")

_SURFACE_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        "tox.ini",
        "noxfile.py",
        "sitecustomize.py",
        "usercustomize.py",
        ".rspec",
        "spec_helper.rb",
        "rails_helper.rb",
        "test_helper.rb",
        "rakefile",
        ".mocharc",
        "jasmine.json",
        "karma.conf.js",
    }
)
_SURFACE_PREFIXES = ("jest.config.", "vitest.config.", "vitest.workspace.", ".mocharc.",
                     "ava.config.", "karma.conf.", "playwright.config.")  # fmt: skip
_MAKEFILES = frozenset({"makefile", "gnumakefile", "justfile"})
_PROJECT_SECTIONS = {
    "pyproject.toml": re.compile(r"^\s*\[tool\.(pytest|coverage|tox|hatch\.envs)", re.M),
    "setup.cfg": re.compile(r"^\s*\[(tool:pytest|pytest|coverage:)", re.M),
}
_PACKAGE_KEYS = ("scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc")


def language_of_test(path: str) -> Language | None:
    """The language of a test file by its runners' naming conventions; None: not a test."""
    name = path.rsplit("/", 1)[-1]
    if _PYTHON_TEST.search(path) and name != "conftest.py":
        return "python"
    if _GO_TEST.search(path):
        return "go"
    if _JS_TEST.search(path):
        return "javascript"
    if _RUBY_TEST.search(path) and name not in ("spec_helper.rb", "test_helper.rb"):
        return "ruby"
    return None


def surface_reason(
    path: str,
    *,
    test_command: str,
    test_dirs: set[str],
    read: Callable[[str, str], str | None],
) -> str | None:
    """Why changing `path` changes how the suite runs, or None. `read(rev, path)` gives a file's
    text at "base" or "head" (None when absent); `test_dirs` are directories holding tests."""
    name = path.rsplit("/", 1)[-1]
    lower = name.casefold()
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    if lower in _SURFACE_NAMES or lower.startswith(_SURFACE_PREFIXES):
        return f"{name} configures the test run"
    if lower.endswith(".pth"):
        return "a .pth file runs code at every Python start"
    if lower == "__init__.py" and (folder in test_dirs or _TEST_DIR.search(folder)):
        return "the __init__.py of a test package runs before its tests"
    if _runs(test_command, path, lower):
        return "the test command runs it"
    pattern = _PROJECT_SECTIONS.get(path)
    if pattern is not None:
        texts = [read(rev, path) or "" for rev in ("base", "head")]
        if any(pattern.search(text) for text in texts):
            return f"{name} holds the test runner's configuration"
    if lower != "package.json":
        return None
    sections = [_package_sections(read(rev, path)) for rev in ("base", "head")]
    if sections[0] != sections[1]:
        return "package.json: its scripts or test runner settings changed"
    return None


def _runs(test_command: str, path: str, lower: str) -> bool:
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    if lower in _MAKEFILES or lower.endswith(".mk"):
        return any(word in ("make", "gmake", "just") or word.endswith("/make") for word in words)
    named = {word.removeprefix("./") for word in words}
    return path in named


def _package_sections(text: str | None) -> str:
    if text is None:
        return ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text  # unreadable: any change counts
    if not isinstance(data, dict):
        return text
    return json.dumps({key: data.get(key) for key in _PACKAGE_KEYS}, sort_keys=True)


def directories_with_tests(tracked: list[str]) -> dict[str, list[str]]:
    """Directory -> the test files directly in it."""
    found: dict[str, list[str]] = {}
    for path in tracked:
        if language_of_test(path) is not None:
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            found.setdefault(folder, []).append(path)
    return found
