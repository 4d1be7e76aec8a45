"""Whether a conditional skip still lets the test run on Linux, where ourobot's sandbox (and
nearly every CI) runs the suite: `skipif(sys.platform == "win32")` does, `skipif(True)`,
`skipif(sys.platform.startswith("linux"))` and `skipif(SOME_FLAG)` do not.

Only platform conditions are understood (`sys.platform`, `os.name`, `platform.system()`,
`platform.python_implementation()`, `sys.implementation.name`, Go's `runtime.GOOS`, Node's
`process.platform`), compared with string literals, combined with `and`/`or`/`not`. Any other
condition (a Python version, an installed package, an environment variable, a project flag)
may hold wherever the suite runs, so it is not "elsewhere only". The text is parsed with
`ast`, never evaluated.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence

from app.guards.changes import Line
from app.guards.suite import indent

_SUBJECTS = frozenset(
    {
        "sys.platform",
        "os.name",
        "platform.system()",
        "platform.python_implementation()",
        "sys.implementation.name",
        "runtime.GOOS",
        "process.platform",
    }
)
# Values those subjects take on Linux with CPython, and on other systems.
_LINUX = frozenset({"linux", "linux2", "posix", "cpython"})
_ELSEWHERE = frozenset(
    {
        "win32",
        "win",
        "windows",
        "nt",
        "cygwin",
        "msys",
        "darwin",
        "macos",
        "ios",
        "android",
        "java",
        "jython",
        "ironpython",
        "pypy",
        "emscripten",
        "wasi",
        "js",
        "wasm",
        "freebsd",
        "openbsd",
        "netbsd",
        "dragonfly",
        "aix",
        "sunos5",
        "solaris",
        "illumos",
        "plan9",
    }
)
_MAX_CHARS = 4000
_MAX_LINES = 20
# `if cond:`, `elif cond:`, Go's `if cond {`, JavaScript's `} else if (cond) {`.
_IF = re.compile(r"^\s*(?:\}\s*)?(?:else\s+if|elif|if)\b(?P<cond>.+?)[:{]\s*$")
# Python's one-line form: `if cond: pytest.skip(...)`.
_INLINE_IF = re.compile(r"^\s*if\b(?P<cond>.+?):\s*\S")


def decorator_skips_elsewhere_only(lines: Sequence[Line], index: int) -> bool:
    """A skip decorator or marker assignment starting at `lines[index]` (`@pytest.mark.skipif
    (...)`, `@unittest.skipIf(...)`, `@unittest.skipUnless(...)`, `pytestmark = ...`), read up
    to where its parentheses close in the same run of lines."""
    text = _balanced(lines, index)
    if text is None:
        return False
    text = textwrap.dedent(text).strip().removeprefix("@")
    if re.match(r"^pytestmark\s*=", text):
        text = text.split("=", 1)[1].strip()
    call = _parse(text)
    if not isinstance(call, ast.Call):
        return False
    name = _dotted(call.func) or ""
    condition = _condition(call)
    if condition is None:
        return False
    if name.endswith(("skipif", "skipIf", "xfail")):
        return _false_on_linux(condition)
    if name.endswith("skipUnless"):
        return _true_on_linux(condition)
    return False


def body_skip_elsewhere_only(lines: Sequence[Line], index: int) -> bool:
    """A skip statement in a body (`pytest.skip(...)`, `t.Skip(...)`) that sits under an
    `if <platform condition>` line shown in the same run of lines, e.g. `if sys.platform ==
    "win32": pytest.skip(...)` or Go's `if runtime.GOOS == "windows" { t.Skip() }`."""
    inline = _INLINE_IF.match(lines[index].text)
    if inline is not None:
        return _condition_false_on_linux(inline.group("cond"))
    skip_indent = indent(lines[index].text)
    position = index
    while position > 0 and lines[position - 1].number == lines[position].number - 1:
        position -= 1
        text = lines[position].text
        if not text.strip() or indent(text) >= skip_indent:
            continue
        match = _IF.match(text)
        if match is None:
            return False
        return _condition_false_on_linux(match.group("cond"))
    return False


