"""Parametrized cases of a Python test switched off while the test stays: a case that ran
given `marks=pytest.mark.skip` (or `xfail`, or a `skipif` that holds on Linux) through
`pytest.param`, and a test whose `parametrize` list the change empties (pytest then skips
it).

A case is known by its values (`pytest.param(1, 2, id="x")` is the case `(1, 2)`), so a
case that ran at the base and is only a skipped one at the head was switched off; a new
case that is skipped from the start hid nothing, nor does a skip that applies only off
Linux (`skipif(sys.platform == "win32")`, read as `conditions.skip_conditions` reads it).
Read with `ast` on both whole files; from a diff alone, a case line replaced by the same
case with such marks. A list named at the module's top level (`CASES = [...]`) is read
where it is bound once.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from app.guards.changes import Line

# What a condition is on Linux, with the project's supported Pythons: True, False or unknown.
Truth = Callable[[ast.expr], bool | None]
Finding = tuple[int, str]
# A test's cases: each one's values, whether it is switched off, and its line.
_Case = tuple[str, bool, int]


def switched_off(base: ast.Module, head: ast.Module, truth: Truth) -> list[Finding]:
    """The cases and parametrized tests of `head` switched off that ran in `base`."""
    before = dict(_parametrized(base, lambda node: None))
    found: list[Finding] = []
    for key, (line, cases) in _parametrized(head, truth):
        old = before.get(key)
        if old is None or cases is None or old[1] is None:
            continue
        ran = Counter(values for values, off, _ in old[1] if not off)
        if ran and not cases:
            found.append((line, f"test {key!r} left with no parametrized cases (pytest skips it)"))
            continue
        running = Counter(values for values, off, _ in cases if not off)
        for values, off, number in cases:
            if off and ran[values] > running[values]:
                ran[values] -= 1
                found.append((number, f"parametrized case of test {key!r} skipped (marks)"))
    return found


def switched_off_lines(
    added: Sequence[Line], removed: Sequence[Line], truth: Truth
) -> list[Finding]:
    """From the changed lines alone: an added case (or one-line `parametrize`) that is
    switched off where a removed line held the same case running (a `pytest.param`, or a
    case's bare values on a line of its own)."""
    ran: Counter[str] = Counter()
    for line in removed:
        for values, off, _ in _line_cases(line.text, truth, bare=True):
            ran[values] += not off
    found: list[Finding] = []
    for line in added:
        for values, off, _ in _line_cases(line.text, truth):
            if off and ran[values] > 0:
                ran[values] -= 1
                found.append((line.number, "parametrized case skipped (marks)"))
    return found


def _line_cases(text: str, truth: Truth, *, bare: bool = False) -> list[_Case]:
    stripped = text.strip().removeprefix("@").rstrip(",").strip()
    if not stripped or len(stripped) > 2000:
        return []
    try:
        node = ast.parse(stripped, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    if isinstance(node, ast.Call) and _name(node.func).endswith("parametrize"):
        values = _argvalues(node, {})
        return [_case(element, truth) for element in values or []]
    if (isinstance(node, ast.Call) and _name(node.func).endswith(".param")) or bare:
        return [_case(node, truth)]
    return []


def _parametrized(
    module: ast.Module, truth: Truth
) -> Iterator[tuple[str, tuple[int, list[_Case] | None]]]:
    """Each parametrized test by its qualified name: its decorator's line and its cases
    (None when a list cannot be read)."""
    names = _module_lists(module)
    for path, function in _tests(module.body, ()):
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and _name(decorator.func).endswith("parametrize"):
                values = _argvalues(decorator, names)
                cases = [_case(v, truth) for v in values] if values is not None else None
                yield "::".join((*path, function.name)), (decorator.lineno, cases)
                break


def _tests(
    body: Sequence[ast.stmt], path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield path, node
        elif isinstance(node, ast.ClassDef) and len(path) < 8:
            yield from _tests(node.body, (*path, node.name))


def _module_lists(module: ast.Module) -> dict[str, ast.expr | None]:
    """Names the module's top level binds to a literal list or tuple, once (None: bound
    more than once, or to something else)."""
    found: dict[str, ast.expr | None] = {}
    for node in module.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                value = getattr(node, "value", None)
                literal = isinstance(value, ast.List | ast.Tuple)
                found[target.id] = value if literal and target.id not in found else None
    return found


def _argvalues(call: ast.Call, names: dict[str, ast.expr | None]) -> list[ast.expr] | None:
    values: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "argvalues":
            values = keyword.value
    if isinstance(values, ast.Name):
        values = names.get(values.id)
    if isinstance(values, ast.List | ast.Tuple):
        return list(values.elts)
    return None


def _case(node: ast.expr, truth: Truth) -> _Case:
    """A case's values (a `pytest.param`'s own), and whether its marks switch it off."""
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Call) and _name(node.func).endswith("param"):
        args = node.args
        values = ast.dump(args[0]) if len(args) == 1 else ast.dump(ast.Tuple(elts=args))
        marks = next((k.value for k in node.keywords if k.arg == "marks"), None)
        return values, marks is not None and _switches_off(marks, truth), line
    if isinstance(node, ast.Tuple | ast.List):
        return ast.dump(ast.Tuple(elts=node.elts)), False, line
    return ast.dump(node), False, line


def _switches_off(marks: ast.expr, truth: Truth) -> bool:
    """Whether marks skip a case, or let its failure pass, on Linux: `skip`, `xfail`, or a
    `skipif`/conditional `xfail` whose condition holds there or cannot be read."""
    items = marks.elts if isinstance(marks, ast.List | ast.Tuple | ast.Set) else [marks]
    for mark in items:
        kind = _name(mark.func if isinstance(mark, ast.Call) else mark).split(".")[-1]
        if kind not in ("skip", "skipif", "xfail"):
            continue
        call = mark if isinstance(mark, ast.Call) else None
        condition = None
        if call is not None:
            condition = next((k.value for k in call.keywords if k.arg == "condition"), None)
            condition = condition or (call.args[0] if call.args else None)
        if kind == "skip" or condition is None:
            if kind != "skipif":
                return True
            continue
        if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
            continue  # a string condition: read where pytest evaluates it, not here
        if truth(condition) is not False:
            return True
    return False


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""
