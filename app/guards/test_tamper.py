"""The `test-tamper` rule: making a red suite green by removing or silencing tests.

Reported: a test file deleted (or moved out of where tests are collected); test definitions
removed from a file without being added back anywhere in the change, beyond the number of new
ones the same file gains (so renaming a test is not tampering, deleting one is); skip, xfail,
ignore and focus markers added to existing tests (pytest, unittest, Jest/Mocha/Jasmine, Go,
Rust, JUnit, RSpec/minitest); test collection narrowed in pytest configuration.

Not reported: new tests, even skipped ones, in a brand-new test file or as a brand-new test
(a skip on a test that did not exist before hides nothing); a test file only added to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.guards.changes import ChangeSet, FileChange, Line
from app.guards.paths import display

_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go|rb|exs?)|conftest\.py|[^/]*_spec\.rb"
    r"|[^/]*\.(test|spec)\.[cm]?[jt]sx?|[^/]*Tests?\.(java|kt|cs|swift|scala))$"
)
_TEST_DIR = re.compile(r"(^|/)(tests?|__tests__|specs?|testing)/", re.IGNORECASE)
_PYTEST_CONFIG = re.compile(r"(^|/)(pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|conftest\.py)$")

# A test definition: (language tag, pattern with the name in group "n").
_DEFINITIONS = tuple(
    re.compile(pattern)
    for pattern in (
        r"^\s*(?:async\s+)?def\s+(?P<n>test\w*)\s*\(",
        r"^\s*class\s+(?P<n>Test\w*)\s*[(:]",
        r"^\s*(?:it|test|describe|context|specify|suite)(?:\.(?:skip|only|each\([^)]*\)))?\s*"
        r"\(\s*(?P<q>['\"`])(?P<n>.+?)(?P=q)",
        r"^\s*(?:x|f)(?:it|test|describe|context|specify)\s*\(\s*(?P<q>['\"`])(?P<n>.+?)(?P=q)",
        r"^func\s+(?P<n>(?:Test|Benchmark|Fuzz|Example)\w*)\s*\(",
        r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+(?P<n>test_\w+)\s*\(",
        r"^\s*(?:it|describe|context|test|specify)\s+(?P<q>['\"])(?P<n>.+?)(?P=q)\s+do\b",
        r"^\s*(?:public\s+|protected\s+|private\s+)?(?:void|fun)\s+(?P<n>test\w*)\s*\(",
    )
)
# Markers on the line above a definition (decorators, annotations, attributes).
_DECORATOR_MARKERS = re.compile(
    r"@pytest\.mark\.(skip|skipif|xfail)\b|@(unittest\.)?(skip|skipIf|skipUnless)\b"
    r"|@(unittest\.)?expectedFailure\b|#\[ignore\b|@Disabled\b|@Ignore\b"
)
# Markers that are themselves a definition: `it.skip("name", ...)`, `xit("name", ...)`.
_DEFINING_MARKERS = re.compile(
    r"(?<![\w.$])(?:it|test|describe|context|specify|suite)\.skip\s*\("
    r"|(?<![\w.$])x(?:it|test|describe|context|specify)\s*\("
)
# Focus markers skip every other test in the run: always reported.
_FOCUS_MARKERS = re.compile(
    r"(?<![\w.$])(?:it|test|describe|context|specify|suite)\.only\s*\("
    r"|(?<![\w.$])f(?:it|describe)\s*\("
)
# Statements inside a test body that skip it.
_BODY_MARKERS = re.compile(
    r"\bpytest\.(skip|xfail|importorskip)\s*\(|\.skipTest\s*\(|raise\s+(unittest\.)?SkipTest\b"
    r"|\b[tb]\.Skip(Now|f)?\s*\("
)
# RSpec and minitest skip with bare words, which mean something else in other languages.
_RUBY_BODY_MARKERS = re.compile(r"^\s*(skip|pending)(\s*\(|\s+['\"]|\s*$)")
_MODULE_MARKERS = re.compile(r"^\s*pytestmark\s*=.*\b(skip|skipif|xfail)\b")
_NARROWING = re.compile(
    r"--deselect\b|--ignore(-glob)?\b|\bcollect_ignore(_glob)?\b|\bnorecursedirs\b"
    r"|(^|\s)-k\s+['\"]?not\b"
)


@dataclass(frozen=True)
class Tamper:
    path: str
    line: int | None
    message: str


def is_test_path(path: str) -> bool:
    return bool(_TEST_FILE.search(path) or _TEST_DIR.search(path))


def _is_test_module(path: str) -> bool:
    """A file that by its name holds tests (a file merely under tests/ may be a fixture)."""
    return bool(_TEST_FILE.search(path))


def definition_name(text: str) -> str | None:
    for pattern in _DEFINITIONS:
        match = pattern.search(text)
        if match is not None:
            return match.group("n")
    return None


def find_tampering(changes: ChangeSet) -> list[Tamper]:
    tests = [c for c in changes.files if any(is_test_path(path) for path in c.paths)]
    removed_anywhere = _names(line for c in tests for line in c.removed)
    added_anywhere = _names(line for c in tests for line in c.added)
    found: list[Tamper] = []
    for change in changes.files:
        found.extend(_deleted_or_moved(change))
        if change.status == "deleted":
            continue
        if change.old_path is not None and is_test_path(change.old_path):
            found.extend(_removed_tests(change, added_anywhere))
        if is_test_path(change.path) or _PYTEST_CONFIG.search(change.path):
            found.extend(_markers(change, removed_anywhere))
    return found


def _names(lines: Iterable[Line]) -> set[str]:
    return {name for line in lines if (name := definition_name(line.text)) is not None}


def _deleted_or_moved(change: FileChange) -> list[Tamper]:
    old = change.old_path
    if old is None or not is_test_path(old):
        return []
    holds_tests = _is_test_module(old) or bool(_names(change.removed))
    if change.status == "deleted" and holds_tests:
        return [Tamper(old, None, "test file deleted")]
    if change.status == "renamed" and holds_tests and _leaves_discovery(old, change.path):
        return [Tamper(change.path, None, "test file moved out of the test paths")]
    return []


def _leaves_discovery(old: str, new: str) -> bool:
    """Whether a renamed test file stops looking like one to a test runner (`.py.bak`,
    `test_x.py` -> `x.py`, out of `tests/`)."""
    if not is_test_path(new):
        return True
    if _is_test_module(old) and not _is_test_module(new):
        return True
    return old.rsplit(".", 1)[-1] != new.rsplit(".", 1)[-1]


def _removed_tests(change: FileChange, added_anywhere: set[str]) -> list[Tamper]:
    removed = [(line, definition_name(line.text)) for line in change.removed]
    gone = [(line, name) for line, name in removed if name and name not in added_anywhere]
    fresh = {definition_name(line.text) for line in change.added} - {n for _, n in removed}
    fresh.discard(None)
    if len(gone) <= len(fresh):
        return []  # as many new tests as vanished ones: renamed or rewritten, not removed
    return [
        Tamper(change.path, line.anchor, f"test {display(name, 80)!r} removed")
        for line, name in gone[: max(len(gone) - len(fresh), 0)]
    ]


def _markers(change: FileChange, removed_anywhere: set[str]) -> list[Tamper]:
    found: list[Tamper] = []
    for line in change.added:
        if _FOCUS_MARKERS.search(line.text):
            found.append(Tamper(change.path, line.number, "focused test added (skips others)"))
        elif _NARROWING.search(line.text) and _PYTEST_CONFIG.search(change.path):
            found.append(Tamper(change.path, line.number, "test collection narrowed"))
    if change.status in ("added", "copied"):
        return found  # a new file's skipped tests hid nothing that ran before
    skips = _new_skips(change, removed_anywhere)
    # A skip reworded or reformatted replaces one that was there: only net new skips count.
    already = sum(1 for line in change.removed if _skip_kind(line.text, change.path))
    return found + skips[already:]


def _skip_kind(text: str, path: str) -> str | None:
    if _MODULE_MARKERS.search(text):
        return "module"
    if _DEFINING_MARKERS.search(text):
        return "defining"
    if _DECORATOR_MARKERS.search(text):
        return "decorator"
    if _BODY_MARKERS.search(text) or (path.endswith(".rb") and _RUBY_BODY_MARKERS.search(text)):
        return "body"
    return None


def _new_skips(change: FileChange, removed_anywhere: set[str]) -> list[Tamper]:
    """Skip markers added to tests that existed before (or were removed and re-added)."""
    added = list(change.added)
    found: list[Tamper] = []
    for index, line in enumerate(added):
        kind = _skip_kind(line.text, change.path)
        if kind is None:
            continue
        if kind == "module":
            found.append(Tamper(change.path, line.number, "module-wide skip marker added"))
            continue
        if kind == "defining":
            name = definition_name(line.text)
        elif kind == "decorator":
            name = _definition_after(added, index)
        else:
            name = _definition_before(added, index)
        if name is None or name in removed_anywhere:
            where = "inside a test" if kind == "body" else "to a test"
            found.append(Tamper(change.path, line.number, f"skip marker added {where}"))
    return found


def _definition_after(block: Sequence[Line], index: int) -> str | None:
    """The test defined by the next lines of the same run of added lines, if any."""
    for position in range(index + 1, len(block)):
        if block[position].number != block[position - 1].number + 1:
            return None
        name = definition_name(block[position].text)
        if name is not None:
            return name
    return None


def _definition_before(block: Sequence[Line], index: int) -> str | None:
    """The test whose (added) header precedes this line in the same run of added lines."""
    for position in range(index - 1, -1, -1):
        if block[position].number != block[position + 1].number - 1:
            return None
        name = definition_name(block[position].text)
        if name is not None:
            return name
    return None
