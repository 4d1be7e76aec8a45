"""Platform flags in skip conditions: `skipif(WIN)` where `WIN` is the project's own name for
`sys.platform.startswith("win")`.

Projects seldom spell the platform out in every skip; they name it once (click's
`WIN = sys.platform.startswith("win")` in `click/_compat.py`) and import the name into their
tests (`from click._compat import WIN`). `flags` lets `conditions.skip_conditions` read such a
name as the expression it stands for, from the tree the condition is read from, when nothing
can make it stand for anything else:

- the test module binds the name exactly once, anywhere in it (no second assignment, no
  function, class, parameter, loop or `global` of that name, no `import *`), by a statement of
  its own top level: `NAME = <expression>` or `from <module> import NAME` (`as NAME`);
- an imported name comes from one module of the tree (found by its path: `click/_compat.py`
  or `click/_compat/__init__.py`, under any source root, or next to the test module for a
  relative import), which binds it exactly once, the same way, by an assignment: one step, no
  chain of imports;
- no line of code in the tree assigns it as an attribute (`_compat.WIN = True`), or names it
  on a line with `setattr`, `__dict__`, `globals()` or `vars(`.

What the name stands for is then judged like any condition written in place: a flag for "not
Linux" lets the skip pass, a version flag (attrs' `PY_3_10_PLUS = sys.version_info[:2] >=
(3, 10)`) is judged against the project's floor, and any other (`HAS_NUMPY =
find_spec("numpy") is not None`, an environment variable) is still reported. What cannot be
shown is taken not to be a platform flag, so the skip is reported, as it was before this
module.

The standard modules a condition reads (`sys.platform`, `sys.version_info`,
`platform.machine()`, `os.name`, `sysconfig`), and those whose markers skip (`pytest`,
`unittest`), are read as the standard ones only where the module makes them so
(`Names.standard`): every binding of the name in it is its own plain `import sys`, and no line
of it patches the module or rebinds the name out of sight (`sys.platform = "win32"`,
`monkeypatch.setattr(sys, "version_info", ...)`, `mock.patch("platform.machine", ...)`,
`globals()["sys"] = ...`). A module that binds `sys` itself (`from tests import fakesys as
sys`) may make `sys.version_info >= (3, 14)` hold on every Python, and a `pytest` of its own
may skip whatever the condition says, so such a skip is reported.
"""

from __future__ import annotations

import ast
import builtins
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from app.guards.tamper.code_names import binding_count, python_module
from app.guards.tamper.lang.python import is_module
from app.guards.trees import Side, TreeView


@dataclass(frozen=True)
class Names:
    """What one module's names are in its skip conditions: a bare name as the expression it
    stands for (called with the name; None when that cannot be shown), and whether a standard
    module's name is that module there (`standard`)."""

    resolve: Callable[[str], ast.expr | None]
    # Given a dotted subject (`sys.platform`, `platform.machine()`, `pytest.mark.skipif`):
    # whether it reads the standard module, and what it reads of it is not patched.
    standard: Callable[[str], bool]

    def __call__(self, name: str) -> ast.expr | None:
        return self.resolve(name)


# The modules whose values skip conditions read, and those whose markers skip.
_STANDARD_MODULES = frozenset({"sys", "os", "platform", "sysconfig", "pytest", "unittest"})

_ONE_NAME = re.compile(r"^[A-Za-z_]\w*$")
# A call that patches what it is given (`monkeypatch.setattr`, `mock.patch`, `patch.object`).
_PATCHERS = r"\b(?:setattr|delattr|patch(?:\.object|\.dict|\.multiple)?)"
# A line that may rebind a module's attribute other than by `m.WIN = ...`: the builtin
# `setattr(m, "WIN", 1)`, a namespace written through, or a patcher's `.setattr` at a module's
# top level (indented, in a fixture or a test, it runs after collection has evaluated every
# skip decorator: click's `monkeypatch.setattr(click._termui_impl, "WIN", True)`).
_INDIRECT = re.compile(
    r"(?<![\w.])setattr\s*\(|^\S.*\.setattr\s*\(|__dict__|\bglobals\s*\(|\bvars\s*\("
    r"|__setattr__|(?<![\w.])(?:exec|eval|compile)\s*\("
)


