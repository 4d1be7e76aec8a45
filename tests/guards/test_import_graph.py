"""The guards' import graph, read from the source (every import, wherever it stands: inside
functions too, `TYPE_CHECKING` blocks aside): no circles, and each layer of the test-tamper
rule imports only what lies below it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "app.guards"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted((ROOT / "app" / "guards").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                yield from _imports_of(child)
            continue
        yield from _imports_of(node)


def _imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    elif not (isinstance(node, ast.If) and _type_checking(node)):
        yield from _imports(node)


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules of `app.guards` an import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")[: -node.level] if module in MODULES else []
            base = ".".join([*package, *([base] if base else [])])
        names = [f"{base}.{alias.name}" for alias in node.names] + [base]
    found: set[str] = set()
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith(PACKAGE):
            found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        edges = {target for node in _imports(tree) for target in _targets(module, node)}
        graph[module] = edges - {module}
    return graph


GRAPH = _graph()


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports, as the modules on it; None when there is none."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)) is not None:
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)) is not None:
            return found
    return None


def test_the_graph_reads_imports_inside_functions_and_finds_a_circle():
    tree = ast.parse("def f():\n    from app.guards.tamper.rule import find_tampering\n")
    targets = {t for node in _imports(tree) for t in _targets("app.guards.changes", node)}
    assert targets == {"app.guards.tamper.rule"}
    circle = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circle(circle) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


def test_the_guards_import_no_circle():
    assert _circle(GRAPH) is None


# Each layer of the rule, lowest first: a module may import its own layer and those below.
LAYERS = (
    ("app.guards.changes", "app.guards.lines", "app.guards.paths", "app.guards.trees"),
    ("app.guards.tamper.lang",),
    (
        "app.guards.tamper.test_files",
        "app.guards.tamper.definitions",
        "app.guards.tamper.diffs",
        "app.guards.tamper.finding",
        "app.guards.tamper.code_names",
    ),
    (
        "app.guards.tamper.conditions",
        "app.guards.tamper.runners",
        "app.guards.tamper.aliases",
        "app.guards.tamper.ruby_wrappers",
        "app.guards.tamper.build_constraints",
        "app.guards.tamper.dead_checks",
        "app.guards.tamper.early_exits",
        "app.guards.tamper.early_returns",
        "app.guards.tamper.counts",
        "app.guards.tamper.relocations",
    ),
    ("app.guards.tamper.exemptions",),
    (
        "app.guards.tamper.rule",
        "app.guards.tamper.markers",
        "app.guards.tamper.narrowing",
        "app.guards.tamper.hidden",
        "app.guards.tamper.assertions",
        "app.guards.tamper.unmade",
    ),
)


def _layer(module: str) -> int | None:
    for number, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return number
    return None


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if _layer(m) is not None))
def test_a_layer_imports_only_what_lies_below_it(module: str):
    layer = _layer(module)
    assert layer is not None
    above = sorted(t for t in GRAPH[module] if (_layer(t) or -1) > layer)
    assert above == [], f"{module} imports a layer above its own"


def test_every_module_of_the_rule_has_a_layer():
    unplaced = [m for m in GRAPH if m.startswith("app.guards.tamper.") and _layer(m) is None]
    assert unplaced == []
