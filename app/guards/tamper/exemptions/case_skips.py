"""A parametrized case's skip mark moved into its test's body: `pytest.param("watchdog",
marks=[require_watchdog])` made the plain case `"watchdog"`, and `if reloader_type == "watchdog":
pytest.importorskip("watchdog")` put in the test. The skip in the body applies to the very cases the
mark skipped, so it is a rewording, as a skip decorator made a skip inside the same test is. Before,
the mark taken off was no skip at all to the rule (a case's marks are read nowhere else), so it paid
for nothing.

Read from both whole files with `ast`, never run. A skip statement added inside a Python test
is paid for by a case mark the change takes off when:
- it sits in the body of an `if A == V:` (or `V == A`) within the test's own statements (not
  in a nested function), A a parameter of the test that nothing in it binds again (no
  assignment, loop, `with ... as`, `global`; `code_names.binding_count`), V a
  literal;
- at the head, the test's own decorators parametrize A alone, once, over literal values (a
  `pytest.param` of one literal included), not `indirect`: the guard then holds for exactly
  the cases whose value equals V;
- at the base, the test of that name (its class included) parametrized A the same way, and
  every case whose value equals V carried a skip or xfail mark (`pytest.mark.skip`,
  `skipif`, `xfail`, or a name the module binds once to one: `conditions.named_markers`)
  that may hold on Linux;
- at the head, those cases no longer all carry one. Each mark taken off pays for one skip.

So the cases the body skip may skip were all skippable before; any other case (new at the
head) is a new test, free to be skipped. A skip that reaches further is reported as before:
unguarded (every case), guarded on another value or name, in another test, or replacing a
mark that skipped only off Linux (`skipif(sys.platform == "win32")`), which skipped nothing
where the suite runs.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from app.guards.changes import Line
from app.guards.tamper.code_names import binding_count, python_module
from app.guards.tamper.conditions.flags import Names
from app.guards.tamper.conditions.named_markers import named_markers
from app.guards.tamper.conditions.skip_conditions import Floor, decorator_skips_elsewhere_only
from app.guards.trees import Side

# A test, one parametrized name of it, and one literal value of that name (its `repr`, which
# tells `1`, `True` and `"1"` apart).
Case = tuple[str, str, str]
_Function = ast.FunctionDef | ast.AsyncFunctionDef
# What a side's platform flags stand for (`WIN`: `conditions.flags`), read when asked.
Sides = Callable[[Side], Names]
_SKIP_MARK = re.compile(r"^pytest\.mark\.(?:skip|skipif|xfail)\b")
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def paid_skips(
    base: str,
    head: str,
    numbers: Sequence[int],
    floor: Floor | None,
    names: Sides,
    *,
    newest: Floor | None = None,
) -> set[int]:
    """Of the new skip lines `numbers` (of the head file), those a case mark the change takes
    off pays for, one each. `names` gives what each side's platform flags stand for; `floor`
    and `newest`, the Pythons the project declares."""
    unpaid = marked_cases(base, floor, names("base"), newest=newest)
    unpaid -= marked_cases(head, floor, names("head"), newest=newest) if unpaid else set()
    module = python_module(head) if unpaid else None
    if module is None:
        return set()
    paid: set[int] = set()
    for number in numbers:
        case = guarded_case(module, number)
        if case in unpaid:
            unpaid.discard(case)
            paid.add(number)
    return paid


def marked_cases(
    text: str, floor: Floor | None, names: Names | None, *, newest: Floor | None = None
) -> set[Case]:
    """The cases of a module's tests whose every case of that value carries a skip or xfail
    mark that may hold on Linux."""
    module = python_module(text)
    if module is None:
        return set()
    # A marker name bound more than once may be any mark: taken off, it pays for nothing.
    markers = {
        name: expression
        for name, expression in named_markers(text.split("\n")).items()
        if binding_count(module, name) == 1
    }
    found: set[Case] = set()
    for qualname, function in _functions(module):
        for argument, cases in _parametrized(function):
            marked = [
                (value, _skips(marks, markers, floor, names, newest)) for value, marks in cases
            ]
            for value, skipped in marked:
                if skipped and all(ok for other, ok in marked if _equal(other, value)):
                    found.add((qualname, argument, repr(value)))
    return found


def guarded_case(module: ast.Module, number: int) -> Case | None:
    """The case a skip statement on line `number` is confined to: the test around it, and the
    parametrized name and literal value of an `if name == value:` whose body holds it. None
    when the skip may reach any other case."""
    for qualname, function in _functions(module):
        path = _path_to(function.body, number)
        if path is None:
            continue
        values = dict(_parametrized(function))
        for argument, value in _guards(path):
            if _confined(function, values, argument):
                return qualname, argument, repr(value)
        return None
    return None


def _functions(module: ast.Module) -> list[tuple[str, _Function]]:
    """Every function of the module and its classes, by its dotted name; a name defined twice
    is left out (which one pytest runs, and which one a mark was on, is not worth telling)."""

    def walk(body: Sequence[ast.stmt], prefix: str) -> Iterator[tuple[str, _Function]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, _Function):
                yield f"{prefix}{node.name}", node

    found = list(walk(module.body, ""))
    names = Counter(name for name, _ in found)
    return [(name, function) for name, function in found if names[name] == 1]


def _parametrized(function: _Function) -> list[tuple[str, list[tuple[object, list[ast.expr]]]]]:
    """Each name the function's own decorators parametrize alone, with its cases (a literal
    value and the marks given to it); a name parametrized twice, or over anything that is not
    a literal, is left out."""
    found: dict[str, list[tuple[object, list[ast.expr]]] | None] = {}
    for decorator in function.decorator_list:
        parsed = _parametrize(decorator)
        if parsed is not None:
            argument, cases = parsed
            found[argument] = None if argument in found else cases
    return [(argument, cases) for argument, cases in found.items() if cases is not None]


def _parametrize(node: ast.expr) -> tuple[str, list[tuple[object, list[ast.expr]]]] | None:
    """`pytest.mark.parametrize("name", [...])` over one name and literal cases, not
    indirect: the name, and each case's value and marks; None for anything else."""
    if not isinstance(node, ast.Call) or ast.unparse(node.func) != "pytest.mark.parametrize":
        return None
    arguments = dict(zip(("argnames", "argvalues"), node.args, strict=False))
    for keyword in node.keywords:
        if keyword.arg is None or keyword.arg == "indirect":
            return None  # `**options`, or the test gets a fixture's value
        arguments[keyword.arg] = keyword.value
    names, values = arguments.get("argnames"), arguments.get("argvalues")
    if not isinstance(names, ast.Constant) or not isinstance(names.value, str):
        return None
    name = names.value.strip()
    if not name.isidentifier() or not isinstance(values, ast.List | ast.Tuple):
        return None
    cases = [_case(element) for element in values.elts]
    if any(case is None for case in cases):
        return None
    return name, [case for case in cases if case is not None]