def flags(trees: TreeView | None, side: Side, path: str, text: str | None) -> Names:
    """What the bare names of the module at `path` (its text `text`, on `side`) stand for,
    and which standard modules are the standard ones there."""
    module = python_module(text) if trees is not None and is_module(path) else None

    @cache
    def resolve(name: str) -> ast.expr | None:
        if trees is None or module is None or not _ONE_NAME.match(name):
            return None
        return _resolve(trees, side, path, module, name)

    @cache
    def standard(subject: str) -> bool:
        name, _, rest = subject.partition(".")
        if module is None or text is None or name not in _STANDARD_MODULES:
            return True  # not read (a bare diff, another language): as written
        attribute = re.match(r"\w*", rest)
        read = attribute.group() if attribute else ""
        return _plain_imports_only(module, name) and not _patched(text, name, read)

    return Names(resolve, standard)


def _plain_imports_only(module: ast.Module, name: str) -> bool:
    """Whether every binding of `name` in the module is a plain `import name` (or `import
    name.sub`): no `import x as name`, `from x import name`, assignment, parameter or star
    import that could make it another object."""
    plain = 0
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return False
        if isinstance(node, ast.Import):
            plain += sum(a.asname is None and a.name.split(".")[0] == name for a in node.names)
    return binding_count(module, name) == plain


def _patched(text: str, name: str, attribute: str) -> bool:
    """Whether a line of the module may rebind the `attribute` of the standard module `name`
    a condition reads, or the name itself out of sight: the attribute assigned
    (`sys.platform = "win32"`), a patcher given it (`monkeypatch.setattr(sys, "platform",
    ...)`, `patch("sys.platform")`, or a name that is not a literal; in a test too, since a
    skip in a body runs after it), or a namespace written through (`_INDIRECT`). Another
    attribute patched (`sys.argv`) changes nothing the condition reads."""
    word, read = re.escape(name), re.escape(attribute)
    assigned = re.compile(
        rf"(?<![\w.]){word}\s*\.\s*{read}\b\s*(?::[^=]*)?(?:<<|>>|\*\*|//|[-+*/%&|^@])?=(?!=)"
    )
    patcher = re.compile(
        rf"""{_PATCHERS}\s*\(\s*(?:{word}\s*,\s*(?:["']{read}["']|[^"'\s])|["']{word}\.{read}\b)"""
    )
    mentioned = re.compile(rf"(?<![\w.]){word}\b")
    return any(
        assigned.search(line)
        or patcher.search(line)
        or (mentioned.search(line) and _INDIRECT.search(line))
        for line in text.splitlines()
    )


def _resolve(
    trees: TreeView, side: Side, path: str, module: ast.Module, name: str
) -> ast.expr | None:
    statement = _only_binding(module, name)
    if statement is None:
        return None
    home = module
    if not isinstance(statement, ast.ImportFrom):
        value, original = statement.value, name
    elif _from_standard(statement, name):
        # `from sys import version_info`: the standard module's own value, judged as
        # `sys.version_info` is (not patched, the module not rebound). Not `_rebound`: it
        # errs on every `sys.version_info >= (3, 10)` in the tree; the name is bound once
        # here, and decorators read it as the module is imported, before any other code
        # could assign it on the module.
        return ast.parse(f"{statement.module}.{name}", mode="eval").body
    else:
        original = next(a.name for a in statement.names if (a.asname or a.name) == name)
        where = _defining_module(trees, side, path, statement, original)
        if where is None or _submodule_named(trees, side, where, original):
            return None
        home = python_module(trees.text(side, where)) or module
        definition = _only_binding(home, original)
        if definition is None or isinstance(definition, ast.ImportFrom):
            return None
        value = definition.value
    if value is None or _rebound(trees, side, {name, original}):
        return None
    return value if _stdlib_names_only(home, value) else None


