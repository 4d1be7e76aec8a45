"""Which files are tests, and which configure or drive the test run.

Tests are recognised by the conventions the common runners discover them by (pytest and
unittest, Go, Jest/Vitest/Mocha, RSpec and minitest). The *test surface* is what changes how
the suite runs rather than what it checks: conftest and runner configurations, `.pth` and
`sitecustomize` files, package `__init__` files of test directories, the make targets and
scripts the test command calls, and the runner sections of project files. The implementer
may not change the surface unless the ticket allows it (`implementer.test_surface_label`):
it is where a green result can be arranged instead of earned. The surface itself is defined
once, in `app.guards.test_surface` (the guards' `test-tamper` reads the same files).
"""

from __future__ import annotations

import re
from typing import Literal

from app.guards.test_surface import surface_reason

__all__ = ["Language", "directories_with_tests", "language_of_test", "surface_reason"]

Language = Literal["python", "go", "javascript", "ruby"]

_PYTHON_TEST = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
_GO_TEST = re.compile(r"_test\.go$")
_JS_TEST = re.compile(r"(\.(test|spec)\.[cm]?[jt]sx?$)|((^|/)__tests__/[^/]+\.[cm]?[jt]sx?$)")
_RUBY_TEST = re.compile(r"(^|/)([^/]*_spec|test_[^/]*|[^/]*_test)\.rb$")


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


def directories_with_tests(tracked: list[str]) -> dict[str, list[str]]:
    """Directory -> the test files directly in it."""
    found: dict[str, list[str]] = {}
    for path in tracked:
        if language_of_test(path) is not None:
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            found.setdefault(folder, []).append(path)
    return found
