"""Assertions kept in the file but made to check nothing: put under a condition that never
holds or a handler that swallows their failure, or replaced by one that always holds.

- A **dead block**: the lines under an added `if`, `elif` or `while` whose condition is false
  where the suite runs, read as a skip's condition is (`conditions.skip_conditions`): a
  literal (`if False:`, `if 0:`, `while None:`, Go's `if false {`, JavaScript's `if (false)
  {`, `!true`, `1 == 2`) or a platform test (`if sys.platform == "win32":`), to the end of the
  block, read by braces or indentation on the whole new file (or as much as a diff shows). An
  assertion there that was in the file before (unchanged, or taken out and put back) never
  runs; a new test's own new checks are left alone.
- A **swallowing handler**: the lines under an added Python `with suppress(AssertionError)`
  (or `Exception`, `BaseException`), or an added `try:` whose handler catches those (or all)
  and neither re-raises nor checks; JavaScript's `try {` whose `catch` neither throws nor
  checks. An assertion there that was in the file before fails and nobody hears it.
- An assertion that **always holds**: Python's `assert` of a literal that is true (`assert
  True`, `assert 1`, `assert "x"`, a non-empty tuple, the classic `assert (x, "message")`), of
  an expression's identity with itself (`assert total is total`; not `==`, which runs the
  class's own `__eq__`), or an `or` with either among its operands (`assert True or total ==
  3`); JavaScript's `assert(true)`, `assert.ok(true)`, `t.true(true)`, `t.truthy(1)`,
  `expect(true).toBe(true)`, and a name or property compared with itself (`expect(x).toBe(x)`,
  `assert.equal(x, x)`, `t.is(x, x)`).

An assertion that always holds is read only where the file loses an assertion, so a new
test's placeholder `assert True` is left alone. The expressions are parsed with `ast`, never
evaluated; a condition that cannot be read (`if x == x:`) is not taken for false.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from app.guards.changes import Line
from app.guards.tamper.conditions.skip_conditions import condition_false_on_linux
from app.guards.tamper.lang import Reader, reader_for
from app.guards.tamper.lang.go import GO
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.lang.text import indent

# A line that opens a block on a condition: Python's `if cond:`, `elif cond:`, `while cond:`,
# Go's `if cond {`, JavaScript's `if (cond) {`, `} else if (cond) {`.
_BLOCK_IF = re.compile(r"^\s*(?:\}\s*else\s+)?(?:if|elif|while)\b\s*(?P<cond>.+?)\s*[:{]\s*$")
# testify's checks of a literal that holds: `assert.True(t, true)`, `require.False(t, false)`,
# `assert.Nil(t, nil)`, `assert.NotNil(t, 1)`.
_GO_ALWAYS = re.compile(
    r"^(?:assert|require)\.(?:True\(\s*\w+\s*,\s*true|False\(\s*\w+\s*,\s*false"
    r"|Nil\(\s*\w+\s*,\s*nil|NotNil\(\s*\w+\s*,\s*(?:true|\d+|\"[^\"]*\"))\s*[,)]"
)
# A loop over an empty literal: Python's `for _ in []:` (or `()`, `{}`, `""`, `range(0)`),
# JavaScript's `for (const x of []) {`, Go's `for range []int{} {`, Rust's `for _ in 0..0 {`.
_EMPTY = r"(?:\[\s*\]|\(\s*\)|\{\s*\}|\"\"|''|range\(\s*0?\s*\)|set\(\s*\)|\w*\(\s*\)\.keys\(\))"
_EMPTY_LOOP = re.compile(
    rf"^\s*(?:async\s+)?for\s+[^:]+?\s+in\s+(?:{_EMPTY}|\[\s*\]|0\s*\.\.\s*0)\s*[:{{]\s*$"
    rf"|^\s*for\s*\(\s*(?:const|let|var)\s+[^;]+?\s+(?:of|in)\s+(?:\[\s*\]|\{{\s*\}}|''|\"\")\s*\)\s*\{{"
    r"|^\s*for\s+(?:[\w, ]+:?=\s*)?range\s+(?:\[\]\w+\{\s*\}|\"\"|0)\s*\{"
)
# A function nested in another, by its name.
_INNER_FUNCTION = re.compile(
    r"^\s+(?:async\s+)?def\s+(?P<name>\w+)\s*\(.*:\s*$"
    r"|^\s+(?:async\s+)?function\s*\*?\s*(?P<js>[\w$]+)\s*\(.*\{\s*$"
    r"|^\s+(?:const|let|var)\s+(?P<arrow>[\w$]+)\s*=\s*(?:async\s+)?(?:function\b.*|\([^)]*\)\s*=>\s*|[\w$]+\s*=>\s*)\{\s*$"
    r"|^\s+(?P<go>\w+)\s*:=\s*func\s*\(.*\{\s*$"
)
_FUNCTION_HEADER = re.compile(
    r"^\s*(?:async\s+)?def\s|^\s*func\b|.*\bfunction\b|.*=>\s*\{\s*$|^\s*(?:it|test|describe)\s*\("
)
_CATCHES_FAILURE = r"(?:AssertionError|Exception|BaseException)"
_SUPPRESS = re.compile(
    rf"^\s*with\s+(?:contextlib\.)?suppress\s*\([^)]*\b{_CATCHES_FAILURE}\b[^)]*\)\s*:"
)
_PY_TRY = re.compile(r"^\s*try\s*:\s*$")
_PY_EXCEPT = re.compile(
    rf"^\s*except\s*(?::|\(?[^):]*\b{_CATCHES_FAILURE}\b[^):]*\)?\s*(?:as\s+\w+\s*)?:)"
)
_JS_TRY = re.compile(r"^\s*try\s*\{\s*$")
_JS_CATCH = re.compile(r"^\s*\}\s*catch\s*(?:\([^)]*\))?\s*\{")
_RETHROWS = re.compile(r"\b(?:raise|throw)\b|\bpytest\.fail\b|\bt\.(?:Fatal|Error|Fail)")
_JS_TRUE = r"(?:true|1|!0|!false|'[^']+'|\"[^\"]+\")"
_JS_ALWAYS = re.compile(
    rf"^\s*(?:assert(?:\.ok)?|t\.(?:true|truthy|assert)|expect\s*\(\s*{_JS_TRUE}\s*\)\s*\.\s*"
    rf"(?:toBeTruthy|to\.be\.ok))\s*\(\s*(?:{_JS_TRUE}\s*)?[,)]"
    rf"|^\s*expect\s*\(\s*(?P<v>[\w$.]+)\s*\)\s*\.\s*(?:toBe|toEqual|toStrictEqual)\s*\(\s*(?P=v)\s*\)"
    r"|^\s*(?:assert\.(?:equal|strictEqual|deepEqual|deepStrictEqual)|t\.(?:is|deepEqual|same))"
    r"\s*\(\s*(?P<w>[\w$.]+)\s*,\s*(?P=w)\s*[,)]"
)


def dead_blocks(shown: Sequence[Line], added: Sequence[Line]) -> dict[int, list[Line]]:
    """For each added line that opens a block under a never-true condition, or a loop over
    nothing, by its number, the lines of that block, read on `shown` (the new side, whole or
    as the diff shows it): to the brace that closes it (Go, JavaScript), or to the first line
    indented no deeper (Python)."""
    numbers = {line.number for line in added}
    blocks: dict[int, list[Line]] = {}
    for position, line in enumerate(shown):
        if line.number not in numbers:
            continue
        match = _BLOCK_IF.match(line.text)
        dead = match is not None and condition_false_on_linux(match["cond"])
        if dead or _EMPTY_LOOP.match(line.text):
            braces = line.text.rstrip().endswith("{")
            blocks[line.number] = _block(shown, position, braces=braces)
    return blocks


def uncalled_blocks(shown: Sequence[Line], added: Sequence[Line]) -> dict[int, list[Line]]:
    """For each added function nested in another (`def check():` in a test, `function
    check() {`, `const check = () => {`, Go's `check := func() {`), by its number, its body
    when the function around it never names it again: it never runs."""
    numbers = {line.number for line in added}
    blocks: dict[int, list[Line]] = {}
    for position, line in enumerate(shown):
        match = _INNER_FUNCTION.match(line.text) if line.number in numbers else None
        if match is None:
            continue
        braces = line.text.rstrip().endswith("{")
        block = _block(shown, position, braces=braces)
        outer = _enclosing_function(shown, position)
        if outer is None:
            continue
        inside = {other.number for other in block} | {line.number}
        name = next(value for value in match.groupdict().values() if value)
        named = re.compile(rf"(?<![\w$.]){re.escape(name)}\b")
        around = _block(shown, outer, braces=shown[outer].text.rstrip().endswith("{"))
        if not any(named.search(o.text) for o in around if o.number not in inside):
            blocks[line.number] = block
    return blocks


def _enclosing_function(shown: Sequence[Line], position: int) -> int | None:
    """The position of the function header the line at `position` is nested in (by
    indentation, in the same run of lines)."""
    depth = indent(shown[position].text)
    for index in range(position - 1, -1, -1):
        if shown[index].number != shown[index + 1].number - 1:
            return None
        text = shown[index].text
        if text.strip() and indent(text) < depth:
            if _FUNCTION_HEADER.match(text):
                return index
            depth = indent(text)
    return None


def _block(shown: Sequence[Line], position: int, *, braces: bool) -> list[Line]:
    """The lines of the block `shown[position]` opens, up to (not including) the line that
    closes it: by braces, the line where they first balance (`} else {` and `} catch (e) {`
    close it), or by indentation."""
    depth = shown[position].text.count("{") - shown[position].text.count("}")
    header = indent(shown[position].text)
    block: list[Line] = []
    for index in range(position + 1, len(shown)):
        if shown[index].number != shown[index - 1].number + 1:
            break
        text = shown[index].text
        if braces:
            closed, depth = _closes(text, depth)
            if closed:
                break
        elif text.strip() and indent(text) <= header:
            break
        block.append(shown[index])
    return block


def _closes(text: str, depth: int) -> tuple[bool, int]:
    """Whether the braces of `text` close a block open `depth` deep, and the depth after."""
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth <= 0:
            return True, depth
    return False, depth


def swallowed_blocks(
    shown: Sequence[Line], added: Sequence[Line], reader: Reader
) -> dict[int, list[Line]]:
    """For each added `try` (or `with suppress(...)`) whose failures are swallowed, by its
    number, the lines it guards: Python's `with suppress(AssertionError)` (or `Exception`,
    `BaseException`), a `try:` whose next handler catches those (or everything) and neither
    re-raises nor checks, JavaScript's `try {` whose `catch` neither throws nor checks (a
    check read by the file's `reader`)."""
    numbers = {line.number for line in added}
    blocks: dict[int, list[Line]] = {}
    for position, line in enumerate(shown):
        if line.number not in numbers:
            continue
        if _SUPPRESS.match(line.text):
            blocks[line.number] = _block(shown, position, braces=False)
        elif _PY_TRY.match(line.text) or _JS_TRY.match(line.text):
            braces = line.text.rstrip().endswith("{")
            block = _block(shown, position, braces=braces)
            if _handler_swallows(shown, position + len(block) + 1, reader, braces=braces):
                blocks[line.number] = block
    return blocks


