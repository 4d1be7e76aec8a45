"""Skips that fire only when a package is missing, read from the whole Python module.

Three shapes, each firing only when importing a package fails:

- `pytest.importorskip("mock")` (or `mock = pytest.importorskip("mock")`), one literal
  module name and at most a `reason`: a `minversion` skips on an installed package too;
- a statement directly in an `except ImportError:` (or `ModuleNotFoundError`) block
  (yarl's `pytestmark = pytest.mark.skip(...)`, a `pytest.skip(...)` in a test), the `try`
  holding nothing but imports and names bound to constants;
- a `skipif`/`skipIf`/`skipUnless`/`xfail` whose condition reads an import guard: a name
  the module binds only in one `try` of its top level, by an import there, and to `None`
  before that import or in an `except ImportError:` of the same `try` (loguru's
  `mypy_api is None`). `name is None` is then true exactly when the import failed; so is
  `not name` for a plain `import` (a module is never false). The rest of the condition is
  read as `app.guards.skip_conditions` reads any (`or` with an environment variable may hold).

Every module such a `try` imports must be one the project installs for its tests
(`app.guards.test_dependencies`): an import of the project's own code may fail by the
change's own doing, and skip the test whatever it tests. A package's top-level module imports
wherever the package is installed; a submodule or a name taken from it (`mypy.api`, `from
pytest_codspeed import BenchmarkFixture`) may not (`from pytest import no_such_name` always
fails), so it must be one the base's version of the file imported at its top level, outside
any `try`: the module, and every test in it, ran only where that import succeeded. loguru's
and yarl's changes guard an import their base made unguarded.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from app.guards.code_names import binding_count
from app.guards.skip_conditions import dotted_name
from app.guards.test_dependencies import Installed

# What a condition that reads no import guard is on Linux (`skip_conditions.truth_on_linux`).
Truth = Callable[[ast.expr], bool | None]
# Whether a dotted module or name (`mock`, `mypy.api`) imports where the tests run.
Importable = Callable[[str], bool]

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
_IMPORTORSKIP = "pytest.importorskip"


def fires_only_when_missing(
    module: ast.Module,
    number: int,
    installed: Installed,
    truth: Truth,
    before: ast.Module | None,
) -> bool:
    """Whether the skip on line `number` of `module` fires only when a package the project
    installs for its tests cannot be imported; `before` is the file at the base, whose
    unguarded imports show which of the package's submodules and names import."""
    shown = _imported(before)

    def importable(path: str) -> bool:
        return installed(path) and ("." not in path or path in shown)

    return (
        _imports_or_skips(module, number, importable)
        or _in_import_handler(module, number, importable)
        or _guarded_marker(module, number, importable, truth)
    )


def _imported(before: ast.Module | None) -> frozenset[str]:
    """What the top level of the base's file imports outside any `try` (`a.b` and `a` for
    `import a.b`, `a.n` and `a` for `from a import n`): had an import failed, the module and
    every test in it would have failed with it."""
    paths: set[str] = set()
    for statement in before.body if before is not None else ():
        for path in _paths(statement) or ():
            parts = path.split(".")
            paths.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    return frozenset(paths)


def _paths(statement: ast.stmt) -> list[str] | None:
    """What an import statement imports, each name as a dotted path (`from a import n` is
    `a.n`); None for a relative or star import, or another statement."""
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    if not isinstance(statement, ast.ImportFrom) or statement.level or not statement.module:
        return None
    if any(alias.name == "*" for alias in statement.names):
        return None
    return [f"{statement.module}.{alias.name}" for alias in statement.names]


def _imports_or_skips(module: ast.Module, number: int, importable: Importable) -> bool:
    statements = _statements_at(module, number)
    if len(statements) != 1:
        return False
    statement = statements[0]
    if not isinstance(statement, ast.Expr | ast.Assign):
        return False
    if isinstance(statement, ast.Assign) and not _names_only(statement.targets):
        return False
    call = statement.value
    if not isinstance(call, ast.Call) or dotted_name(call.func) != _IMPORTORSKIP:
        return False
    if len(call.args) != 1 or any(keyword.arg != "reason" for keyword in call.keywords):
        return False
    name = call.args[0]
    return isinstance(name, ast.Constant) and isinstance(name.value, str) and importable(name.value)


def _in_import_handler(module: ast.Module, number: int, importable: Importable) -> bool:
    for node in ast.walk(module):
        if not isinstance(node, ast.Try):
            continue
        for handler in node.handlers:
            if any(statement.lineno == number for statement in handler.body):
                return _catches_import_errors(handler) and _imports_only(node, importable)
    return False


def _guarded_marker(module: ast.Module, number: int, importable: Importable, truth: Truth) -> bool:
    for call in _markers_at(module, number):
        name = dotted_name(call.func) or ""
        condition = _condition(call)
        if condition is None or not name.endswith(("skipif", "skipIf", "skipUnless", "xfail")):
            continue
        wanted = {node.id for node in ast.walk(condition) if isinstance(node, ast.Name)}
        guards = _import_guards(module, wanted, importable)
        read: list[str] = []
        value = _truth(condition, guards, truth, read)
        if not read:
            continue
        # A `skipUnless` fires when its condition is false, the others when it is true.
        return value is name.endswith("skipUnless")
    return False


def _statements_at(module: ast.Module, number: int) -> list[ast.stmt]:
    return [
        node for node in ast.walk(module) if isinstance(node, ast.stmt) and node.lineno == number
    ]


