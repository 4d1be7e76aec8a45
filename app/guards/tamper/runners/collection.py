"""Tests a Python test module still defines but pytest no longer collects.

A red `test_red` is hidden as surely by these as by deleting it, and the definition stays:
- `__test__ = False` at the module's top level (pytest collects nothing from the module), in
  a test class or a class one inherits tests from, or set on the test (`test_red.__test__ =
  False`, nose's `@nottest`);
- a later definition of the same name in the same module or class (pytest collects only the
  last one bound);
- the name rebound or deleted (`test_red = None`, `del test_red`, `setattr(...)`,
  `globals()["test_red"] = ...`);
- the definition no longer bound where pytest looks: under `if False:`, `if TYPE_CHECKING:`,
  `if __name__ == "__main__":` or a condition false on Linux, nested in another function, or
  its test class renamed out of `Test*`, given an `__init__`, or made something else.

Read with `ast` from the whole file on both sides: what pytest would collect at the base and
at the head is worked out by running the module's top level (and each class body) in the
abstract, statement by statement, never executing anything. A binding under a condition that
cannot be read may or may not happen; a test so bound "may" be collected. What is reported
is judged as a change: a test the base collected (surely, or maybe) that the head collects
less surely, or not at all, while it is still bound where it was, or a definition of its name
is still in the file that did not stand uncollected there at the base. A test that now runs
under the same name in another class or at the top level of the same file (a move) is not
hidden. A test whose definition is gone is the removal rules' business
(`relocations`), not this one's. At the base, a test a skip marker keeps from
running on Linux is not counted, and one a condition that cannot be read may skip counts as
maybe collected: hiding it hides nothing more than was hidden where the suite runs.

Also here, for the caller: how surely each definition of a module is collected (`levels`: a
test moved to another module, landing where pytest collects it less surely), and classes that
held tests given `__test__ = False` (`lowered_flags`), with the files whose classes inherit it
(`subclasses_left_off`).

Not reported: an `__test__ = False` (or any of these) that was already there, restated or
moved; `__test__ = False` on a class that holds no test (pip's `TestData`, werkzeug's
`TestResponse`); a helper named `test_*` defined once; a new test shadowing nothing.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from app.guards.changes import Line
from app.guards.tamper.code_names import python_module
from app.guards.tamper.lang.python import is_module
from app.guards.trees import TreeView

# What a condition is on Linux, with the project's supported Pythons: True, False or unknown.
Truth = Callable[[ast.expr], bool | None]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Decorators that make a test function something pytest does not collect as a test: a
# property (not callable), a fixture, a context manager (calling it runs none of its body).
NOT_A_FUNCTION = frozenset(
    {
        "property",
        "cached_property",
        "abstractproperty",
        "setter",
        "getter",
        "deleter",
        "fixture",
        "yield_fixture",
        "contextmanager",
        "asynccontextmanager",
    }
)
# Nested test classes read (a bound on the work, not a policy).
_MAX_DEPTH = 8
# Builtins that write a namespace under a computed name.
_WRITERS = frozenset({"setattr", "delattr"})
_NAMESPACES = frozenset({"globals", "vars", "locals"})
# The methods that change a namespace, and those of them keyed by the name first.
_MUTATORS = frozenset(
    {"update", "pop", "popitem", "clear", "setdefault", "__setitem__", "__delitem__"}
)
_KEYED = (".pop", ".setdefault", ".__setitem__", ".__delitem__")
# Collection levels: pytest collects the test surely, maybe (a condition we cannot read), not.
SURE, MAYBE, NOT = 2, 1, 0


@dataclass(frozen=True)
class _Value:
    """A binding other than a definition: "other" (an assignment, an import, a loop target),
    "del", "true" (`__test__ = True`) or "unbound" (nothing yet)."""

    kind: str
    line: int


_UNBOUND = _Value("unbound", 0)
Binding = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | _Value
State = dict[str, frozenset[Binding]]
Finding = tuple[int | None, str]


@dataclass(frozen=True)
class _Write:
    """A namespace write under a computed or indirect name at import time: `setattr(X,
    "test_a", None)`, `globals()["test_a"] = None`, `exec(...)`. `name` when it is a literal."""

    line: int
    name: str | None
    shape: str


@dataclass
class _Reader:
    """Runs a module's top level and its class bodies in the abstract: for each name, what it
    may be bound to when the body ends."""

    truth: Truth
    classes: dict[ast.ClassDef, State] = field(default_factory=dict)
    # A function's own `__test__`, set by `f.__test__ = ...` or nose's `@nottest`.
    flags: dict[ast.AST, frozenset[Binding]] = field(default_factory=dict)
    writes: list[_Write] = field(default_factory=list)
    # A function a decorator makes something pytest does not collect (`@property`), with the
    # decorator's line and name.
    wrapped: dict[ast.AST, tuple[int, str]] = field(default_factory=dict)

    def block(self, body: Sequence[ast.stmt], state: State) -> State:
        for statement in body:
            state = self.step(statement, state)
        return state

    def step(self, node: ast.stmt, state: State) -> State:
        if isinstance(node, _FUNCTIONS):
            decorators = [_dotted(d).split(".")[-1] for d in node.decorator_list]
            if "nottest" in decorators:
                self.flags[node] = frozenset({_Value("other", node.lineno)})
            wrapper = next((d for d in decorators if d in NOT_A_FUNCTION), None)
            if wrapper is not None:
                self.wrapped[node] = (
                    node.decorator_list[decorators.index(wrapper)].lineno,
                    wrapper,
                )
            return _bind(state, node.name, node)
        if isinstance(node, ast.ClassDef):
            self.classes[node] = self.block(node.body, {})
            return _bind(state, node.name, node)
        for expression in _own_expressions(node):
            self._indirect(expression, state)
        state = self._names(node, state)
        return self._flow(node, state)

    def _flow(self, node: ast.stmt, state: State) -> State:
        """The blocks a compound statement runs, each as surely as its condition holds."""
        if isinstance(node, ast.If | ast.While):
            truth = self.truth(node.test)
            if isinstance(node, ast.If) and truth is not None:
                return self.block(node.body if truth else node.orelse, state)
            skipped = self.block(node.orelse, state)
            return skipped if truth is False else _union(skipped, self.block(node.body, state))
        if isinstance(node, ast.For | ast.AsyncFor):
            entered = self.block(node.body, state)
            return _union(self.block(node.orelse, state), self.block(node.orelse, entered))
        if isinstance(node, ast.With | ast.AsyncWith):
            return self.block(node.body, state)
        if isinstance(node, ast.Try | ast.TryStar):
            ran = self.block(node.body, state)
            ends = [self.block(node.orelse, ran)]
            ends += [self.block(h.body, _union(state, ran)) for h in node.handlers]
            return self.block(node.finalbody, _union(*ends))
        if isinstance(node, ast.Match):
            return _union(state, *(self.block(case.body, state) for case in node.cases))
        return state

    def _names(self, node: ast.stmt, state: State) -> State:
        """The names a simple statement binds, deletes or sets attributes of."""
        line = node.lineno
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return {name: bound | {_Value("other", line)} for name, bound in state.items()}
                state = _bind(
                    state, alias.asname or alias.name.split(".")[0], _Value("other", line)
                )
            return state
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        true = isinstance(value, ast.Constant) and value.value is True
        for expression in _own_expressions(node):
            for target in _walk(expression):
                if isinstance(target, ast.Name | ast.Attribute) and not isinstance(
                    target.ctx, ast.Load
                ):
                    kind = "del" if isinstance(target.ctx, ast.Del) else "other"
                    named = target.id if isinstance(target, ast.Name) else target.attr
                    kind = "true" if true and named == "__test__" else kind
                    state = self._store(state, target, _Value(kind, line))
        return state

    def _store(self, state: State, target: ast.Name | ast.Attribute, value: _Value) -> State:
        if isinstance(target, ast.Name):
            return _bind(state, target.id, value)
        owner = target.value
        named = target.attr == "__test__" or target.attr.startswith(("test", "Test"))
        if not isinstance(owner, ast.Name):
            if named:
                self.writes.append(_Write(value.line, None, ast.dump(target)))
            return state
        known = (ast.ClassDef, *_FUNCTIONS)
        if named and not any(isinstance(b, known) for b in state.get(owner.id, ())):
            # `module.test_a = None` on a module object (`sys.modules[__name__]`).
            self.writes.append(_Write(value.line, target.attr, ast.dump(target)))
        self._attribute(state, owner.id, target.attr, value)
        return state

    def _attribute(self, state: State, owner: str, attribute: str, value: _Value) -> None:
        """`TestX.test_a = None`, `test_a.__test__ = False`: the class's namespace, or the
        function's own `__test__`, as surely as `owner` is that class or function."""
        bound = state.get(owner, frozenset())
        for target in bound:
            if isinstance(target, ast.ClassDef):
                names = self.classes.get(target, {})
                merged = names.get(attribute, frozenset({_UNBOUND})) | {value}
                self.classes[target] = {
                    **names,
                    attribute: frozenset({value}) if len(bound) == 1 else merged,
                }
            elif isinstance(target, _FUNCTIONS) and attribute == "__test__":
                self.flags[target] = self.flags.get(target, frozenset()) | {value}

    def _indirect(self, expression: ast.expr, state: State) -> None:
        """Writes under a computed name: `setattr(X, "test_a", v)` (read as `X.test_a = v`
        when X is a name and the attribute a literal), `globals()["test_a"] = v`, `exec(...)`,
        `globals().update(...)`."""
        for node in _walk(expression):
            if isinstance(node, ast.Call):
                called = _dotted(node.func)
                if called in _WRITERS:
                    name = _literal(node.args[1]) if len(node.args) > 1 else None
                    owner = node.args[0] if node.args else None
                    if name is not None and isinstance(owner, ast.Name):
                        kind = "del" if called == "delattr" else "other"
                        self._attribute(state, owner.id, name, _Value(kind, node.lineno))
                    self.writes.append(_Write(node.lineno, name, ast.dump(node)))
                elif called in ("exec", "eval"):
                    self.writes.append(_Write(node.lineno, None, ast.dump(node)))
                elif called.rpartition(".")[2] in _MUTATORS and _namespace(node.func):
                    # `globals().pop("test_a")`, `vars().update(...)`: by the name popped,
                    # when it is a literal.
                    keyed = called.endswith(_KEYED) and node.args
                    name = _literal(node.args[0]) if keyed else None
                    self.writes.append(_Write(node.lineno, name, ast.dump(node)))
            elif (
                isinstance(node, ast.Subscript)
                and not isinstance(node.ctx, ast.Load)
                and _namespace(node.value)
            ):
                self.writes.append(_Write(node.lineno, _literal(node.slice), ast.dump(node)))