def _handler_swallows(
    shown: Sequence[Line], position: int, reader: Reader, *, braces: bool
) -> bool:
    """Whether the handler opening at `shown[position]` catches an assertion's failure and
    lets it go: no `raise`/`throw`, no check, in its body."""
    if position >= len(shown):
        return False
    opening = shown[position].text
    pattern = _JS_CATCH if braces else _PY_EXCEPT
    if not pattern.match(opening):
        return False
    body = _block(shown, position, braces=braces)
    return not any(_RETHROWS.search(line.text) or reader.checks(line.text) for line in body)


def always_holds(text: str, path: str) -> bool:
    """Whether an assertion line (stripped) checks nothing: it holds whatever the code does."""
    reader = reader_for(path)
    if reader is PYTHON:
        return _python_always(text)
    if reader is GO:
        return bool(_GO_ALWAYS.match(text))
    return bool(_JS_ALWAYS.match(text))


def _python_always(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1:
        return False
    statement = tree.body[0]
    if isinstance(statement, ast.Assert):
        test = statement.test
        operands = (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        )
        return any(_true_literal(operand) for operand in operands)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return _unittest_always(statement.value)
    return False


def _unittest_always(call: ast.Call) -> bool:
    """unittest's checks of a literal that holds (`self.assertTrue(True)`,
    `self.assertFalse(0)`, `self.assertIsNone(None)`, `self.assertIsNotNone(1)`) or of an
    object's identity with itself (`self.assertIs(x, x)`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or call.keywords or not call.args:
        return False
    first = call.args[0]
    if func.attr in ("assertTrue", "assert_", "failUnless"):
        return _true_literal(first)
    if func.attr == "assertIsInstance" and len(call.args) >= 2:
        return _any_type(call.args[1], first)
    if func.attr == "assertGreaterEqual" and len(call.args) >= 2:
        return _length(first) and _zero(call.args[1])
    if func.attr == "assertIs" and len(call.args) >= 2:
        return ast.dump(first) == ast.dump(call.args[1])
    if not isinstance(first, ast.Constant):
        return False
    holds = {
        "assertFalse": not first.value,
        "failIf": not first.value,
        "assertIsNone": first.value is None,
        "assertIsNotNone": first.value is not None,
    }
    return holds.get(func.attr, False)


def _true_literal(node: ast.expr) -> bool:
    """A literal that is true, or an expression's identity with itself (`x is x`), or a
    check every value passes: `isinstance(x, object)` (or `type(x)`), `issubclass(X,
    object)`, `len(x) >= 0`, `not False`, `hasattr(x, "__class__")`. Not `x == x`, which
    runs the class's own `__eq__` (pluggy's `DistFacade` equality test)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        operand = node.operand
        return isinstance(operand, ast.Constant) and not operand.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2:
        called, (value, kind) = node.func.id, node.args
        if called in ("isinstance", "issubclass"):
            return _any_type(kind, value if called == "isinstance" else None)
        if called == "hasattr":
            return isinstance(kind, ast.Constant) and kind.value in _EVERY_OBJECT_HAS
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right, op = node.left, node.comparators[0], node.ops[0]
        if (isinstance(op, ast.GtE) and _length(left) and _zero(right)) or (
            isinstance(op, ast.LtE) and _zero(left) and _length(right)
        ):
            return True
        same = ast.dump(left) == ast.dump(right)
        return same and isinstance(op, ast.Is)
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
        return bool(node.elts if not isinstance(node, ast.Dict) else node.keys)
    return False


# Attributes every Python object has.
_EVERY_OBJECT_HAS = frozenset({"__class__", "__doc__", "__eq__", "__hash__", "__repr__", "__str__"})


def _any_type(kind: ast.expr, value: ast.expr | None) -> bool:
    """A type every value is an instance of: `object`, a tuple holding it, or the value's own
    `type(x)`."""
    if isinstance(kind, ast.Tuple):
        return any(_any_type(element, value) for element in kind.elts)
    if isinstance(kind, ast.Name) and kind.id == "object":
        return True
    return (
        value is not None
        and isinstance(kind, ast.Call)
        and isinstance(kind.func, ast.Name)
        and kind.func.id == "type"
        and len(kind.args) == 1
        and ast.dump(kind.args[0]) == ast.dump(value)
    )


def _length(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def _zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)