def _condition_false_on_linux(text: str) -> bool:
    expression = _parse(_from_c_like(text))
    return expression is not None and _false_on_linux(expression)


def _balanced(lines: Sequence[Line], index: int) -> str | None:
    parts: list[str] = []
    depth = 0
    for offset in range(_MAX_LINES):
        position = index + offset
        if position >= len(lines) or (
            offset and lines[position].number != lines[position - 1].number + 1
        ):
            return None
        text = lines[position].text
        parts.append(text)
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0:
            joined = "\n".join(parts)
            return joined if len(joined) <= _MAX_CHARS else None
    return None


def _parse(text: str) -> ast.expr | None:
    if len(text) > _MAX_CHARS:
        return None
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _from_c_like(text: str) -> str:
    """Go/JavaScript comparison operators in Python's spelling (enough for the subjects we
    understand)."""
    for old, new in (("===", "=="), ("!==", "!="), ("&&", " and "), ("||", " or ")):
        text = text.replace(old, new)
    return re.sub(r"!(?!=)", " not ", text)


def _condition(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "condition":
            return keyword.value
    if not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return _parse(first.value)  # pytest's string conditions: skipif("sys.platform == 'x'")
    return first


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        inner = _dotted(node.func)
        return f"{inner}()" if inner else None
    return None


def _false_on_linux(node: ast.expr) -> bool:
    return _truth_on_linux(node) is False


def _true_on_linux(node: ast.expr) -> bool:
    return _truth_on_linux(node) is True


def _truth_on_linux(node: ast.expr) -> bool | None:
    """True or False when the condition's value on Linux/CPython is certain, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth_on_linux(node.operand)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        truths = [_truth_on_linux(value) for value in node.values]
        if isinstance(node.op, ast.And):
            return False if False in truths else (True if all(truths) else None)
        return True if True in truths else (False if all(t is False for t in truths) else None)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _comparison(node.left, node.ops[0], node.comparators[0])
    startswith = _startswith(node)
    if startswith is not None:
        subject, prefixes = _dotted(startswith[0]), _strings(startswith[1])
        if subject in _SUBJECTS and prefixes is not None:
            return _matches(prefixes, prefix=True)
    return None


def _startswith(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """`subject.startswith(prefix)` as (subject, prefix)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "startswith"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.func.value, node.args[0]
    return None


def _comparison(left: ast.expr, op: ast.cmpop, right: ast.expr) -> bool | None:
    subject, values = _dotted(left), _strings(right)
    if subject not in _SUBJECTS:
        subject, values = _dotted(right), _strings(left)
        if subject not in _SUBJECTS or not isinstance(op, ast.Eq | ast.NotEq):
            return None
    if values is None:
        return None
    if isinstance(op, ast.Eq | ast.In) and (len(values) == 1 or isinstance(op, ast.In)):
        return _matches(values)
    if isinstance(op, ast.NotEq | ast.NotIn) and (len(values) == 1 or isinstance(op, ast.NotIn)):
        inner = _matches(values)
        return None if inner is None else not inner
    return None


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        values = [_strings(element) for element in node.elts]
        if all(value is not None and len(value) == 1 for value in values):
            return [value[0] for value in values if value is not None]
    return None


def _matches(values: list[str], *, prefix: bool = False) -> bool | None:
    """Whether the subject equals (or starts with) one of `values` on Linux/CPython: True,
    False, or None when a value is not one we know."""
    known: list[bool] = []
    for raw in values:
        value = raw.lower()
        if prefix:
            on_linux = any(linux.startswith(value) for linux in _LINUX)
            elsewhere = any(other.startswith(value) for other in _ELSEWHERE)
        else:
            on_linux, elsewhere = value in _LINUX, value in _ELSEWHERE
        if not (on_linux or elsewhere):
            return None
        known.append(on_linux)
    return any(known)
