"""Skips that fire only when a package is missing, read from the whole Python module.

Four shapes, each firing only when importing a package fails:

- `pytest.importorskip("mock")` (or `mock = pytest.importorskip("mock")`), one literal
  module name and at most a `reason`, by the real `pytest` (`flags.Names.standard`): a
  `minversion` skips on an installed package too;
- a statement directly in an `except ImportError:` (or `ModuleNotFoundError`) block
  (yarl's `pytestmark = pytest.mark.skip(...)`, a `pytest.skip(...)` in a test), the `try`
  holding nothing but imports and names bound to constants;
- a `skipif`/`skipIf`/`skipUnless`/`xfail` whose condition reads an import guard: a name
  the module binds only in one `try` of its top level, by an import there, and to `None`
  before that import or in an `except ImportError:` of the same `try` (loguru's
  `mypy_api is None`). `name is None` is then true exactly when the import failed; so is
  `not name` for a plain `import` (a module is never false). The rest of the condition is
  read as `conditions.skip_conditions` reads any (`or` with an environment variable may hold;
  a `skipif`'s positional conditions are one `or`);
- a statement directly in a branch of an `if` whose condition, read the same way, never
  takes that branch (uvicorn's `if not HAVE_TRUSTME: pytest.skip(...)` in a fixture).

Two more kinds of name are import guards, for the last two shapes (true where the packages
are installed, so `not name` is false), each bound nowhere else in the module and in every
handler of its `try` to a false constant:

- a flag the `try` of the imports binds to a true constant (uvicorn's `HAVE_TRUSTME = True`
  after `import trustme`, `HAVE_TRUSTME = False` in the `except ImportError:`);
- a distribution's version, the one statement of a `try` whose handlers catch
  `PackageNotFoundError` (werkzeug's `watchdog_version = importlib.metadata.version("watchdog")`,
  `watchdog_version = ""` in the handler): a version is never empty. The distribution,
  named literally, must be installed for the tests as a module of that name would.

No import guard may be written from outside its bindings: a name that also appears as an
attribute assigned (`conftest.HAVE_TRUSTME = False`) or in a string (`setattr(module,
"HAVE_TRUSTME", False)`, `globals()["mypy_api"]`) anywhere in the module is none.

Every module such a `try` imports must be one the project installs for its tests
(`conditions.test_dependencies`): an import of the project's own code may fail by the
change's own doing, and skip the test whatever it tests. A package's top-level module imports
wherever the package is installed; a submodule or a name taken from it (`mypy.api`, `from
pytest_codspeed import BenchmarkFixture`) may not (`from pytest import no_such_name` always
fails), so it must be one the base's version of the file imported at its top level, outside
any `try`: the module, and every test in it, ran only where that import succeeded. A module
so imported may be imported again either way; a name taken `from a` only by `from a import
n` (`import a.n` and `importorskip("a.n")` need a module `a.n`, which may not exist). loguru's
and yarl's changes guard an import their base made unguarded.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from app.guards.tamper.code_names import binding_count
from app.guards.tamper.conditions.skip_conditions import dotted_name
from app.guards.tamper.conditions.test_dependencies import Installed

# What a condition that reads no import guard is on Linux (`skip_conditions.truth_on_linux`).
Truth = Callable[[ast.expr], bool | None]
# Whether a module (`mock`, `mypy.api`), or a name taken from it (`from mypy import api`: the
# module `mypy`, the name `api`), imports where the tests run.
Importable = Callable[[str, str | None], bool]
# Whether a standard module's name (`pytest.importorskip`) is that module (`flags.Names.standard`).
Standard = Callable[[str], bool]

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
# What a handler of a version's `try` may catch (`PackageNotFoundError` is a ModuleNotFoundError).
_NOT_FOUND_ERRORS = _IMPORT_ERRORS | {"importlib.metadata.PackageNotFoundError"}
_IMPORTORSKIP = "pytest.importorskip"
_VERSION = "importlib.metadata.version"


def fires_only_when_missing(
    module: ast.Module,
    number: int,
    installed: Installed,
    truth: Truth,
    before: ast.Module | None,
    standard: Standard,
) -> bool:
    """Whether the skip on line `number` of `module` fires only when a package the project
    installs for its tests cannot be imported; `before` is the file at the base, whose
    unguarded imports show which of the package's submodules and names import."""
    modules, names = _imported(before)

    def importable(module: str, name: str | None) -> bool:
        path = module if name is None else f"{module}.{name}"
        if not installed(path) or ("." in module and module not in modules):
            return False
        # A name taken `from a` may be no module `a.n`: only `from a import n` takes it again.
        return name is None or path in modules or path in names

    return (
        _imports_or_skips(module, number, importable, standard)
        or _in_import_handler(module, number, importable)
        or _guarded_marker(module, number, importable, truth, standard)
        or _guarded_branch(module, number, importable, truth)
    )


