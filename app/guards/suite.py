"""What a test suite looks like in a change: which files hold tests, where a runner collects
them, and the test definitions (name, body, parametrized cases, assertions) in a run of added
or removed lines.

Used by the `test-tamper` rule (`app.guards.test_tamper`). Everything here reads text only;
nothing is imported or executed (parametrize lists are read with `ast`, never evaluated).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from app.guards.changes import Line

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
# A Go file the go tool ignores: its name, or a folder on its path, starts with `_` or `.`.
_GO_IGNORED = re.compile(r"(?:^|/)[._]")
# A script AVA never runs: its name, or a folder on its path, starts with a single `_`.
_AVA_HELPER = re.compile(r"(?:^|/)_(?!_)[^/]*(?:/|\.[cm]?[jt]sx?$)")


def _quoted(quotes: str) -> str:
    """A test name quoted with one of `quotes`, in group "n" (JavaScript, Ruby): up to the
    first quote no backslash escapes, so `'don\\'t replace'` is read whole; or further where
    the pattern needs more after it (Ruby's `it "a #{x ? "b" : "c"}" do`)."""
    return rf"(?P<q>[{quotes}])(?P<n>(?:\\.|[^\\])+?)(?P=q)"


_JS_NAME = _quoted("'\"`")
# What may follow `it`/`test` before its call: jest's and vitest's `.skip`, `.only`, `.each(...)`,
# `.concurrent`, `.failing` (an expected failure), `.skipIf(...)`; AVA's `.serial` and `.cb`, in
# any order (`test.serial.skip`).
_MODIFIERS = (
    r"(?:\.(?:skip|only|serial|concurrent|failing|cb|each\([^)]*\)|(?:skipIf|runIf)\(.*?\)))*"
)
_RUBY_NAME = _quoted("'\"")
# A backslash escaping a quote or itself in a quoted name: the name has the character.
_NAME_ESCAPE = re.compile(r"\\(['\"`\\])")

# A test definition: a pattern with the name in group "n". The first two are Python's.
_DEFINITIONS = tuple(
    re.compile(pattern)
    for pattern in (
        r"^\s*(?:async\s+)?def\s+(?P<n>test\w*)\s*\(",
        r"^\s*class\s+(?P<n>Test\w*)\s*[(:]",
        r"^\s*(?:it|test|describe|context|specify|suite)"
        rf"{_MODIFIERS}\s*"
        rf"\(\s*{_JS_NAME}",
        rf"^\s*(?:x|f)(?:it|test|describe|context|specify)\s*\(\s*{_JS_NAME}",
        # Go's: the prefix alone, or followed by anything but a lowercase letter (`go test`
        # runs no `Testparse`, which is a plain function).
        r"^func\s+(?P<n>(?:Test|Benchmark|Fuzz|Example)(?![a-z])\w*)\s*\(",
        r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+(?P<n>test_\w+)\s*\(",
        rf"^\s*(?:it|describe|context|test|specify)\s+{_RUBY_NAME}\s+do\b",
        r"^\s*(?:public\s+|protected\s+|private\s+)?(?:void|fun)\s+(?P<n>test\w*)\s*\(",
        # minitest and test-unit: a `test_` method, without parentheses (with them, the first).
        r"^\s*def\s+(?P<n>test_\w*[?!]?)\s*(?:;|#|$)",
    )
)
_PYTHON_DEFINITIONS = _DEFINITIONS[:2]
# A Go test's header, with the name it gives its `*testing.T`: its subtests are `t.Run(...)`.
_GO_TEST = re.compile(r"^func\s+Test\w*\s*\(\s*(?P<t>\w+)\s+\*testing\.T\s*\)")
# A Go benchmark: `go test` runs it only when asked (`-bench`), and it checks no behaviour, so
# it stands for no test (neither lost when removed nor gained when added).
_GO_BENCHMARK = re.compile(r"^func\s+Benchmark\w*\s*\(")
# A Go example, and the comment that makes `go test` run it and check what it prints: one
# without is compiled, never run, and stands for no test either.
_GO_EXAMPLE = re.compile(r"^func\s+Example\w*\s*\(")
_GO_OUTPUT = re.compile(r"^//\s*(?:Unordered output|Output):", re.IGNORECASE)
# A Go statement that starts a loop: the subtests it runs are as many as its rows.
_GO_LOOP = re.compile(r"^for\b")
# A literal table of cases: `var cases = []struct {` (its type first) or `cases := []tc{`.
_GO_TABLE = re.compile(
    r"^(?:var\s+)?(?P<n>\w+)\s*(?::=|=)\s*\[\](?:(?P<struct>struct\s*\{)|\*?[\w.]+\s*\{)$"
)
# A loop over one: `for _, tc := range cases {`.
_GO_RANGE = re.compile(r"^for\s+\w+\s*,\s*\w+\s*:?=\s*range\s+(?P<n>\w+)\s*\{$")
# A line in a loop before its `t.Run` that may leave a row out.
_GO_LEAVES = re.compile(r"^(?:if|switch|select|continue|break|return|goto)\b")
_GO_SKIPS = re.compile(r"\.(?:Skip|SkipNow|Skipf)\s*\(")
# A JavaScript test call whose name starts the next line, as Prettier lays out a call too long
# for one line (`test.each([...])(` then `'name',`): the header, and the line with the name.
_SPLIT_HEADER = re.compile(
    r"^\s*(?:(?:it|test|describe|context|specify|suite)"
    rf"{_MODIFIERS}"
    r"|(?:x|f)(?:it|test|describe|context|specify))\s*\(\s*$"
)
_NAME_LINE = re.compile(rf"^\s*{_JS_NAME}\s*,")
# Markers that are themselves a definition: `it.skip("name", ...)`, `xit("name", ...)`.
DEFINING_SKIP = re.compile(
    r"(?<![\w.$])(?:it|test|describe|context|specify|suite)(?:\.(?:serial|concurrent|cb))*"
    r"\.(?:skip|failing)\s*\("
    r"|(?<![\w.$])x(?:it|test|describe|context|specify)\s*\("
)
# A test skipped on a condition, which is a definition too: vitest's `it.skipIf(cond)("name",
# ...)` and `it.runIf(cond)(...)`, and the inline `(cond ? it.skip : it)("name", ...)`, which
# `app.guards.aliases` spells that way. Not skipped anyway: where the condition does not hold
# the test runs, so removing it removes a test.
CONDITIONAL_SKIP = re.compile(
    r"(?<![\w.$])(?:it|test|describe|context|specify|suite)\.(?P<how>skipIf|runIf)\s*"
    r"\((?P<cond>.*?)\)\s*\(\s*(?:['\"`]|$)"
)
# Decorators and attributes that skip a test whatever the platform or version.
_UNCONDITIONAL_SKIP = re.compile(
    r"^@pytest\.mark\.skip\b(?!if)|^@(unittest\.)?skip\b(?!If|Unless)|^#\[ignore\b"
    r"|^@Disabled\b|^@Ignore\b"
)
# A line that checks something: assert statements and methods, expect(...), Go's t.Error/Fatal,
# testify's require./assert., pytest.raises/warns, RSpec should, minitest must_; or that hands
# the checking to a helper: a call named like a check (`check_output(...)`, `verifyTree(...)`,
# a JavaScript `testRequestedRedirect(app, url, done)`) or, in Go, a call given the test's `t`.
# Any helper can be vacuous (`checkNothing()`), as any new test can: the review is the backstop.
_ASSERTION = re.compile(
    r"\bassert\w*\b|\bexpect\s*\(|\.expect\s*\(|\.should\b|\bmust_\w+"
    r"|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\brequire\.\w+\s*\("
    r"|\bpytest\.(?:raises|warns)\b"
    r"|(?:[Aa]ssert|[Cc]heck|[Vv]erify|[Ee]xpect|[Vv]alidate|[Ee]nsure)\w*\s*\("
    r"|(?<![\w$.])(?<!def )(?<!function )test[A-Z_][\w$]*\s*\("
    # AVA's and tap's assertions on their `t` (`t.is`, `t.deepEqual`, `t.throwsAsync`); not
    # `t.pass()`, which checks nothing: a check replaced by it still loses its assertions.
    r"|\bt\.(?:is|not|deepEqual|notDeepEqual|like|throws|throwsAsync|notThrows|notThrowsAsync"
    r"|regex|notRegex|snapshot|true|false|truthy|falsy|fail|equal|notEqual|ok|notOk|same"
    r"|notSame|strictSame|match|error|rejects|resolves)\s*\("
    r"|[(,]\s*t\s*[,)]"
    # A test that hands its `t` to a macro, AVA's `test('title', macro, ...args)`, its checks
    # written once in the macro; not a wrapper around an inline callback opening on the line
    # (`test('x', withPage, async page => {`), which holds them.
    r"|^(?!.*\{\s*$)\s*(?:test|it)(?:\.\w+)*\s*\(\s*(?:'(?:[^'\\]|\\.)*'"
    r"|\"(?:[^\"\\]|\\.)*\"|`[^`]*`)\s*,\s*[A-Za-z_$][\w$.]*\s*[,)]"
)
# The end of a Python header: `):`, `) -> None:`, or a class's `:`, maybe with code after it.
_SIGNATURE_END = re.compile(r"(\)\s*(->[^:]*)?|^\s*class\s+\w+\s*):")
_COMMENT = re.compile(r"^(#|//|/\*|\*)")
_CLOSER = re.compile(r"^(\}|\)|\]|end\b)")
# A body longer than this is not compared (and its definition is treated as partly visible).
_MAX_BODY_LINES = 2000
# Line visits one `definitions` call may spend reading bodies (see `_View`).
_MIN_BUDGET = 200_000
# Lines above a header searched for its decorators.
_MAX_DECORATOR_LINES = 200
_MAX_SIGNATURE_LINES = 40
_MAX_DECORATOR_CHARS = 20_000


def is_test_path(path: str) -> bool:
    """A file that holds tests or material for them (by its name or its folder)."""
    return bool(_TEST_FILE.search(path) or _TEST_DIR.search(path))


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
    name: `test/_x.js`, `test/_helpers/x.js`; nor a Go file the go tool ignores, its name or
    a folder on its path starting with `_` or `.` (`_old/x_test.go`, `.x_test.go`)."""
    if _MATERIAL_DIR.search(path) or is_conftest(path):
        return False
    if path.endswith(".go") and _GO_IGNORED.search(path):
        return False
    if is_test_module(path):
        return True
    if _AVA_HELPER.search(path):
        return False
    return bool(_TEST_DIR.search(path) and _COLLECTED_BY_FOLDER.search(path))


def definition_name(text: str) -> str | None:
    for pattern in _DEFINITIONS:
        match = pattern.search(text)
        if match is not None:
            return _NAME_ESCAPE.sub(r"\1", match.group("n"))
    return None


def definition_name_at(lines: Sequence[Line], index: int) -> str | None:
    """The name of the test defined at `lines[index]`: on the header line itself, or, for a
    JavaScript call split after its `(`, on the next line of the same run (`test(` then
    `'name',`)."""
    name = definition_name(lines[index].text)
    if name is not None or not _SPLIT_HEADER.match(lines[index].text):
        return name
    if not _next_in_run(lines, index + 1):
        return None
    match = _NAME_LINE.match(lines[index + 1].text)
    return _NAME_ESCAPE.sub(r"\1", match.group("n")) if match else None


def is_assertion(text: str) -> bool:
    return bool(_ASSERTION.search(text))


@dataclass(frozen=True)
class Definition:
    """One test definition found in a run of added or removed lines."""

    name: str
    line: Line
    # The body, normalised (stripped, no blank or comment lines), when all of it is in the
    # change; None when the change shows only part of it.
    body: tuple[str, ...] | None
    # Assertion lines in the part of the body the change shows.
    assertions: int
    # The number of the body's last line, when the whole body is in the change.
    end: int | None
    # How many tests it stands for: the product of its literal parametrize lists (Python),
    # its subtests (Go), else 1.
    cases: int


@dataclass
class _View:
    """One side's run of lines with what the body reader asks of each line, computed once
    (nested suites read the same lines again), and a budget of line visits: past it, bodies
    are unknown, which only makes the rule stricter."""

    lines: Sequence[Line]
    indents: list[int]
    stripped: list[str]
    checks: list[bool]
    budget: int

    @classmethod
    def of(cls, lines: Sequence[Line]) -> _View:
        stripped = [line.text.strip() for line in lines]
        return cls(
            lines=lines,
            indents=[indent(line.text) for line in lines],
            stripped=stripped,
            checks=[is_assertion(text) for text in stripped],
            budget=max(_MIN_BUDGET, 20 * len(lines)),
        )


def definitions(lines: Sequence[Line], last_line: int | None) -> list[Definition]:
    """The test definitions in `lines` (one side of a file's change, in line order).
    `last_line` is that side's line count when known, so a body that runs to the end of the
    file counts as whole."""
    found: list[Definition] = []
    view: _View | None = None
    for index, line in enumerate(lines):
        name = definition_name_at(lines, index)
        if name is None:
            continue
        view = view or _View.of(lines)
        python = any(pattern.search(line.text) for pattern in _PYTHON_DEFINITIONS)
        body, assertions, end = _body(view, index, last_line, python=python)
        cases = _cases(lines, index) if python else _go_cases(view, index)
        found.append(Definition(name, line, body, assertions, end, cases))
    return found


def defines_tests(text: str) -> bool:
    """Whether a whole file's text defines a test (read as `definitions` reads a change)."""
    lines = [Line(number, line, number) for number, line in enumerate(text.splitlines(), 1)]
    return bool(definitions(lines, len(lines)))


def skipped_definitions(defs: Sequence[Definition], lines: Sequence[Line]) -> set[int]:
    """Header line numbers of the definitions in `lines` that are skipped whatever the
    platform: `it.skip`, `xit`, `@pytest.mark.skip`, `@unittest.skip`, `#[ignore]`,
    `@Disabled`, or a test inside a suite skipped that way."""
    position = {line.number: index for index, line in enumerate(lines)}
    open_ends: list[int] = []  # last lines of the skipped suites around the current line
    found: set[int] = set()
    for definition in defs:
        number = definition.line.number
        while open_ends and open_ends[-1] < number:
            open_ends.pop()
        own = bool(DEFINING_SKIP.search(definition.line.text)) or _skip_decorated(
            lines, position[number]
        )
        if own or open_ends:
            found.add(number)
            if definition.end is not None:
                open_ends.append(definition.end)
    return found


def _skip_decorated(lines: Sequence[Line], index: int) -> bool:
    """Whether the decorators right above `lines[index]` (same run) skip it unconditionally."""
    header = indent(lines[index].text)
    stop = max(index - _MAX_DECORATOR_LINES, 0)
    while index > stop and lines[index - 1].number == lines[index].number - 1:
        index -= 1
        text = lines[index].text
        stripped = text.strip()
        if _UNCONDITIONAL_SKIP.search(stripped):
            return True
        if not stripped.startswith(("@", "#[", ")")) and indent(text) <= header:
            return False
    return False


def indent(text: str) -> int:
    """A line's indentation width, tabs counted as four columns."""
    expanded = text.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def enclosing(lines: Sequence[str], position: int) -> int | None:
    """The position of the nearest line above that is indented less (the suite, class or
    block a line is in), or None at the top level."""
    level = indent(lines[position])
    for index in range(position - 1, -1, -1):
        if lines[index].strip() and indent(lines[index]) < level:
            return index
    return None


def block_end(lines: Sequence[str], position: int, *, python: bool) -> int:
    """The end (exclusive) of the block a definition at `lines[position]` opens: before the
    next line indented no deeper (Python; a `)` closing a long signature continues it), or
    just after such a line when it closes the block (`}`, `end`)."""
    header = indent(lines[position])
    for index in range(position + 1, len(lines)):
        stripped = lines[index].strip()
        if not stripped or indent(lines[index]) > header:
            continue
        if python:
            if stripped[0] in ")]":
                continue
            return index
        return index + 1 if _CLOSER.match(stripped) else index
    return len(lines)


def _next_in_run(lines: Sequence[Line], position: int) -> bool:
    return position < len(lines) and lines[position].number == lines[position - 1].number + 1


def _body(
    view: _View, index: int, last_line: int | None, *, python: bool
) -> tuple[tuple[str, ...] | None, int, int | None]:
    """The body that follows a definition's header in the same run of consecutive lines, its
    assertion lines (the header's own included, for one-line tests) and its last line number.
    Python's body ends before the first line indented no deeper than the header; a braced or
    `do` body at its closing line (`}`, `})`, `end`) at the header's indentation. The body is
    None when the run stops before it ends (unless the file ends there too)."""
    lines = view.lines
    header = view.indents[index]
    assertions = int(view.checks[index])
    position: int | None = index + 1
    if python:
        position = _past_signature(lines, index)
    if position is None:
        return None, assertions, None
    body: list[str] = []
    while len(body) < _MAX_BODY_LINES and view.budget > 0:
        view.budget -= 1
        last = lines[position - 1].number
        if not _next_in_run(lines, position):
            whole = last_line is not None and last == last_line
            return (tuple(body), assertions, last) if whole else (None, assertions, None)
        stripped = view.stripped[position]
        if stripped and view.indents[position] <= header:
            if not python and _CLOSER.match(stripped):
                return (*body, stripped), assertions, last + 1
            return tuple(body), assertions, last
        if stripped and not _COMMENT.match(stripped):
            body.append(stripped)
            assertions += view.checks[position]
        position += 1
    return None, assertions, None


def _past_signature(lines: Sequence[Line], index: int) -> int | None:
    """The position after a Python header that may span lines (`def test_x(\\n a,\\n) ->
    None:`); None when its end is not in the run."""
    position = index
    for _ in range(_MAX_SIGNATURE_LINES):
        if _SIGNATURE_END.search(lines[position].text):
            return position + 1
        position += 1
        if not _next_in_run(lines, position):
            return None
    return None


def containers(defs: Sequence[Definition]) -> set[int]:
    """Header line numbers of the definitions that are suites: a `describe`, `context` or
    `class Test...` whose whole body is known and holds other test definitions. A suite is not
    itself a test; the tests inside it are, and each of them is counted on its own."""
    ordered = sorted(defs, key=lambda definition: definition.line.number)
    found: set[int] = set()
    for definition, following in pairwise(ordered):
        # Definitions come in line order, so a suite's first inner test is the next one.
        end = definition.end
        if end is not None and definition.line.number < following.line.number <= end:
            found.add(definition.line.number)
    return found


def decorator_start(lines: Sequence[Line], index: int) -> int:
    """The position of the first decorator line right above `lines[index]` (same run of
    lines), or `index` itself when it has none."""
    header = indent(lines[index].text)
    start = index
    stop = max(index - _MAX_DECORATOR_LINES, 0)
    while start > stop and lines[start - 1].number == lines[start].number - 1:
        text = lines[start - 1].text
        stripped = text.strip()
        if not stripped or (indent(text) <= header and not stripped.startswith(("@", ")", "]"))):
            break
        start -= 1
    return start


def _cases(lines: Sequence[Line], index: int) -> int:
    """How many tests a Python test stands for: the product of the lengths of the literal
    lists in the `parametrize` decorators right above it (1 when there are none, or when a
    list is not a literal the change shows)."""
    header = indent(lines[index].text)
    start = decorator_start(lines, index)
    decorators: list[list[str]] = []
    for line in lines[start:index]:
        if indent(line.text) == header and line.text.strip().startswith("@"):
            decorators.append([])
        if decorators:
            decorators[-1].append(line.text)
    total = 1
    for decorator in decorators:
        if "parametrize" in decorator[0]:
            total *= _parametrized_cases("\n".join(decorator))
    return total


def _go_cases(view: _View, index: int) -> int:
    """How many tests a Go test stands for, from the part of its body the run of lines shows:
    one per statement directly in the body that is a `t.Run(...)` call (its own subtests,
    nested, not counted apart) or a `for` loop calling `t.Run` (one, since the rows of a
    table are not read, as a `parametrize` list that is not a literal counts one); at least
    1. A subtest under an `if` or `switch` may not run, and counts nothing. A benchmark, and
    an example with no output comment (neither runs under a plain `go test`), none."""
    if _GO_BENCHMARK.match(view.lines[index].text):
        return 0
    if _GO_EXAMPLE.match(view.lines[index].text):
        return int(_go_example_checked(view, index))
    header = _GO_TEST.match(view.lines[index].text)
    if header is None:
        return 1
    run = re.compile(rf"(?<![\w.]){re.escape(header.group('t'))}\.Run\s*\(")
    tables = _go_tables(view, index)
    direct: int | None = None  # the indentation of the statements directly in the body
    loop = counted = False  # the current direct statement is a loop; it was counted
    rows = 1  # the subtests one `t.Run` in the current loop stands for
    guarded = False  # a line of the loop before its `t.Run` may leave a row out
    subtests = 0
    for stripped, depth in _body_lines(view, index, budgeted=True):
        if direct is None or depth <= direct:
            direct, loop, counted = depth, bool(_GO_LOOP.match(stripped)), False
            ranged = _GO_RANGE.match(stripped)
            rows = tables.get(ranged["n"], 1) if ranged else 1
            guarded = False
            opens = bool(run.match(stripped))
        else:
            opens = loop and bool(run.search(stripped))
            if loop and not opens and _GO_LEAVES.match(stripped):
                guarded = True
        if opens and not counted:
            subtests, counted = subtests + (1 if guarded else rows), True
    return max(subtests, 1)


def _body_lines(view: _View, index: int, *, budgeted: bool) -> Iterator[tuple[str, int]]:
    """The lines of the body of the definition at `index` the run of lines shows (stripped,
    with their indentation), blank and comment lines left out; `budgeted` spends the view's
    budget of line visits."""
    position = index + 1
    while _next_in_run(view.lines, position) and (not budgeted or view.budget > 0):
        if budgeted:
            view.budget -= 1
        stripped, depth = view.stripped[position], view.indents[position]
        position += 1
        if not stripped or _COMMENT.match(stripped):
            continue
        if depth <= view.indents[index]:
            return
        yield stripped, depth


def _go_tables(view: _View, index: int) -> dict[str, int]:
    """The literal tables a Go test declares directly in its body (`var cases = []struct{...}{
    {...}, {...}, }`, `cases := []testCase{...}`), each with its number of rows: the lines of
    the literal one level in that open a row with `{`. None when the test may skip (`t.Skip`
    anywhere in it): a row may then not run."""
    found: dict[str, int] = {}
    name: str | None = None
    rows: int | None = None  # None while the struct's type is read, else the rows so far
    opening = row_depth = -1
    for stripped, depth in _body_lines(view, index, budgeted=False):
        if _GO_SKIPS.search(stripped):
            return {}
        if name is None:
            table = _GO_TABLE.match(stripped)
            if table is not None:
                name, opening, row_depth = table["n"], depth, -1
                rows = None if table["struct"] else 0
            continue
        if depth == opening:
            if rows is None and stripped.startswith("}{"):
                rows = 0
            elif stripped == "}":
                if rows:
                    found[name] = rows
                name = None
            continue
        if rows is not None and stripped.startswith("{"):
            row_depth = depth if row_depth < 0 else row_depth
            rows += depth == row_depth
    return found


def _go_example_checked(view: _View, index: int) -> bool:
    """Whether the Go example at `view.lines[index]` has an output comment in the part of
    its body the run shows (`// Output:`): only then does `go test` run it."""
    position = index + 1
    while _next_in_run(view.lines, position) and view.budget > 0:
        view.budget -= 1
        if _GO_OUTPUT.match(view.stripped[position]):
            return True
        if view.lines[position].text.startswith("}"):
            return False
        position += 1
    return False


def _parametrized_cases(text: str) -> int:
    if len(text) > _MAX_DECORATOR_CHARS:
        return 1
    try:
        tree = ast.parse(textwrap.dedent(text).strip().removeprefix("@"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 1
    call = tree.body
    if not isinstance(call, ast.Call):
        return 1
    values: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "argvalues":
            values = keyword.value
    if isinstance(values, ast.List | ast.Tuple | ast.Set):
        return max(len(values.elts), 1)
    return 1