def _markers_at(module: ast.Module, number: int) -> Iterator[ast.Call]:
    """The marker calls that start on line `number`: a decorator, or `pytestmark`'s value."""
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and decorator.lineno == number:
                    yield decorator
        elif isinstance(node, ast.Assign) and node.lineno == number:
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if targets == ["pytestmark"] and isinstance(node.value, ast.Call):
                yield node.value


def _condition(call: ast.Call) -> ast.expr | None:
    """The condition a marker is given, when it is an expression (not pytest's string form)."""
    for keyword in call.keywords:
        if keyword.arg == "condition":
            return keyword.value
    if not call.args or isinstance(call.args[0], ast.Constant):
        return None
    return call.args[0]


def _truth(node: ast.expr, guards: dict[str, bool], truth: Truth, read: list[str]) -> bool | None:
    """The condition's value where every installed package imports, each import guard it
    reads noted in `read`; None when unknown."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, guards, truth, read)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [_truth(value, guards, truth, read) for value in node.values]
        if isinstance(node.op, ast.And):
            return False if False in values else (True if all(values) else None)
        return True if True in values else (False if all(v is False for v in values) else None)
    guard = _guard_value(node, guards)
    if guard is not None:
        read.append(guard[0])
        return guard[1]
    return truth(node)


def _guard_value(node: ast.expr, guards: dict[str, bool]) -> tuple[str, bool] | None:
    """`name is None` (False once imported), `name is not None` (True), and a module's bare
    `name` (True: a module is never false)."""
    if isinstance(node, ast.Name) and guards.get(node.id):
        return node.id, True
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, right = node.left, node.comparators[0]
    if not isinstance(left, ast.Name) or left.id not in guards:
        return None
    if not isinstance(right, ast.Constant) or right.value is not None:
        return None
    if isinstance(node.ops[0], ast.Is | ast.IsNot):
        return left.id, isinstance(node.ops[0], ast.IsNot)
    return None


def _import_guards(module: ast.Module, wanted: set[str], importable: Importable) -> dict[str, bool]:
    """Which of the `wanted` names are import guards of the module, each with whether its
    import binds a module (`import x`, `import x.y as name`) rather than something taken from
    one (`from x import name`)."""
    guards: dict[str, bool] = {}
    for statement in module.body:
        if not isinstance(statement, ast.Try):
            continue
        found = _guards_of(statement, module, wanted)
        handlers = all(_catches_import_errors(handler) for handler in statement.handlers)
        if found and handlers and _imports_only(statement, importable):
            guards.update(found)
    return guards


def _guards_of(statement: ast.Try, module: ast.Module, wanted: set[str]) -> dict[str, bool]:
    """The `wanted` names this `try` imports, bound nowhere else in the module but to None
    before their import or in its handlers."""
    found: dict[str, bool] = {}
    for position, imported in enumerate(statement.body):
        if not isinstance(imported, ast.Import | ast.ImportFrom):
            continue
        for alias in imported.names:
            name = alias.asname or alias.name.split(".")[0]
            nones = _nones_before(statement, position, name) if name in wanted else 0
            if nones and binding_count(module, name) == nones + 1:
                found[name] = isinstance(imported, ast.Import)
    return found


def _nones_before(statement: ast.Try, position: int, name: str) -> int:
    """How many times `name` is bound to None in the `try` before its import, and in its
    handlers; 0 when the import binds it again after (twice in one `try`)."""
    later = statement.body[position + 1 :]
    if any(_binds(s, name) for s in later if isinstance(s, ast.Import | ast.ImportFrom)):
        return 0
    earlier = statement.body[:position]
    handlers = [s for handler in statement.handlers for s in handler.body]
    return sum(_none_assignment(s, name) for s in [*earlier, *handlers])


def _binds(statement: ast.Import | ast.ImportFrom, name: str) -> bool:
    return any((alias.asname or alias.name.split(".")[0]) == name for alias in statement.names)


def _none_assignment(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target, value = statement.target, statement.value
    else:
        return False
    return (
        isinstance(target, ast.Name)
        and target.id == name
        and isinstance(value, ast.Constant)
        and value.value is None
    )


def _imports_only(statement: ast.Try, importable: Importable) -> bool:
    """Whether a `try` holds only imports that succeed where the project's test packages are
    installed (at least one) and names bound to constants: nothing else in it can raise the
    `ImportError` a handler catches."""
    imports = 0
    for inner in statement.body:
        if isinstance(inner, ast.Import | ast.ImportFrom):
            imports += 1
            paths = _paths(inner)
            if paths is None or not all(importable(path) for path in paths):
                return False
        elif not _constant_assignment(inner):
            return False
    return imports > 0


def _constant_assignment(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Assign):
        targets: list[ast.expr] = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return False
    return _names_only(targets) and isinstance(statement.value, ast.Constant)


def _names_only(targets: list[ast.expr]) -> bool:
    return all(isinstance(target, ast.Name) for target in targets)


def _catches_import_errors(handler: ast.ExceptHandler) -> bool:
    """`except ImportError:`, `except (ImportError, ModuleNotFoundError):`; not a bare
    `except:` nor `except Exception:`, which catch what the import of an installed package
    may raise for other reasons."""
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught else []
    return bool(names) and all(
        isinstance(name, ast.Name) and name.id in _IMPORT_ERRORS for name in names
    )