def _imported(before: ast.Module | None) -> tuple[frozenset[str], frozenset[str]]:
    """What the top level of the base's file imports outside any `try`: the modules (`a.b`
    and `a` for `import a.b`, `a` for `from a import n`) and the names taken from them (`a.n`).
    Had an import failed, the module and every test in it would have failed with it."""
    modules: set[str] = set()
    names: set[str] = set()
    for statement in before.body if before is not None else ():
        for module, name in _paths(statement) or ():
            parts = module.split(".")
            modules.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
            if name is not None:
                names.add(f"{module}.{name}")
    return frozenset(modules), frozenset(names)


def _paths(statement: ast.stmt) -> list[tuple[str, str | None]] | None:
    """What an import statement imports: each module, with the name taken from it (`from a
    import n` is `a`, `n`; `import a.b` is `a.b`, None); None for a relative or star import,
    or another statement."""
    if isinstance(statement, ast.Import):
        return [(alias.name, None) for alias in statement.names]
    if not isinstance(statement, ast.ImportFrom) or statement.level or not statement.module:
        return None
    if any(alias.name == "*" for alias in statement.names):
        return None
    return [(statement.module, alias.name) for alias in statement.names]


def _imports_or_skips(
    module: ast.Module, number: int, importable: Importable, standard: Standard
) -> bool:
    """`pytest.importorskip("mock")` of a module (not a name taken from one) by the real
    `pytest`."""
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
    if not standard(_IMPORTORSKIP):
        return False
    if len(call.args) != 1 or any(keyword.arg != "reason" for keyword in call.keywords):
        return False
    name = call.args[0]
    return (
        isinstance(name, ast.Constant)
        and isinstance(name.value, str)
        and importable(name.value, None)
    )


def _in_import_handler(module: ast.Module, number: int, importable: Importable) -> bool:
    for node in ast.walk(module):
        if not isinstance(node, ast.Try):
            continue
        for handler in node.handlers:
            if any(statement.lineno == number for statement in handler.body):
                return _catches_import_errors(handler) and _imports_only(node, importable)
    return False


def _guarded_marker(
    module: ast.Module, number: int, importable: Importable, truth: Truth, standard: Standard
) -> bool:
    for call in _markers_at(module, number):
        name = dotted_name(call.func) or ""
        if not name.endswith(("skipif", "skipIf", "skipUnless", "xfail")) or not standard(name):
            continue
        condition = _condition(call, name)
        if condition is None:
            continue
        value = _guarded_value(condition, module, importable, truth)
        if value is not None:
            # A `skipUnless` fires when its condition is false, the others when it is true.
            return value is name.endswith("skipUnless")
    return False


def _guarded_branch(module: ast.Module, number: int, importable: Importable, truth: Truth) -> bool:
    """Whether line `number` starts a statement of an `if` branch (`if not HAVE_TRUSTME:
    pytest.skip(...)`, or its `else`) that an import guard keeps from running."""
    for node in ast.walk(module):
        if not isinstance(node, ast.If):
            continue
        for branch, taken_when in ((node.body, True), (node.orelse, False)):
            if any(statement.lineno == number for statement in branch):
                value = _guarded_value(node.test, module, importable, truth)
                if value is not None and value is not taken_when:
                    return True
    return False


def _guarded_value(
    condition: ast.expr, module: ast.Module, importable: Importable, truth: Truth
) -> bool | None:
    """The condition's value where the packages are installed, when it reads an import
    guard of the module; None when it reads none, or its value is unknown."""
    wanted = {node.id for node in ast.walk(condition) if isinstance(node, ast.Name)}
    guards = _import_guards(module, wanted, importable)
    read: list[str] = []
    value = _truth(condition, guards, truth, read)
    return value if read else None


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


def _condition(call: ast.Call, name: str) -> ast.expr | None:
    """The condition a marker is given, when it is written as expressions (not pytest's string
    form): pytest's `skipif` and `xfail` skip when any positional condition holds (`skipif(a,
    b)` is `a or b`), unittest's `skipIf`/`skipUnless` read the first."""
    for keyword in call.keywords:
        if keyword.arg == "condition":
            return keyword.value
    conditions = call.args if name.endswith(("skipif", "xfail")) else call.args[:1]
    written = [
        c for c in conditions if not (isinstance(c, ast.Constant) and isinstance(c.value, str))
    ]
    if not conditions or len(written) < len(conditions):
        return None
    return conditions[0] if len(conditions) == 1 else ast.BoolOp(op=ast.Or(), values=conditions)


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
    """`name is None` (False once imported), `name is not None` (True), and a module's, a
    flag's or a version's bare `name` (True: a module is never false)."""
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
    """Which of the `wanted` names are import guards of the module, each with whether it is
    true once its packages are installed: an import that binds a module (`import x`,
    `import x.y as name`), a flag, a version; not something taken from a module (`from x
    import name`)."""
    guards: dict[str, bool] = {}
    for statement in module.body:
        if not isinstance(statement, ast.Try):
            continue
        handlers = all(_catches_import_errors(handler) for handler in statement.handlers)
        if handlers and _imports_only(statement, importable):
            found = {**_guards_of(statement, module, wanted), **_flags_of(statement, module)}
        else:
            found = _version_of(statement, module, importable)
        guards.update(
            (name, true)
            for name, true in found.items()
            if name in wanted and not _written_around(module, name)
        )
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


