"""The one protocol every language's reader of test files implements, and the reading most of
them share.

The `test-tamper` rule asks a test file's language five things: which lines define a test and
under what name; which lines check something (assertions); which lines skip, focus or
disable tests (skip markers); where a block ends; and how many tests a definition stands for
(parametrized cases, subtests). `Reader` is that interface; `lang.reader_for`
finds a file's reader by its name. A language's knowledge lives in its module only
(`python`, `javascript`, `go`, `ruby`, `rust`, `jvm`, `elixir`); a file in a language with no
reader of its own is read by `mixed`, which asks all of them.

Everything here reads text only; nothing is imported or executed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from app.guards.changes import Line
from app.guards.tamper.lang.lexing import Syntax, masked
from app.guards.tamper.lang.text import indent, next_in_run, unescaped

# How a line skips tests, strongest first (a line is read as the first kind it shows):
# pytest's module-wide `pytestmark`; a definition that is itself skipped (`it.skip("name",`,
# `xit(`); one skipped on a condition (`it.skipIf(cond)(`); a decorator or attribute above a
# header (`@pytest.mark.skip`, `#[ignore]`, `@Disabled`); a statement in a body
# (`pytest.skip()`, `t.Skip()`, `this.skip()`, RSpec's `skip`).
SkipKind = Literal["module", "defining", "conditional", "decorator", "body"]
SKIP_KINDS: tuple[SkipKind, ...] = ("module", "defining", "conditional", "decorator", "body")

# A line that checks something in any language: an assert statement, function or macro
# (`assert`, `assertEqual`, `assert_eq!`); a call that hands the checking to a helper named
# like a check (`check_output(...)`, `verifyTree(...)`, `expect(...)`, `ensureX(...)`) or
# named like a test's own helper (`testRequestedRedirect(app, url, done)`). Any helper can be
# vacuous (`checkNothing()`), as any new test can: the review is the backstop.
CHECKS = (
    r"\bassert\w*\b",
    r"(?:[Aa]ssert|[Cc]heck|[Vv]erify|[Ee]xpect|[Vv]alidate|[Ee]nsure)\w*\s*\(",
    r"(?<![\w$.])(?<!def )(?<!function )test[A-Z_][\w$]*\s*\(",
)
# A closing line that ends a braced or `do` block and belongs to it: `}`, `})`, `]`, `end`.
_CLOSER = re.compile(r"^(\}|\)|\]|end\b)")
# A line that is a comment in one of the languages read (`#`, `//`, a block comment's `/*`
# or `*`): bodies are compared without them.
COMMENT = re.compile(r"^(#|//|/\*|\*)")
# Line visits one reading of a run of lines may spend on bodies (see `Run`).
_MIN_BUDGET = 200_000


def either(*patterns: str) -> re.Pattern[str]:
    """One pattern matching where any of `patterns` does."""
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))


@dataclass(frozen=True)
class Marker:
    """A skip marker of a language: what it looks like and which kind of skip it is. `own`
    marks a spelling that means something else in other languages (RSpec's bare `skip`,
    Mocha's `this.skip()`): read in the language's own files only, never in a file whose
    language has no reader."""

    kind: SkipKind
    pattern: re.Pattern[str]
    own: bool = False


@dataclass
class Run:
    """One side's run of lines with what body readers ask of each line, computed once
    (nested suites read the same lines again), and a budget of line visits: past it, bodies
    are unknown, which only makes the rule stricter."""

    lines: Sequence[Line]
    indents: list[int]
    stripped: list[str]
    checks: list[bool]
    budget: int

    @classmethod
    def of(cls, lines: Sequence[Line], reader: Reader) -> Run:
        stripped = [line.text.strip() for line in lines]
        return cls(
            lines=lines,
            indents=[indent(line.text) for line in lines],
            stripped=stripped,
            checks=[reader.checks(text) for text in stripped],
            budget=max(_MIN_BUDGET, 20 * len(lines)),
        )

    def body_lines(self, index: int, *, budgeted: bool) -> Iterator[tuple[str, int]]:
        """The lines of the body of the definition at `index` the run shows (stripped, with
        their indentation), blank and comment lines left out; `budgeted` spends the budget."""
        position = index + 1
        while next_in_run(self.lines, position) and (not budgeted or self.budget > 0):
            if budgeted:
                self.budget -= 1
            stripped, depth = self.stripped[position], self.indents[position]
            position += 1
            if not stripped or COMMENT.match(stripped):
                continue
            if depth <= self.indents[index]:
                return
            yield stripped, depth


class Reader(Protocol):
    """What the `test-tamper` rule asks of a test file's language."""

    @property
    def name(self) -> str:
        """The language's name."""
        ...

    @property
    def comment(self) -> str:
        """The marker of its line comments (`#`, `//`)."""
        ...

    # -- definitions
    def test_name(self, text: str) -> str | None:
        """The name of the test (or suite) a header line defines, if it defines one."""
        ...

    def split_name(self, header: str, following: str | None) -> str | None:
        """The name of a test whose header call is split after its `(`, the name on the
        line after (`following`, None when that line is not in the run)."""
        ...

    def attributed_name(self, header: str, above: Sequence[str]) -> str | None:
        """The name of a test whose header line is a test only under an attribute or
        annotation above it (Rust's `#[test]`, JUnit's `@Test`): `above` are the lines right
        above the header in the same run, nearest last."""
        ...

    def at(self, header: str) -> Reader:
        """The reader of the definition this header line opens (itself, but where a file
        of an unknown language is read by every reader)."""
        ...

    # -- assertions
    def checks(self, text: str) -> bool:
        """Whether a line checks something (an assertion, or a call to a checking helper)."""
        ...

    # -- skip markers
    def skip(self, text: str) -> SkipKind | None:
        """The kind of skip a line is, if it is one."""
        ...

    def skip_option(self, text: str) -> str | None:
        """The value of a skip given as a test's option (node:test's `{ skip: cond }`)."""
        ...

    def skips_suite(self, text: str) -> bool:
        """Whether a skip line skips a suite (every test inside it)."""
        ...

    def focuses(self, text: str) -> bool:
        """Whether a line focuses tests (`it.only`, `fit`): every other test is skipped."""
        ...

    def skipped_header(self, text: str) -> bool:
        """Whether a header line defines a test skipped whatever the platform (`xit(`)."""
        ...

    def skip_decorator(self, stripped: str) -> bool:
        """Whether a decorator or attribute line skips the test below it whatever the
        platform or version (`@pytest.mark.skip`, `#[ignore]`, `@Disabled`)."""
        ...

    def elsewhere_only(self, text: str) -> bool:
        """Whether a skip line of this language, read alone, cannot skip where the suite runs
        (Linux, x86_64): `#[cfg_attr(windows, ignore)]`, `@DisabledOnOs(WINDOWS)`."""
        ...

    # -- what is not code
    def masked(self, lines: Sequence[str]) -> set[int]:
        """The positions of the lines of a run (a whole file, or a run the diff shows, read as
        if it started in code) that start inside a string or a block comment, or that the
        language leaves out of the test build (Rust's `#[cfg(any())]`): a test header there
        defines no test."""
        ...

    # -- block ends
    def body_start(self, lines: Sequence[Line], index: int) -> int | None:
        """The position after the header at `lines[index]` (which may span lines); None
        when its end is not in the run."""
        ...

    def closes(self, stripped: str) -> bool:
        """Whether a line at the header's indentation closes the body and belongs to it."""
        ...

    def block_end(self, lines: Sequence[str], position: int) -> int:
        """The end (exclusive) of the block the definition at `lines[position]` opens."""
        ...

    # -- parametrized cases
    def cases(self, run: Run, index: int) -> int:
        """How many tests the definition at `run.lines[index]` stands for."""
        ...


@dataclass(frozen=True)
class Language:
    """A reader of a language whose blocks end at a closing line (`}`, `end`) or before the
    next line indented no deeper: all of them but Python's. Each language is one instance,
    its patterns in its own module."""

    name: str
    suffixes: tuple[str, ...]
    comment: str
    # Test definitions, the name in group "n".
    headers: tuple[re.Pattern[str], ...]
    assertions: re.Pattern[str]
    markers: tuple[Marker, ...] = ()
    focus: re.Pattern[str] | None = None
    suite_skip: re.Pattern[str] | None = None
    # Definitions skipped whatever the platform, on the header line and above it.
    skipped: re.Pattern[str] | None = None
    skipping_decorator: re.Pattern[str] | None = None
    # A header call split after its `(`, and the line with its name.
    split_header: re.Pattern[str] | None = None
    name_line: re.Pattern[str] | None = None
    option: re.Pattern[str] | None = None
    # A header that defines a test only under an attribute above it (`fn x(` under
    # `#[test]`), the name in group "n"; the attribute; the lines that may stand between.
    attributed: re.Pattern[str] | None = None
    attribute: re.Pattern[str] | None = None
    between: re.Pattern[str] | None = None
    # A skip line that cannot skip where the suite runs, read alone.
    elsewhere: Callable[[str], bool] | None = None
    # The lines that are not code (strings, block comments, compiled out): `lexing.masked`.
    syntax: Syntax | None = None

    def reads(self, path: str) -> bool:
        return path.endswith(self.suffixes)

    def test_name(self, text: str) -> str | None:
        for pattern in self.headers:
            match = pattern.search(text)
            if match is not None:
                return unescaped(match.group("n"))
        return None

    def split_name(self, header: str, following: str | None) -> str | None:
        if self.split_header is None or self.name_line is None or following is None:
            return None
        if not self.split_header.match(header):
            return None
        match = self.name_line.match(following)
        return unescaped(match.group("n")) if match else None

    def attributed_name(self, header: str, above: Sequence[str]) -> str | None:
        if self.attributed is None or self.attribute is None:
            return None
        match = self.attributed.match(header)
        if match is None:
            return None
        name = unescaped(match.group("n").strip("`"))
        if self.attribute.search(header[: match.start("n")]):
            return name
        for text in reversed(above):
            stripped = text.strip()
            if self.attribute.search(stripped):
                return name
            if stripped and not (self.between and self.between.match(stripped)):
                return None
        return None

    def at(self, header: str) -> Reader:
        return self

    def checks(self, text: str) -> bool:
        return bool(self.assertions.search(text))

    def skip(self, text: str) -> SkipKind | None:
        return first_skip(self.markers, text, own=True)

    def skip_option(self, text: str) -> str | None:
        match = self.option.search(text) if self.option is not None else None
        return match["value"] if match is not None else None

    def skips_suite(self, text: str) -> bool:
        return bool(self.suite_skip and self.suite_skip.search(text))

    def focuses(self, text: str) -> bool:
        return bool(self.focus and self.focus.search(text))

    def skipped_header(self, text: str) -> bool:
        return bool(self.skipped and self.skipped.search(text))

    def skip_decorator(self, stripped: str) -> bool:
        return bool(self.skipping_decorator and self.skipping_decorator.search(stripped))

    def elsewhere_only(self, text: str) -> bool:
        return bool(self.elsewhere and self.elsewhere(text))

    def masked(self, lines: Sequence[str]) -> set[int]:
        return masked(lines, self.syntax) if self.syntax is not None else set()

    def body_start(self, lines: Sequence[Line], index: int) -> int | None:
        return index + 1

    def closes(self, stripped: str) -> bool:
        return bool(_CLOSER.match(stripped))

    def block_end(self, lines: Sequence[str], position: int) -> int:
        """Before the next line indented no deeper than the header, or just after it when it
        closes the block (`}`, `end`)."""
        header = indent(lines[position])
        for index in range(position + 1, len(lines)):
            stripped = lines[index].strip()
            if not stripped or indent(lines[index]) > header:
                continue
            return index + 1 if _CLOSER.match(stripped) else index
        return len(lines)

    def cases(self, run: Run, index: int) -> int:
        return 1


def first_skip(markers: Sequence[Marker], text: str, *, own: bool) -> SkipKind | None:
    """The kind of the first of `markers` the line shows (by kind, strongest first); `own`
    also reads the markers that mean something else in other languages."""
    for kind in SKIP_KINDS:
        for marker in markers:
            if marker.kind == kind and (own or not marker.own) and marker.pattern.search(text):
                return kind
    return None