def _from_standard(statement: ast.ImportFrom, name: str) -> bool:
    """`from sys import version_info` (no `as`): a value of a standard module, by its own
    name."""
    return (
        statement.level == 0
        and statement.module in _STANDARD_MODULES
        and any(a.name == name and a.asname is None for a in statement.names)
    )


def _submodule_named(trees: TreeView, side: Side, where: str, name: str) -> bool:
    """Whether a package's `__init__.py` has a submodule of the flag's name: importing it
    rebinds the name in the package to the module, which is true."""
    if posixpath.basename(where) != "__init__.py":
        return False
    folder = posixpath.dirname(where)
    candidates = (posixpath.join(folder, f"{name}.py"), posixpath.join(folder, name, "__init__.py"))
    return any(trees.text(side, candidate) is not None for candidate in candidates)


def _stdlib_names_only(module: ast.Module, value: ast.expr) -> bool:
    """Whether every name the flag's expression reads is a module the flag's own module binds
    once, by a plain `import` of it (`import sys`), or a builtin it never binds (`getattr`):
    not a `sys` of its own making."""
    for node in ast.walk(value):
        if isinstance(node, ast.Name):
            if hasattr(builtins, node.id) and binding_count(module, node.id) == 0:
                continue
            plain = any(
                isinstance(statement, ast.Import)
                and any(a.name == node.id and a.asname is None for a in statement.names)
                for statement in module.body
            )
            if not plain or binding_count(module, node.id) != 1:
                return False
    return True


def _only_binding(
    module: ast.Module | None, name: str
) -> ast.Assign | ast.AnnAssign | ast.ImportFrom | None:
    """The one statement of the module's top level that binds `name`, when nothing else in
    the module binds it."""
    if module is None or binding_count(module, name) != 1:
        return None
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                return statement
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            if isinstance(statement.target, ast.Name) and statement.target.id == name:
                return statement
        elif isinstance(statement, ast.ImportFrom) and any(
            (a.asname or a.name) == name for a in statement.names
        ):
            return statement
    return None


def _defining_module(
    trees: TreeView, side: Side, path: str, statement: ast.ImportFrom, name: str
) -> str | None:
    """The one file of the tree that `from <module> import name` reads `name` from."""
    parts = statement.module.split(".") if statement.module else []
    if statement.level:
        directory = posixpath.dirname(path)
        for _ in range(statement.level - 1):
            directory = posixpath.dirname(directory)
        if not parts:
            return None
        stem = posixpath.join(directory, *parts)
        found = [c for c in (f"{stem}.py", f"{stem}/__init__.py") if trees.text(side, c)]
        return found[0] if len(found) == 1 else None
    if not parts:
        return None
    stem = "/".join(parts)
    endings = (f"{stem}.py", f"{stem}/__init__.py")
    files = {
        hit.path
        for hit in trees.search(side, [name])
        if hit.path in endings or hit.path.endswith(tuple("/" + e for e in endings))
    }
    return files.pop() if len(files) == 1 else None


def _rebound(trees: TreeView, side: Side, names: set[str]) -> bool:
    """Whether some line of code in the tree may assign one of `names` as a module attribute."""
    attribute = re.compile(
        # `m.WIN = 1`, `m.WIN: bool = 1`, `m.WIN |= 1` (and, erring, `m.WIN >= 1`).
        r"\.\s*(?:"
        + "|".join(map(re.escape, sorted(names)))
        + r")\s*(?::[^=]*)?[-+*/%&|^@<>!]*=(?!=)"
    )
    return any(
        attribute.search(hit.text) or _INDIRECT.search(hit.text)
        for hit in trees.search(side, names)
    )