def _flags_of(statement: ast.Try, module: ast.Module) -> dict[str, bool]:
    """The names this `try` of imports binds to a true constant, every handler to a false one,
    and nothing else in the module binds."""
    found: dict[str, bool] = {}
    for inner in statement.body:
        name, value = _constant_binding(inner)
        if name is not None and value and _false_in_handlers(statement, module, name):
            found[name] = True
    return found


def _version_of(statement: ast.Try, module: ast.Module, importable: Importable) -> dict[str, bool]:
    """The name a `try` binds, in its one statement, to the version of a distribution
    installed for the tests (`importlib.metadata.version("watchdog")`), when its handlers catch
    `PackageNotFoundError` and bind it to a false constant, and nothing else in the module
    binds it."""
    if len(statement.body) != 1 or not statement.handlers:
        return {}
    target, value = _binding(statement.body[0])
    if target is None or not isinstance(value, ast.Call) or value.keywords:
        return {}
    if _resolved(module, value.func) != _VERSION or len(value.args) != 1:
        return {}
    distribution = value.args[0]
    if not isinstance(distribution, ast.Constant) or not isinstance(distribution.value, str):
        return {}
    # A distribution is installed as the module of its normalised name would be.
    installed = importable(re.sub(r"[-_.]+", "_", distribution.value).lower(), None)
    caught = all(_caught(handler, module) <= _NOT_FOUND_ERRORS for handler in statement.handlers)
    return (
        {target: True}
        if installed and caught and _false_in_handlers(statement, module, target)
        else {}
    )


def _false_in_handlers(statement: ast.Try, module: ast.Module, name: str) -> bool:
    """Whether every handler binds `name` once, to a false constant, and the module binds it
    nowhere else but once in the `try`."""
    for handler in statement.handlers:
        values = [v for s in handler.body for n, v in [_constant_binding(s)] if n == name]
        if len(values) != 1 or values[0]:
            return False
    return binding_count(module, name) == len(statement.handlers) + 1


def _written_around(module: ast.Module, name: str) -> bool:
    """Whether the module may write `name` other than by binding it: an attribute of that name
    assigned (`conftest.HAVE_TRUSTME = False`), or a string naming it (`setattr(m,
    "HAVE_TRUSTME", False)`, `monkeypatch.setattr("tests.conftest.HAVE_TRUSTME", False)`)."""
    for node in ast.walk(module):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            written = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            written = node.value.rsplit(".", 1)[-1]
        else:
            continue
        if written == name:
            return True
    return False


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
    bound, value = _constant_binding(statement)
    return bound == name and value is None


def _binding(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """The one name a statement binds and its value (`name = value`, `name: T = value`)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target, value = statement.target, statement.value
    else:
        return None, None
    return (target.id, value) if isinstance(target, ast.Name) else (None, None)


def _constant_binding(statement: ast.stmt) -> tuple[str | None, object]:
    """The one name a statement binds to a constant, and the constant."""
    name, value = _binding(statement)
    if name is None or not isinstance(value, ast.Constant):
        return None, None
    return name, value.value


def _imports_only(statement: ast.Try, importable: Importable) -> bool:
    """Whether a `try` holds only imports that succeed where the project's test packages are
    installed (at least one) and names bound to constants: nothing else in it can raise the
    `ImportError` a handler catches."""
    imports = 0
    for inner in statement.body:
        if isinstance(inner, ast.Import | ast.ImportFrom):
            imports += 1
            paths = _paths(inner)
            if paths is None or not all(importable(module, name) for module, name in paths):
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


def _caught(handler: ast.ExceptHandler, module: ast.Module) -> set[str | None]:
    """What a handler catches, each exception by the name it resolves to (None for one that
    cannot be read, and for a bare `except:`)."""
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught else []
    return {_resolved(module, name) for name in names} or {None}


def _resolved(module: ast.Module, node: ast.expr) -> str | None:
    """A dotted name (`importlib.metadata.version`, `PackageNotFoundError`) as what it names:
    its first part taken through the imports of the module's top level that bind it
    (`from importlib.metadata import PackageNotFoundError`), or as it is when the module binds
    it nowhere (a builtin); None when bound otherwise."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    first, _, rest = dotted.partition(".")
    count = binding_count(module, first)
    if count == 0:
        return dotted
    targets = [
        target
        for statement in module.body
        for target, alias in _aliases(statement)
        if (alias.asname or alias.name.split(".")[0]) == first
    ]
    # `import importlib` and `import importlib.metadata` bind the one module twice.
    if len(targets) != count or len(set(targets)) != 1:
        return None
    return ".".join(part for part in (targets[0], rest) if part)


def _aliases(statement: ast.stmt) -> Iterator[tuple[str, ast.alias]]:
    """What each name an import statement binds names: `import a.b` binds `a`, `import a.b as
    c` binds `a.b`, `from a import n` binds `a.n`."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            yield (alias.name if alias.asname else alias.name.split(".")[0]), alias
    elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
        for alias in statement.names:
            yield f"{statement.module}.{alias.name}", alias
