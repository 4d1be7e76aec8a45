"""JavaScript's and TypeScript's test files, as Jest, Vitest, Mocha, Jasmine, AVA, tap and
node:test read them: `it('name', ...)`, `test(...)`, `describe(...)` with their modifiers,
`expect(...)` and `t.is(...)` checks, `.skip`, `xit`, `.only` and `this.skip()`, braced
blocks.
"""

from __future__ import annotations

import re

from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either
from app.guards.tamper.lang.text import quoted

# Every module format: CommonJS, ES modules, JSX, TypeScript.
SUFFIXES = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".tsx", ".mts", ".cts")

_NAME = quoted("'\"`")
# What may follow `it`/`test` before its call: jest's and vitest's `.skip`, `.only`, `.each(...)`,
# `.concurrent`, `.failing` (an expected failure), `.skipIf(...)`; AVA's `.serial` and `.cb`, in
# any order (`test.serial.skip`).
_MODIFIERS = (
    r"(?:\.(?:skip|only|serial|concurrent|failing|cb|each\([^)]*\)|(?:skipIf|runIf)\(.*?\)))*"
)
# A test skipped on a condition, which is a definition too: vitest's `it.skipIf(cond)("name",
# ...)` and `it.runIf(cond)(...)`, and the inline `(cond ? it.skip : it)("name", ...)`, which
# `aliases` spells that way. Not skipped anyway: where the condition does
# not hold the test runs, so removing it removes a test.
CONDITIONAL_SKIP = re.compile(
    r"(?<![\w.$])(?:it|test|describe|context|specify|suite)\.(?P<how>skipIf|runIf)\s*"
    r"\((?P<cond>.*?)\)\s*\(\s*(?:['\"`]|$)"
)
# Markers that are themselves a definition: `it.skip("name", ...)`, `xit("name", ...)`.
_DEFINING_SKIP = re.compile(
    r"(?<![\w.$])(?:it|test|describe|context|specify|suite)(?:\.(?:serial|concurrent|cb))*"
    r"\.(?:skip|failing)\s*\("
    r"|(?<![\w.$])x(?:it|test|describe|context|specify)\s*\("
)

JAVASCRIPT = Language(
    name="javascript",
    suffixes=SUFFIXES,
    comment="//",
    headers=(
        re.compile(rf"^\s*(?:it|test|describe|context|specify|suite){_MODIFIERS}\s*\(\s*{_NAME}"),
        re.compile(rf"^\s*(?:x|f)(?:it|test|describe|context|specify)\s*\(\s*{_NAME}"),
    ),
    # A call too long for one line, as Prettier lays it out: the name starts the next line
    # (`test.each([...])(` then `'name',`).
    split_header=re.compile(
        r"^\s*(?:(?:it|test|describe|context|specify|suite)"
        rf"{_MODIFIERS}"
        r"|(?:x|f)(?:it|test|describe|context|specify))\s*\(\s*$"
    ),
    name_line=re.compile(rf"^\s*{_NAME}\s*,"),
    assertions=either(
        *CHECKS,
        # supertest's `.expect(200)`, chai's `.should`.
        r"\bexpect\s*\(|\.expect\s*\(|\.should\b",
        # AVA's and tap's assertions on their `t` (`t.is`, `t.deepEqual`, `t.throwsAsync`); not
        # `t.pass()`, which checks nothing: a check replaced by it still loses its assertions.
        r"\bt\.(?:is|not|deepEqual|notDeepEqual|like|throws|throwsAsync|notThrows|notThrowsAsync"
        r"|regex|notRegex|snapshot|true|false|truthy|falsy|fail|equal|notEqual|ok|notOk|same"
        r"|notSame|strictSame|match|error|rejects|resolves)\s*\(",
        # A helper given the test's `t`, which checks through it.
        r"[(,]\s*t\s*[,)]",
        # A test that hands its `t` to a macro, AVA's `test('title', macro, ...args)`, its
        # checks written once in the macro; not a wrapper around an inline callback opening on
        # the line (`test('x', withPage, async page => {`), which holds them.
        r"^(?!.*\{\s*$)\s*(?:test|it)(?:\.\w+)*\s*\(\s*(?:'(?:[^'\\]|\\.)*'"
        r"|\"(?:[^\"\\]|\\.)*\"|`[^`]*`)\s*,\s*[A-Za-z_$][\w$.]*\s*[,)]",
    ),
    markers=(
        Marker("defining", _DEFINING_SKIP),
        Marker("conditional", CONDITIONAL_SKIP),
        # Skipping from inside a test: Mocha's `this.skip()`, node:test's and tap's
        # `t.skip()`, Vitest's `ctx.skip()`, Jasmine's `pending()`.
        Marker(
            "body",
            re.compile(
                r"(?<![\w$.])(?:this|t|ctx|context)\.skip\s*\("
                r"|(?<![\w$.])pending\s*\(\s*(?:['\"`)]|$)"
            ),
            own=True,
        ),
    ),
    # node:test's options object on a test, `test('name', { skip: true }, fn)` (or `todo`):
    # the value says whether it skips (`false` does not; a condition false on Linux does not).
    option=re.compile(
        r"(?<![\w.$])(?:it|test|describe|suite)\s*\(\s*(?P<q>['\"`]).*?(?P=q)\s*,\s*\{[^{}]*?"
        r"\b(?:skip|todo)\s*:\s*(?P<value>[^,}]+)"
    ),
    # Focus markers skip every other test in the run.
    focus=re.compile(
        r"(?<![\w.$])(?:it|test|describe|context|specify|suite)(?:\.(?:serial|concurrent|cb))*"
        r"\.only\s*\("
        r"|(?<![\w.$])f(?:it|describe)\s*\("
    ),
    suite_skip=re.compile(
        r"(?<![\w.$])(?:describe|context|suite)\.(?:skip|skipIf|runIf)\s*\("
        r"|(?<![\w.$])x(?:describe|context)\s*\("
    ),
    skipped=_DEFINING_SKIP,
    syntax=Syntax(comment=("//",), block=(("/*", "*/"),), spanning=("`",), quotes=("'", '"')),
)
