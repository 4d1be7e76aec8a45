"""Which files hold tests, and which of them a runner collects with its default settings, by
their paths alone (`test_x.py`, `x_test.go`, `x.spec.ts`, `XTest.java`, `test/x.js`)."""

from __future__ import annotations

import re

from app.guards.tamper.lang import go

_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go|rb|exs?)|conftest\.py|[^/]*_spec\.rb"
    r"|[^/]*\.(test|spec)\.[cm]?[jt]sx?|[^/]*Tests?\.(java|kt|cs|swift|scala))$"
    # AVA's own test files by default: a package's `test.js` (`src/test.js`, `source/test.js`)
    r"|^(src/|source/)?test\.[cm]?[jt]sx?$"
)
_TEST_DIR = re.compile(r"(^|/)(tests?|__tests__|specs?|testing)/", re.IGNORECASE)
# Folders under a test folder that hold material for tests, not tests a runner collects.
_MATERIAL_DIR = re.compile(
    r"(^|/)(fixtures?|__fixtures__|__mocks__|mocks?|support|helpers?|data|testdata"
    r"|snapshots|__snapshots__|node_modules|vendor)/",
    re.IGNORECASE,
)
# Files a runner collects because of the folder they are in (mocha's test/, jest's
# __tests__/, cargo's tests/), whatever their name.
_COLLECTED_BY_FOLDER = re.compile(r"\.([cm]?[jt]sx?|rs)$")
# A script AVA never runs: its name, or a folder on its path, starts with a single `_`.
_AVA_HELPER = re.compile(r"(?:^|/)_(?!_)[^/]*(?:/|\.[cm]?[jt]sx?$)")


def is_test_path(path: str) -> bool:
    """A file that holds tests or material for them (by its name or its folder)."""
    return bool(_TEST_FILE.search(path) or _TEST_DIR.search(path))


def holds_unit_tests(path: str) -> bool:
    """A source file that may hold tests of its own, built and run with the suite: Rust's
    unit tests, in a `#[cfg(test)] mod tests` of any `.rs` file (its reader counts only
    functions under a test attribute, so the rest of the file defines none)."""
    return path.endswith(".rs") and not _MATERIAL_DIR.search(path)


def reads_tests(path: str) -> bool:
    """A file whose tests the rule counts: test material by its path, or a source file
    with unit tests of its own (`holds_unit_tests`)."""
    return is_test_path(path) or holds_unit_tests(path)


def is_test_module(path: str) -> bool:
    """A file that by its name holds tests (a file merely under tests/ may be a fixture)."""
    return bool(_TEST_FILE.search(path))


def is_conftest(path: str) -> bool:
    """pytest's fixture modules: pytest never collects tests from them."""
    return path == "conftest.py" or path.endswith("/conftest.py")


def collects_tests(path: str) -> bool:
    """Whether a test runner collects tests from this file with its default settings: a test
    module by name (`test_x.py`, `x_test.go`, `x.spec.ts`, `XTest.java`), or a script under a
    test folder (`test/x.js`, `__tests__/x.ts`, cargo's `tests/x.rs`) but not under one of its
    fixture, support or data folders, nor, for a script, one AVA leaves out as a helper by its
    name: `test/_x.js`, `test/_helpers/x.js`; nor a Go file the go tool ignores."""
    if _MATERIAL_DIR.search(path) or is_conftest(path):
        return False
    if go.ignored(path):
        return False
    if is_test_module(path):
        return True
    if _AVA_HELPER.search(path):
        return False
    return bool(_TEST_DIR.search(path) and _COLLECTED_BY_FOLDER.search(path))
