"""Go's test files, as `go test` reads them: `func TestX(t *testing.T)` (and benchmarks,
fuzz tests, examples), `t.Error`/`t.Fatal` and testify checks, `t.Skip()`, braced blocks, and
one test per `t.Run` subtest directly in a test's body (per row of a literal table a loop runs
them over).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, Marker, Run, either
from app.guards.tamper.lang.text import next_in_run

# A Go test's header, with the name it gives its `*testing.T`: its subtests are `t.Run(...)`.
_TEST = re.compile(r"^func\s+Test\w*\s*\(\s*(?P<t>\w+)\s+\*testing\.T\s*\)")
# A Go benchmark: `go test` runs it only when asked (`-bench`), and it checks no behaviour, so
# it stands for no test (neither lost when removed nor gained when added).
_BENCHMARK = re.compile(r"^func\s+Benchmark\w*\s*\(")
# A Go example, and the comment that makes `go test` run it and check what it prints: one
# without is compiled, never run, and stands for no test either.
_EXAMPLE = re.compile(r"^func\s+Example\w*\s*\(")
_OUTPUT = re.compile(r"^//\s*(?:Unordered output|Output):", re.IGNORECASE)
# A Go statement that starts a loop: the subtests it runs are as many as its rows.
_LOOP = re.compile(r"^for\b")
# A literal table of cases: `var cases = []struct {` (its type first) or `cases := []tc{`.
_TABLE = re.compile(
    r"^(?:var\s+)?(?P<n>\w+)\s*(?::=|=)\s*\[\](?:(?P<struct>struct\s*\{)|\*?[\w.]+\s*\{)$"
)
# A loop over one: `for _, tc := range cases {`.
_RANGE = re.compile(r"^for\s+\w+\s*,\s*\w+\s*:?=\s*range\s+(?P<n>\w+)\s*\{$")
# A line in a loop before its `t.Run` that may leave a row out.
_LEAVES = re.compile(r"^(?:if|switch|select|continue|break|return|goto)\b")
_SKIPS = re.compile(r"\.(?:Skip|SkipNow|Skipf)\s*\(")
# A file or folder the go tool ignores: its name starts with `_` or `.`.
_IGNORED = re.compile(r"(?:^|/)[._]")


@dataclass(frozen=True)
class _Go(Language):
    def cases(self, run: Run, index: int) -> int:
        """One per statement directly in the body that is a `t.Run(...)` call (its own
        subtests, nested, not counted apart) or a `for` loop calling `t.Run` (one per row of
        the literal table it ranges over, else one, as a `parametrize` list that is not a
        literal counts one); at least 1. A subtest under an `if` or `switch` may not run, and
        counts nothing. A benchmark, and an example with no output comment (neither runs
        under a plain `go test`), none. Read from the part of the body the run shows."""
        if _BENCHMARK.match(run.lines[index].text):
            return 0
        if _EXAMPLE.match(run.lines[index].text):
            return int(_example_checked(run, index))
        header = _TEST.match(run.lines[index].text)
        if header is None:
            return 1
        subtest = re.compile(rf"(?<![\w.]){re.escape(header.group('t'))}\.Run\s*\(")
        tables = _tables(run, index)
        direct: int | None = None  # the indentation of the statements directly in the body
        loop = counted = False  # the current direct statement is a loop; it was counted
        rows = 1  # the subtests one `t.Run` in the current loop stands for
        guarded = False  # a line of the loop before its `t.Run` may leave a row out
        subtests = 0
        for stripped, depth in run.body_lines(index, budgeted=True):
            if direct is None or depth <= direct:
                direct, loop, counted = depth, bool(_LOOP.match(stripped)), False
                ranged = _RANGE.match(stripped)
                rows = tables.get(ranged["n"], 1) if ranged else 1
                guarded = False
                opens = bool(subtest.match(stripped))
            else:
                opens = loop and bool(subtest.search(stripped))
                if loop and not opens and _LEAVES.match(stripped):
                    guarded = True
            if opens and not counted:
                subtests, counted = subtests + (1 if guarded else rows), True
        return max(subtests, 1)


def _tables(run: Run, index: int) -> dict[str, int]:
    """The literal tables a Go test declares directly in its body (`var cases = []struct{...}{
    {...}, {...}, }`, `cases := []testCase{...}`), each with its number of rows: the lines of
    the literal one level in that open a row with `{`. None when the test may skip (`t.Skip`
    anywhere in it): a row may then not run."""
    found: dict[str, int] = {}
    name: str | None = None
    rows: int | None = None  # None while the struct's type is read, else the rows so far
    opening = row_depth = -1
    for stripped, depth in run.body_lines(index, budgeted=False):
        if _SKIPS.search(stripped):
            return {}
        if name is None:
            table = _TABLE.match(stripped)
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


def _example_checked(run: Run, index: int) -> bool:
    """Whether the Go example at `run.lines[index]` has an output comment in the part of its
    body the run shows (`// Output:`): only then does `go test` run it."""
    position = index + 1
    while next_in_run(run.lines, position) and run.budget > 0:
        run.budget -= 1
        if _OUTPUT.match(run.stripped[position]):
            return True
        if run.lines[position].text.startswith("}"):
            return False
        position += 1
    return False


GO = _Go(
    name="go",
    suffixes=(".go",),
    comment="//",
    # The prefix alone, or followed by anything but a lowercase letter (`go test` runs no
    # `Testparse`, which is a plain function).
    headers=(re.compile(r"^func\s+(?P<n>(?:Test|Benchmark|Fuzz|Example)(?![a-z])\w*)\s*\("),),
    assertions=either(
        *CHECKS,
        r"\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b",
        # testify's `require.Equal(...)`, and a helper given the test's `t`.
        r"\brequire\.\w+\s*\(",
        r"[(,]\s*t\s*[,)]",
    ),
    markers=(Marker("body", re.compile(r"\b[tb]\.Skip(Now|f)?\s*\(")),),
    syntax=Syntax(comment=("//",), block=(("/*", "*/"),), spanning=("`",), quotes=('"', "'")),
)


def is_test_file(path: str) -> bool:
    """A file `go test` builds as tests: its name ends in `_test.go`."""
    return path.endswith("_test.go")


def ignored(path: str) -> bool:
    """A Go file the go tool ignores: its name, or a folder on its path, starts with `_` or
    `.` (`_old/x_test.go`, `.x_test.go`)."""
    return path.endswith(".go") and bool(_IGNORED.search(path))
