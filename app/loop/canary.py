"""The canary: a test that must fail, placed where the suite's own tests live and named like
them, so that code under test cannot tell a run with it from a run without it.

Nothing in its file name, test name, class or message is fixed: each is drawn at random from
the words of the suite's own test file names (and a few common ones), in the style of the
folder's tests, with an assertion between two random numbers. The harness knows which test it
is (`Canary.test_name`); the code under test, short of knowing every test of the suite by
heart, does not.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.loop.suite_files import Language, directories_with_tests, language_of_test

_GO_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_JS_SUFFIX = re.compile(r"((\.(test|spec))?\.[cm]?[jt]sx?)$")
_WORD = re.compile(r"[a-z]{3,12}")
COMMON_WORDS = (
    "value", "result", "config", "parse", "empty", "order", "error", "default", "format",
    "update", "record", "merge", "limit", "range", "items", "state", "input", "output",
    "handle", "check", "build", "cache", "index", "query", "match", "split", "count",
)  # fmt: skip
_NOT_WORDS = {"test", "tests", "spec", "specs", "py", "go", "rb", "js", "ts", "tsx", "jsx"}


@dataclass(frozen=True)
class Canary:
    path: str
    content: str
    test_name: str  # the test's own name (pytest's JUnit `name`)


def place_canary(tracked: Sequence[str], read: Callable[[str], str | None]) -> Canary | str:
    """A failing test beside the suite's own (in the folder with most tests of the language
    with most tests), or why none can be placed. `read` gives a file's text at the head."""
    folders = directories_with_tests(list(tracked))
    if not folders:
        return "no test file was found to place a canary test beside"
    counts: dict[Language, int] = {}
    for files in folders.values():
        for path in files:
            found = language_of_test(path)
            assert found is not None
            counts[found] = counts.get(found, 0) + 1
    language: Language = max(counts, key=lambda lang: counts[lang])

    def weight(folder: str) -> tuple[int, int, str]:
        own = sum(1 for path in folders[folder] if language_of_test(path) == language)
        return (-own, folder.count("/"), folder)

    folder = min(folders, key=weight)
    siblings = sorted(p for p in folders[folder] if language_of_test(p) == language)
    sibling = secrets.choice(siblings)
    words = _vocabulary(tracked)
    prefix = f"{folder}/" if folder else ""
    existing = set(tracked)
    for _ in range(20):
        stem = f"{secrets.choice(words)}_{secrets.choice(words)}"
        name = _file_name(language, sibling, stem)
        if prefix + name not in existing:
            break
    test = f"{secrets.choice(words)}_{secrets.choice(words)}"
    content = _content(language, sibling, stem, test, read)
    if content is None:
        return f"cannot write a canary test beside {sibling}"
    return Canary(prefix + name, content, _test_name(language, test))


def _vocabulary(tracked: Sequence[str]) -> list[str]:
    words = set(COMMON_WORDS)
    for path in tracked:
        if language_of_test(path) is not None:
            stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
            words |= {w for w in _WORD.findall(stem.replace("_", " ")) if w not in _NOT_WORDS}
    return sorted(words)


def _file_name(language: Language, sibling: str, stem: str) -> str:
    name = sibling.rsplit("/", 1)[-1]
    if language == "python":
        suffix_style = name.endswith("_test.py") and not name.startswith("test_")
        return f"{stem}_test.py" if suffix_style else f"test_{stem}.py"
    if language == "go":
        return f"{stem}_test.go"
    if language == "ruby":
        return f"{stem}_spec.rb" if name.endswith("_spec.rb") else f"test_{stem}.rb"
    match = _JS_SUFFIX.search(name)
    return stem.replace("_", "-") + (match.group(1) if match else ".test.js")


def _test_name(language: Language, test: str) -> str:
    if language == "go":
        return "Test" + _camel(test)
    if language == "javascript":
        return test.replace("_", " ")
    return f"test_{test}"


def _camel(words: str) -> str:
    return "".join(part.capitalize() for part in words.split("_"))


def _content(
    language: Language, sibling: str, stem: str, test: str, read: Callable[[str], str | None]
) -> str | None:
    got, want = secrets.randbelow(900) + 100, secrets.randbelow(900) + 1000
    if language == "python":
        return (
            "import unittest\n\n\n"
            f"class Test{_camel(stem)}(unittest.TestCase):\n"
            f"    def test_{test}(self):\n"
            f"        self.assertEqual({got}, {want})\n"
        )
    if language == "go":
        found = _GO_PACKAGE.search(read(sibling) or "")
        if found is None:
            return None
        return (
            f"package {found.group(1)}\n\n"
            'import "testing"\n\n'
            f"func Test{_camel(test)}(t *testing.T) {{\n"
            f'\tif got := {got}; got != {want} {{\n\t\tt.Fatalf("got %d, want {want}", got)\n\t}}\n'
            "}\n"
        )
    if language == "ruby":
        if sibling.endswith("_spec.rb"):
            return (
                f'RSpec.describe("{stem.replace("_", " ")}") {{ it("{test.replace("_", " ")}") '
                f'{{ raise "expected {got} to equal {want}" unless {got} == {want} }} }}\n'
            )
        return (
            'require "minitest/autorun"\n\n'
            f"class {_camel(stem)}Test < Minitest::Test\n"
            f"  def test_{test}\n    assert_equal {want}, {got}\n  end\nend\n"
        )
    # Jest, Vitest with globals and Mocha define `test` or `it`; without either, the file
    # fails to load, which fails the run too.
    return (
        "const check = globalThis.test ?? globalThis.it;\n"
        f'if (typeof check !== "function") throw new Error("expected {got} to equal {want}");\n'
        f'check("{test.replace("_", " ")}", () => {{\n'
        f'  if ({got} !== {want}) throw new Error("expected {got} to equal {want}");\n'
        "});\n"
    )