@dataclass(frozen=True)
class _Scope:
    """A module or class pytest may collect tests from, as surely as `level`; `why` says what
    keeps it from being sure."""

    path: tuple[str, ...]
    node: ast.Module | ast.ClassDef
    names: State
    level: int
    why: Finding | None
    # How surely its `__test__` (own or inherited) lets pytest collect it, and from which line.
    flag: tuple[int, int] = (SURE, 0)


@dataclass(frozen=True)
class _Test:
    path: tuple[str, ...]
    name: str
    level: int
    defs: frozenset[ast.AST]
    why: Finding | None

    @property
    def key(self) -> tuple[tuple[str, ...], str]:
        return self.path, self.name


@dataclass(frozen=True)
class _Side:
    """What pytest may collect from one side of a module."""

    module: ast.Module
    scopes: dict[tuple[str, ...], _Scope]
    tests: dict[tuple[tuple[str, ...], str], _Test]
    writes: list[_Write]

    def defs(self, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Every definition of a function named `name`, at any depth."""
        return [n for n in ast.walk(self.module) if isinstance(n, _FUNCTIONS) and n.name == name]

    def level_of(self, definition: ast.AST) -> int:
        """How surely pytest collects this definition as a test, wherever it is collected."""
        levels = [t.level for t in self.tests.values() if definition in t.defs]
        return max(levels, default=NOT)


def hidden_tests(base: ast.Module, head: ast.Module, truths: tuple[Truth, Truth]) -> list[Finding]:
    """The tests the base's module collected that the head's still defines but collects less
    surely, each with the line that hides it and a message. `truths` reads a condition on
    Linux at the base and at the head (`conditions.skip_conditions`)."""
    before, after = _read(base, truths[0], skips=True), _read(head, truths[1])
    found: list[Finding] = []
    gained = [t for t in after.tests.values() if t.level > _level(before, t.key)]
    weak: dict[str, Counter[str]] = {}
    for test in before.tests.values():
        if _level(after, test.key) >= test.level:
            continue
        moved = next((g for g in gained if g.name == test.name and g.level >= test.level), None)
        if moved is not None:
            gained.remove(moved)
            continue
        if test.key in after.tests:
            # Still bound where it was (in a class now skipped, under a condition): hidden.
            found.append(_why(after, test))
            continue
        if test.name not in weak:
            weak[test.name] = _weak(after, test.name, test.level) - _weak(
                before, test.name, test.level
            )
        if +weak[test.name]:
            # A definition of the name that pytest collects less surely than the base did,
            # and that did not stand so at the base: the test is still there, hidden.
            weak[test.name][next(iter(+weak[test.name]))] -= 1
            found.append(_why(after, test))
    found += _shadowed(before, after)
    # A `setattr` read as the write it makes is reported once, as that write.
    seen = {line for line, _ in found}
    found += [write for write in _new_writes(before, after) if write[0] not in seen]
    return list(dict.fromkeys(found))


def _level(side: _Side, key: tuple[tuple[str, ...], str]) -> int:
    test = side.tests.get(key)
    return test.level if test is not None else NOT


def _weak(side: _Side, name: str, level: int) -> Counter[str]:
    """The definitions named `name` that pytest collects less surely than `level`, by shape."""
    return Counter(ast.dump(d) for d in side.defs(name) if side.level_of(d) < level)


def _why(after: _Side, test: _Test) -> Finding:
    """What hides a test at the head: its scope, its name's binding, its own flag."""
    now = after.tests.get(test.key)
    if now is not None and now.why is not None:
        return now.why
    for depth in range(len(test.path) + 1):
        scope = after.scopes.get(test.path[:depth])
        if scope is not None and scope.level < test.level and scope.why is not None:
            return scope.why
    scope = after.scopes.get(test.path)
    shown = _shown(test)
    if scope is not None:
        bound = scope.names.get(test.name, frozenset())
        values = sorted((b for b in bound if isinstance(b, _Value)), key=lambda b: b.line)
        if any(b.kind == "other" for b in values):
            line = max(b.line for b in values if b.kind == "other")
            return line, f"test {shown!r} rebound"
        if any(b.kind == "del" for b in values):
            line = max(b.line for b in values if b.kind == "del")
            return line, f"test {shown!r} deleted (del)"
    lines = [d.lineno for d in after.defs(test.name) if after.level_of(d) < test.level]
    return (min(lines) if lines else None), f"test {shown!r} no longer collected"


def _shown(test: _Test) -> str:
    return "::".join((*test.path, test.name))


def _shadowed(before: _Side, after: _Side) -> list[Finding]:
    """A test pytest still collects under its name, but as a later definition the change adds
    in the same module or class: the one that ran is shadowed. Not a subclass's own version
    of a test it inherited (the base's test was never its own definition)."""
    found: list[Finding] = []
    for key, test in before.tests.items():
        now = after.tests.get(key)
        if now is None or test.level == NOT or len(test.defs) != 1 or len(now.defs) != 1:
            continue
        (old,), (new,) = test.defs, now.defs
        if ast.dump(old) == ast.dump(new):
            continue
        old_scope, new_scope = before.scopes.get(test.path), after.scopes.get(test.path)
        if (
            old_scope is None
            or new_scope is None
            or old not in set(_statements(old_scope.node.body))
        ):
            continue
        if _direct_defs(new_scope.node, test.name) > _direct_defs(old_scope.node, test.name):
            message = f"test {_shown(test)!r} shadowed by a later definition of the same name"
            found.append((getattr(new, "lineno", None), message))
    return found


def _direct_defs(scope: ast.Module | ast.ClassDef, name: str) -> int:
    """Definitions of `name` the scope's own body binds (under `if`, `try` and the like, not
    in a function or class)."""
    return sum(
        1 for node in _statements(scope.body) if isinstance(node, _FUNCTIONS) and node.name == name
    )


def _statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _statements([child])
            elif isinstance(child, ast.ExceptHandler | ast.match_case):
                yield from _statements(child.body)


def _new_writes(before: _Side, after: _Side) -> list[Finding]:
    """Writes under a computed name the change adds that may reach a test that ran (a literal
    name of one, `__test__`, or a name that cannot be read)."""
    names = {t.name for t in before.tests.values()} | {
        p for t in before.tests.values() for p in t.path
    }
    if not names:
        return []
    old = Counter(write.shape for write in before.writes)
    found: list[Finding] = []
    for write in after.writes:
        if old[write.shape] > 0:
            old[write.shape] -= 1
            continue
        if write.name is None:
            found.append(
                (write.line, "test names may be rebound at import (setattr, globals, exec)")
            )
        elif write.name == "__test__":
            found.append((write.line, "tests may no longer be collected (__test__ set)"))
        elif write.name in names:
            found.append((write.line, f"test {write.name!r} rebound"))
    return found


def lowered_flags(
    base: ast.Module, head: ast.Module, truths: tuple[Truth, Truth], *, with_helpers: bool = False
) -> list[tuple[int, str, str]]:
    """Classes that held tests of their own at the base (collected or not: a base suite other
    modules' test classes inherit from) whose `__test__` the change makes false: a subclass
    that does not set its own inherits it, and pytest collects none of its tests. With the
    line that sets it, a message, and the class's name."""
    before, after = _read(base, truths[0]), _read(head, truths[1])
    found: list[tuple[int, str, str]] = []
    for path, scope in before.scopes.items():
        now = after.scopes.get(path)
        if not path or now is None or now.flag[0] >= scope.flag[0]:
            continue
        holds = any(
            name.startswith("test") and any(isinstance(b, _FUNCTIONS) for b in bound)
            for name, bound in scope.names.items()
        )
        if holds or with_helpers:
            message = f"test class {'::'.join(path)!r} no longer collected (__test__ = False)"
            found.append((now.flag[1], message, path[-1]))
    return found


def levels(module: ast.Module, truth: Truth, *, skips: bool) -> dict[int, int]:
    """How surely pytest collects each test definition of a module, by its `def` line (and,
    with `skips`, runs it on Linux)."""
    side = _read(module, truth, skips=skips)
    found: dict[int, int] = {}
    for test in side.tests.values():
        for definition in test.defs:
            line = getattr(definition, "lineno", 0)
            found[line] = max(found.get(line, NOT), test.level)
    return found


def subclasses_left_off(
    trees: TreeView, path: str, name: str, *, with_tests: bool = False
) -> list[str]:
    """Files of the head tree, other than `path`, with a class that inherits from a class
    named `name` (`class TestX(Base)`, `class TestX(suites.Base)`) and does not set its own
    `__test__`: it inherits the base's. A Python file that mentions the name and does not
    parse counts (what it holds cannot be shown)."""
    left: list[str] = []
    for other in sorted({hit.path for hit in trees.search("head", [name])} - {path}):
        if not is_module(other):
            continue
        module = python_module(trees.text("head", other))
        if module is None or any(
            _inherits_flag(node, name) and (not with_tests or _holds_tests(node))  # type: ignore[arg-type]
            for node in ast.walk(module)
        ):
            left.append(other)
    return left


def bases_that_hide(
    trees: TreeView, path: str, base: ast.Module, head: ast.Module
) -> list[tuple[int, str]]:
    """Test classes of a module that hold tests of their own and gain a base class, defined
    in another file of the head tree, that keeps pytest from collecting them: one that sets
    `__test__` to anything but True, or defines `__init__`/`__new__` (read on that class and
    the bases of its own file, a few deep). A base defined nowhere in the tree (a library's)
    hides nothing; defined twice, it hides if any definition does."""
    before = {node.name: node for node in _statements(base.body) if isinstance(node, ast.ClassDef)}
    found: list[tuple[int, str]] = []
    for node in _statements(head.body):
        old = before.get(node.name) if isinstance(node, ast.ClassDef) else None
        if old is None or not isinstance(node, ast.ClassDef) or not _holds_tests(node):
            continue
        if _sets_flag(node) or (_defines_init(node) and not _defines_init(old)):
            continue
        known = {_dotted(b) for b in old.bases}
        for added in (_dotted(b) for b in node.bases):
            init = not _dotted_any(node, "TestCase")
            if added and added not in known and _hides(trees, path, added.split(".")[-1], init):
                message = (
                    f"test class {node.name!r} no longer collected (its base {added!r} hides it)"
                )
                found.append((node.lineno, message))
                break
    return found


def _hides(trees: TreeView, path: str, name: str, init: bool) -> bool:
    """Whether a class named `name`, defined in a Python file of the head tree other than
    `path`, keeps pytest from collecting its subclasses (`bases_that_hide`)."""
    for other in sorted({hit.path for hit in trees.search("head", [name])} - {path}):
        module = python_module(trees.text("head", other)) if is_module(other) else None
        if module is None:
            continue
        classes = {n.name: n for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
        if name in classes and _class_hides(classes[name], classes, 0, init=init):
            return True
    return False


def _class_hides(
    node: ast.ClassDef, classes: dict[str, ast.ClassDef], depth: int, *, init: bool = True
) -> bool:
    """Whether a class keeps its subclasses from being collected: by `__test__`, or (`init`:
    not a `unittest.TestCase`, which pytest collects whatever its `__init__`) by `__init__`."""
    init = init and not _dotted_any(node, "TestCase")
    if _flag_off(node) or (init and _defines_init(node)):
        return True
    if _sets_flag(node) or depth >= _MAX_DEPTH:
        return False
    parents = (classes.get(_dotted(b).split(".")[-1]) for b in node.bases)
    return any(
        p is not None and p is not node and _class_hides(p, classes, depth + 1, init=init)
        for p in parents
    )


def _holds_tests(node: ast.ClassDef) -> bool:
    return any(isinstance(n, _FUNCTIONS) and n.name.startswith("test") for n in node.body)


def _flag_assignments(node: ast.ClassDef) -> list[ast.expr]:
    values: list[ast.expr] = []
    for statement in _statements(node.body):
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__test__" for t in targets):
            values.append(statement.value)  # type: ignore[arg-type]
    return values


def _sets_flag(node: ast.ClassDef) -> bool:
    return bool(_flag_assignments(node))


def _flag_off(node: ast.ClassDef) -> bool:
    return any(
        not (isinstance(value, ast.Constant) and value.value is True)
        for value in _flag_assignments(node)
    )


def _defines_init(node: ast.ClassDef) -> bool:
    return any(isinstance(n, _FUNCTIONS) and n.name in ("__init__", "__new__") for n in node.body)


def _dotted_any(node: ast.ClassDef, suffix: str) -> bool:
    return any(_dotted(b).endswith(suffix) for b in node.bases)


def _inherits_flag(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.ClassDef):
        return False
    if not any(_dotted(base).split(".")[-1] == name for base in node.bases):
        return False
    own = (n for n in _statements(node.body) if isinstance(n, ast.Assign | ast.AnnAssign))
    return not any(
        isinstance(target, ast.Name) and target.id == "__test__"
        for statement in own
        for target in (
            statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        )
    )


# -- reading one side ----------------------------------------------------------------------------


def _read(module: ast.Module, truth: Truth, *, skips: bool = False) -> _Side:
    """What pytest may collect from a module. With `skips` (the base), a test a skip marker
    keeps from running on Linux (its own, its class's, the module's `pytestmark`) counts as
    not collected, and one a condition that cannot be read may skip as maybe: hiding it
    hides nothing more than was already hidden where the suite runs."""
    reader = _Reader(lambda test: _branch(test, truth))
    names = reader.block(module.body, {})
    level, line = _flag(names.get("__test__"))
    why = (line, "test module no longer collected (__test__ = False)") if level < SURE else None
    # A module's `__getattr__` answers pytest's `getattr(module, "__test__", True)` too.
    hook = [b for b in names.get("__getattr__", ()) if isinstance(b, _FUNCTIONS)]
    if hook and level == SURE:
        level, why = MAYBE, (hook[0].lineno, "test module may no longer be collected (__getattr__)")
    root = _Scope((), module, names, level, why)
    scopes: dict[tuple[str, ...], _Scope] = {(): root}
    tests: dict[tuple[tuple[str, ...], str], _Test] = {}
    pending = [(root, 0)]
    while pending:
        scope, depth = pending.pop()
        for test in _tests_in(scope, reader):
            if test.level >= _level_in(tests, test.key):
                tests[test.key] = test
        if depth >= _MAX_DEPTH:
            continue
        for child in _classes_in(scope, names, reader):
            known = scopes.get(child.path)
            if known is None or child.level > known.level:
                scopes[child.path] = child
            pending.append((child, depth + 1))
    if skips:
        tests = {key: _skipped(test, scopes, truth) for key, test in tests.items()}
    return _Side(module, scopes, tests, reader.writes)


def _skipped(test: _Test, scopes: dict[tuple[str, ...], _Scope], truth: Truth) -> _Test:
    """The test, as surely as it runs on Linux given the skip markers on it and around it."""
    level = max(_marks_level(getattr(d, "decorator_list", []), truth) for d in test.defs)
    for depth in range(len(test.path) + 1):
        scope = scopes.get(test.path[:depth])
        if scope is not None:
            level = min(level, _scope_marks_level(scope.node, truth))
    if level >= test.level:
        return test
    return _Test(test.path, test.name, level, test.defs, test.why)


def _scope_marks_level(node: ast.Module | ast.ClassDef, truth: Truth) -> int:
    """How surely a module's or class's own skip markers (`pytestmark`, class decorators) let
    its tests run on Linux."""
    marks: list[ast.expr] = list(node.decorator_list) if isinstance(node, ast.ClassDef) else []
    for statement in _statements(node.body):
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets
        ):
            marks.append(statement.value)
    return _marks_level(marks, truth)


def _marks_level(marks: Sequence[ast.expr], truth: Truth) -> int:
    """How surely markers let a test run on Linux: not at all for `skip`, a `skipif` whose
    condition holds there (`sys.platform != "win32"`) or a `skipUnless` whose condition does
    not; maybe for a condition that cannot be read. Markers of other kinds (`xfail` too: the
    test still runs) leave it sure."""
    level = SURE
    for mark in marks:
        if isinstance(mark, ast.List | ast.Tuple):
            level = min(level, _marks_level(mark.elts, truth))
            continue
        kind = _dotted(mark).split(".")[-1]
        if kind == "skip":
            return NOT
        if kind not in ("skipif", "skipIf", "skipUnless") or not isinstance(mark, ast.Call):
            continue
        condition = next((k.value for k in mark.keywords if k.arg == "condition"), None)
        condition = condition or (mark.args[0] if mark.args else None)
        text = _literal(condition) if condition is not None else None
        if text is not None:
            condition = _expression(text)
        holds = _branch(condition, truth) if condition is not None else None
        if holds is not None and kind == "skipUnless":
            holds = not holds
        if holds is True:
            return NOT
        if holds is None:
            level = MAYBE
    return level


def _expression(text: str) -> ast.expr | None:
    """pytest's string condition (`skipif("sys.platform == 'win32'")`), parsed."""
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _level_in(
    tests: dict[tuple[tuple[str, ...], str], _Test], key: tuple[tuple[str, ...], str]
) -> int:
    test = tests.get(key)
    return test.level if test is not None else -1


def _tests_in(scope: _Scope, reader: _Reader) -> Iterator[_Test]:
    """The functions named `test*` a scope may bind when its body ends."""
    for name, bound in scope.names.items():
        defs = frozenset(b for b in bound if isinstance(b, _FUNCTIONS))
        if not name.startswith("test") or not defs:
            continue
        level, why = scope.level, scope.why
        if len(defs) < len(bound):
            shown = "::".join((*scope.path, name))
            level, why = min(level, MAYBE), why or _binding_why(f"test {shown!r}", bound)
        unwrapped = [d for d in defs if d not in reader.wrapped]
        if not unwrapped:
            line, wrapper = max(reader.wrapped[d] for d in defs)
            shown = "::".join((*scope.path, name))
            why = (line, f"test {shown!r} no longer collected (@{wrapper} makes it no function)")
            yield _Test(scope.path, name, NOT, defs, why)
            continue
        own = max(_flag(reader.flags.get(d))[0] for d in defs)
        if own < level:
            line = max(_flag(reader.flags.get(d))[1] for d in defs)
            shown = "::".join((*scope.path, name))
            level, why = own, (line, f"test {shown!r} no longer collected (__test__ = False)")
        yield _Test(scope.path, name, level, defs, why)


def _binding_why(what: str, bound: frozenset[Binding]) -> Finding:
    """Why a name may not be bound to its definition: rebound, deleted, or bound only under a
    condition (at the definition's line). `what` names it: "test 'test_red'"."""
    values = [b for b in bound if isinstance(b, _Value) and b.kind in ("other", "del")]
    if not values:
        lines = [b.lineno for b in bound if not isinstance(b, _Value)]
        return (min(lines) if lines else None), f"{what} no longer collected"
    last = max(values, key=lambda b: b.line)
    verb = "rebound" if last.kind == "other" else "deleted (del)"
    return last.line, f"{what} {verb}"


def _classes_in(scope: _Scope, module: State, reader: _Reader) -> Iterator[_Scope]:
    """The classes a scope binds, each as a scope with how surely pytest collects it."""
    for name, bound in scope.names.items():
        classes = [b for b in bound if isinstance(b, ast.ClassDef)]
        for node in classes:
            names, testcase = _effective(node, [scope.names, module], reader, set())
            path = (*scope.path, name)
            shown = "::".join(path)
            level, why = _class_level(node, names, testcase, shown)
            if len(classes) < len(bound) and level > MAYBE:
                level, why = MAYBE, _binding_why(f"test class {shown!r}", bound)
            if scope.level < level:
                level, why = scope.level, scope.why
            yield _Scope(path, node, names, level, why, _flag(names.get("__test__")))


def _class_level(
    node: ast.ClassDef, names: State, testcase: bool | None, shown: str
) -> tuple[int, Finding | None]:
    """How surely pytest collects a class: a `unittest.TestCase` (by its base's name), or a
    `Test*` class without `__init__`; unless its `__test__` (own or inherited) is false. A
    class whose bases cannot be read may be a `TestCase`."""
    level, line = _flag(names.get("__test__"))
    if level < SURE:
        return level, (line, f"test class {shown!r} no longer collected (__test__ = False)")
    if testcase:
        return SURE, None
    if not node.name.startswith("Test"):
        why = (node.lineno, f"test class {shown!r} no longer collected")
        return (MAYBE if testcase is None else NOT), why
    init = [
        b for n in ("__init__", "__new__") for b in names.get(n, ()) if isinstance(b, _FUNCTIONS)
    ]
    if init:
        why = (init[0].lineno, f"test class {shown!r} no longer collected (it defines __init__)")
        return (MAYBE if testcase is None else NOT), why
    return SURE, None


def _effective(
    node: ast.ClassDef, outer: list[State], reader: _Reader, seen: set[ast.ClassDef]
) -> tuple[State, bool | None]:
    """A class's names, its own and those it inherits from classes of the same module (one
    binding each), and whether it is a `unittest.TestCase`: True, False, or None when a base
    cannot be read."""
    own = dict(reader.classes.get(node, {}))
    testcase: bool | None = False
    seen = seen | {node}
    for base in node.bases:
        dotted = _dotted(base)
        if dotted in ("object", "") and isinstance(base, ast.Name):
            continue
        if dotted.endswith("TestCase"):
            testcase = True
            continue
        parent = _one_class(dotted, outer)
        if parent is None or parent in seen:
            testcase = None if testcase is False else testcase
            continue
        inherited, parent_case = _effective(parent, outer, reader, seen)
        for name, bound in inherited.items():
            own.setdefault(name, bound)
        if parent_case is True or (parent_case is None and testcase is False):
            testcase = parent_case
    return own, testcase


def _one_class(name: str, scopes: list[State]) -> ast.ClassDef | None:
    for names in scopes:
        bound = names.get(name)
        if bound is not None:
            classes = [b for b in bound if isinstance(b, ast.ClassDef)]
            return classes[0] if len(classes) == 1 == len(bound) else None
    return None


def _flag(bound: frozenset[Binding] | None) -> tuple[int, int]:
    """How surely a `__test__` binding lets pytest collect (unbound or `True`: surely; any
    other value: not), and the line of the last value that does not."""
    if not bound:
        return SURE, 0
    off = [b for b in bound if isinstance(b, _Value) and b.kind == "other"]
    if not off:
        return SURE, 0
    line = max(b.line for b in off)
    return (NOT if len(off) == len(bound) else MAYBE), line


def _branch(test: ast.expr, truth: Truth) -> bool | None:
    """Whether an `if` at import time takes its body: a constant (`if False:`, `if 0:`),
    `TYPE_CHECKING` (false when pytest imports the module), `__name__ == "__main__"` (false:
    pytest imports it under its own name), or a condition on the platform or the Python
    version (`truth`); None when that cannot be told."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _branch(test.operand, truth)
        return None if inner is None else not inner
    if isinstance(test, ast.Name | ast.Attribute) and _dotted(test).endswith("TYPE_CHECKING"):
        return False
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq | ast.NotEq)
    ):
        sides = {_dotted(side) or _literal(side) for side in (test.left, test.comparators[0])}
        if sides == {"__name__", "__main__"}:
            return isinstance(test.ops[0], ast.NotEq)
    return truth(test)


# -- small helpers -------------------------------------------------------------------------------


def _bind(state: State, name: str, value: Binding) -> State:
    return {**state, name: frozenset({value})}


def _union(*states: State) -> State:
    merged: State = {}
    for name in {name for state in states for name in state}:
        merged[name] = frozenset().union(*(s.get(name, frozenset({_UNBOUND})) for s in states))
    return merged


def _own_expressions(node: ast.stmt) -> Iterator[ast.expr]:
    """The expressions a statement itself evaluates or binds, not those of the blocks it
    holds."""
    for value in ast.iter_fields(node):
        items = value[1] if isinstance(value[1], list) else [value[1]]
        for item in items:
            if isinstance(item, ast.expr):
                yield item
            elif isinstance(item, ast.withitem):
                yield item.context_expr
                if item.optional_vars is not None:
                    yield item.optional_vars
            elif isinstance(item, ast.ExceptHandler) and item.type is not None:
                yield item.type
            elif isinstance(item, ast.match_case) and item.guard is not None:
                yield item.guard


def _walk(expression: ast.expr) -> Iterable[ast.AST]:
    """The nodes of an expression, but not the bodies of its lambdas (run later, if ever)."""
    pending: list[ast.AST] = [expression]
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _namespace(node: ast.expr) -> bool:
    """`globals()`, `vars()`, `locals()`, `X.__dict__`, `sys.modules[...]`, or a method of
    one (`globals().update`)."""
    if isinstance(node, ast.Attribute) and node.attr in _MUTATORS:
        node = node.value
    if isinstance(node, ast.Call) and _dotted(node.func) in _NAMESPACES:
        return True
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return True
    return _dotted(node) == "sys.modules"


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


# -- from the changed lines alone ----------------------------------------------------------------

_FLAG_LINE = re.compile(r"^(?P<lead>\s*)__test__\s*(?::[^=]*)?=(?!=)\s*(?!True\s*(?:#.*)?$)")
_FLAG_SET = re.compile(r"\.__test__\s*=(?!=)\s*(?!True\b)|\bsetattr\s*\(.*['\"]__test__['\"]")
_REBIND = re.compile(r"^(?P<n>test\w*)\s*(?::[^=]*)?=(?!=)\s*(?P<value>.*)$")
_DELETE = re.compile(r"^del\s+(?:.*,\s*)?(?P<n>test\w*)\b")
_DEAD_IF = re.compile(r"^\s*if\s+(?:False|0|None|(?:typing\.)?TYPE_CHECKING)\s*:")
# A namespace changed under a computed name: `globals().pop("test_a")`, `del vars()[name]`.
_NAMESPACE_WRITE = re.compile(
    r"(?:\b(?:globals|vars|locals)\(\)|\.__dict__)\s*(?:\.\s*(?:"
    + "|".join(sorted(_MUTATORS))
    + r")\s*\(|\[[^\]]*\]\s*=(?!=))|^del\s+(?:globals|vars|locals)\(\)\["
)
_WRAPPER_LINE = re.compile(r"^\s*@(?:[\w.]+\.)?(?P<d>" + "|".join(sorted(NOT_A_FUNCTION)) + r")\b")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+test\w*\s*\(")


def hidden_by_lines(
    added: Sequence[Line],
    removed: Sequence[Line],
    head: Sequence[str] | None = None,
    context: Sequence[Line] = (),
) -> list[Finding]:
    """`hidden_tests` from the changed lines (no trees, or a side that does not parse): an
    added `__test__ = False`; outside any function (at the top level, or in a class when the
    new file's text, `head`, shows its lines), `del test_x` or `test_x = None` (or the name
    rebound to another name, or to itself wrapped); an `if False:` over a test defined in the
    lines after it; none of which a removed line restates. A later definition shadowing an
    earlier one cannot be told from the lines."""
    old = Counter(line.text.strip() for line in removed)
    found: list[Finding] = []
    for position, line in enumerate(added):
        text = line.text.strip()
        if old[text] > 0:
            old[text] -= 1
            continue
        finding = _line_finding(line.text, _outside_functions(line, head))
        if finding is None and _DEAD_IF.match(line.text) and _test_below(added, position):
            finding = "tests no longer collected (under a condition that never holds)"
        if finding is None:
            finding = _wrapped_test(line, added, removed, context)
        if finding is not None:
            found.append((line.number, finding))
    return found


def _wrapped_test(
    line: Line, added: Sequence[Line], removed: Sequence[Line], context: Sequence[Line]
) -> str | None:
    """An added `@property` (or fixture, context manager) right above a test header that was
    there before: unchanged, or put back as it was removed."""
    wrapper = _WRAPPER_LINE.match(line.text)
    if wrapper is None:
        return None
    new_side = {other.number: other for other in (*added, *context)}
    before = {other.text.strip() for other in removed}
    fresh = {other.number for other in added}
    number = line.number + 1
    while number in new_side and new_side[number].text.strip().startswith("@"):
        number += 1
    header = new_side.get(number)
    if header is None or not _TEST_DEF.match(header.text):
        return None
    if number in fresh and header.text.strip() not in before:
        return None  # a new function
    return f"test no longer collected (@{wrapper['d']} makes it no function)"


def _test_below(added: Sequence[Line], position: int) -> bool:
    """Whether the added lines right after an `if` define a test inside it."""
    depth = len(added[position].text) - len(added[position].text.lstrip())
    for previous, line in zip(added[position:], added[position + 1 :], strict=False):
        if line.number != previous.number + 1:
            return False
        text = line.text.strip()
        if text and len(line.text) - len(line.text.lstrip()) <= depth:
            return False
        if re.match(r"(?:async\s+)?def\s+test|class\s+Test", text):
            return True
    return False


def _outside_functions(line: Line, head: Sequence[str] | None) -> bool:
    """Whether a line runs at import: at the top level, or in a class body when the new
    file's text shows the definitions around it (by indentation)."""
    depth = len(line.text) - len(line.text.lstrip())
    index = line.number - 1
    if head is None or not 0 <= index < len(head) or head[index] != line.text:
        return depth == 0
    for above in reversed(head[:index]):
        stripped = above.lstrip()
        if not stripped or stripped.startswith("#") or len(above) - len(stripped) >= depth:
            continue
        if re.match(r"(?:async\s+)?def\s", stripped):
            return False
        depth = len(above) - len(stripped)
        if depth == 0:
            break
    return True


def _line_finding(text: str, outside: bool) -> str | None:
    flag = _FLAG_LINE.match(text)
    if flag is not None:
        where = "module" if not flag["lead"] else "class"
        return f"test {where} no longer collected (__test__ = False)"
    if _FLAG_SET.search(text):
        return "test no longer collected (__test__ = False)"
    if not outside:
        return None
    if _NAMESPACE_WRITE.search(text):
        return "test names may be rebound at import (setattr, globals, exec)"
    deleted = _DELETE.match(text.strip())
    if deleted is not None:
        return f"test {deleted['n']!r} deleted (del)"
    rebound = _REBIND.match(text.strip())
    if rebound is not None:
        value = rebound["value"].split("#")[0].strip()
        # A data table named `test_cases = [...]` rebinds no test; `None`, another name, or
        # the test wrapped (`test_x = skip(test_x)`) does.
        if (
            value == "None"
            or re.fullmatch(r"[A-Za-z_][\w.]*", value)
            or re.search(rf"\b{re.escape(rebound['n'])}\b", value)
        ):
            return f"test {rebound['n']!r} rebound"
    return None