def _case(node: ast.expr) -> tuple[object, list[ast.expr]] | None:
    """A case's literal value and its marks (`pytest.param(value, marks=...)`)."""
    marks: list[ast.expr] = []
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.param":
        if len(node.args) != 1 or any(k.arg not in ("marks", "id") for k in node.keywords):
            return None
        for keyword in node.keywords:
            if keyword.arg == "marks":
                given = keyword.value
                marks = list(given.elts) if isinstance(given, ast.List | ast.Tuple) else [given]
        node = node.args[0]
    try:
        return ast.literal_eval(node), marks
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _skips(
    marks: Sequence[ast.expr],
    markers: dict[str, str],
    floor: Floor | None,
    names: Names | None,
    newest: Floor | None,
) -> bool:
    """Whether any of a case's marks is a skip or xfail that may hold on Linux."""
    for mark in marks:
        text = ast.unparse(mark)
        if isinstance(mark, ast.Name):
            text = markers.get(text, "")
        if _SKIP_MARK.match(text) and not decorator_skips_elsewhere_only(
            [Line(1, f"@{text}", 1)], 0, floor, names, newest=newest
        ):
            return True
    return False


def _equal(one: object, other: object) -> bool:
    """Whether two case values compare equal as the guard compares them (`1 == True`)."""
    return bool(one == other)


def _path_to(body: Sequence[ast.stmt], number: int) -> list[ast.stmt] | None:
    """The statements from `body` down to the simple statement holding line `number`, through
    compound statements only; None when the line is in none, or in a nested function or
    class (which runs when called, not where it stands)."""
    for statement in body:
        if not statement.lineno <= number <= (statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, _NESTED):
            return None
        inner = [
            child
            for field in ("body", "orelse", "finalbody", "handlers", "cases")
            for child in _statements(getattr(statement, field, []))
        ]
        if not inner:
            return [statement]
        rest = _path_to(inner, number)
        return [statement, *rest] if rest is not None else None
    return None


def _statements(children: Sequence[ast.AST]) -> Iterator[ast.stmt]:
    """Statements of a block, the bodies of `except` handlers and `match` cases opened."""
    for child in children:
        if isinstance(child, ast.ExceptHandler | ast.match_case):
            yield from child.body
        elif isinstance(child, ast.stmt):
            yield child


def _guards(path: Sequence[ast.stmt]) -> Iterator[tuple[str, object]]:
    """The `if name == literal:` statements on the path whose body (not `else`) holds the
    line, each as the name and the literal."""
    for position, statement in enumerate(path[:-1]):
        if not isinstance(statement, ast.If) or path[position + 1] not in statement.body:
            continue
        test = statement.test
        if not isinstance(test, ast.Compare) or [type(op) for op in test.ops] != [ast.Eq]:
            continue
        sides = (test.left, test.comparators[0])
        for name, literal in (sides, sides[::-1]):
            if isinstance(name, ast.Name) and isinstance(literal, ast.Constant):
                yield name.id, literal.value


def _confined(
    function: _Function,
    values: dict[str, list[tuple[object, list[ast.expr]]]],
    argument: str,
) -> bool:
    """Whether `argument` holds the case's value wherever the function reads it: one of its
    parameters, parametrized by its own decorators over literals, never bound again in it."""
    parameters = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    if argument not in values or argument not in {p.arg for p in parameters}:
        return False
    return binding_count(ast.Module(body=[function], type_ignores=[]), argument) == 1
