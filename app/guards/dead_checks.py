"""Assertions kept in the file but made to check nothing, where a change takes an assertion
out: put back under a condition that never holds, or replaced by one that always holds.

- A **dead block**: the lines under an added `if False:`, `if 0:`, `if None:`, `while False:`,
  Go's `if false {`, JavaScript's `if (false) {` (or `0`, `null`, `undefined`), to the end of
  the block, read by indentation on the whole new file (or as much as a diff shows). An
  assertion there that was in the file before (unchanged, or taken out and put back) never
  runs; a new test's own new checks are left alone.
- An assertion that **always holds**: Python's `assert` of a literal that is true (`assert
  True`, `assert 1`, `assert "x"`, a non-empty tuple, the classic `assert (x, "message")`), or
  an `or` with such a literal among its operands (`assert True or total == 3`); JavaScript's
  `assert(true)`, `assert.ok(true)`, `t.true(true)`, `t.truthy(1)`, `expect(true).toBe(true)`
  and the like.

An assertion that always holds is read only where the file loses an assertion, so a new
test's placeholder `assert True` is left alone. The expressions are parsed with `ast`, never
evaluated; a condition spelled otherwise (`if 1 == 2:`) is not read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from app.guards.changes import Line
from app.guards.suite import indent

_NEVER = r"(?:False|false|0|None|null|undefined|nil)"
_DEAD_HEADER = re.compile(
    rf"^\s*(?:(?:if|while)\s+{_NEVER}\s*:\s*$|(?:\}}\s*else\s+)?if\s*\(\s*!?\s*{_NEVER}\s*\)\s*\{{"
    rf"|if\s+{_NEVER}\s*\{{)"
)
_JS_TRUE = r"(?:true|1|!0|!false|'[^']+'|\"[^\"]+\")"
_JS_ALWAYS = re.compile(
    rf"^\s*(?:assert(?:\.ok)?|t\.(?:true|truthy|assert)|expect\s*\(\s*{_JS_TRUE}\s*\)\s*\.\s*"
    rf"(?:toBeTruthy|to\.be\.ok))\s*\(\s*(?:{_JS_TRUE}\s*)?[,)]"
    rf"|^\s*expect\s*\(\s*(?P<v>{_JS_TRUE})\s*\)\s*\.\s*(?:toBe|toEqual|toStrictEqual)\s*\(\s*(?P=v)\s*\)"
)


def dead_blocks(shown: Sequence[Line], added: Sequence[Line]) -> dict[int, list[Line]]:
    """For each added line that opens a block under a never-true condition, by its number, the
    lines of that block, read on `shown` (the new side, whole or as the diff shows it): to the
    brace that closes it (Go, JavaScript), or to the first line indented no deeper (Python)."""
    numbers = {line.number for line in added}
    blocks: dict[int, list[Line]] = {}
    for position, line in enumerate(shown):
        if line.number in numbers and _DEAD_HEADER.match(line.text):
            braces = line.text.rstrip().endswith("{")
            blocks[line.number] = _block(shown, position, braces=braces)
    return blocks


def _block(shown: Sequence[Line], position: int, *, braces: bool) -> list[Line]:
    depth = shown[position].text.count("{") - shown[position].text.count("}")
    header = indent(shown[position].text)
    block: list[Line] = []
    for index in range(position + 1, len(shown)):
        if shown[index].number != shown[index - 1].number + 1:
            break
        text = shown[index].text
        if braces:
            depth += text.count("{") - text.count("}")
            if depth <= 0:
                break
        elif text.strip() and indent(text) <= header:
            break
        block.append(shown[index])
    return block


def always_holds(text: str, path: str) -> bool:
    """Whether an assertion line (stripped) checks nothing: it holds whatever the code does."""
    if path.endswith((".py", ".pyi")):
        return _python_always(text)
    return bool(_JS_ALWAYS.match(text))


def _python_always(text: str) -> bool:
    if not text.startswith("assert"):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return False
    test = tree.body[0].test
    operands = (
        test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    )
    return any(_true_literal(operand) for operand in operands)


def _true_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
        return bool(node.elts if not isinstance(node, ast.Dict) else node.keys)
    return False
