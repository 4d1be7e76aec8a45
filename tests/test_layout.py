"""The import graph of app/, reviewers/ and tasks/ has no circle, counting every import wherever
it stands (inside functions too; only `if TYPE_CHECKING:` blocks aside, since they never run);
its folders import only the folders below them (docs/architecture.md); and app/ keeps one folder
per concern: the only flat modules are the four that belong to all."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "reviewers", "tasks")
FLAT_APP_MODULES = {"__init__.py", "__main__.py", "settings.py", "errors.py", "github_client.py"}
# Which way imports point (docs/architecture.md): a folder imports only folders on lower lines.
LAYERS = (
    {"app.__main__"},
    {"app.cli"},
    {"app.install"},
    {"app.action", "tasks", "app.statuspage"},
    {"app.webhooks"},
    {"app.handlers"},
    {"app.jobs"},
    {"app.loop"},
    {"app.commands"},
    {"app.controls"},
    {"app.gate"},
    {"app.guards", "reviewers"},
    {"app.repo_config"},
    {"app.workspace", "app.store", "app.github_client"},
    {"app.settings", "app.sandbox", "app"},
    {"app.errors"},
)
# Settings check OUROBOT_MODEL_PRICES at startup with the price table's own entry check; pricing
# imports settings only for its type.
UPWARD_ALLOWED = {("app.settings", "app.controls.pricing")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def our_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement at any depth, except in the body of `if TYPE_CHECKING:`."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _deepest(name: str, known: dict[str, Path]) -> str | None:
    """The deepest of our modules that `name` is or lies inside (None: not ours)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_by(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Our modules that module `name` imports. Parent packages a submodule import runs are not
    counted: a package `__init__` re-exporting its submodules is not a circle of its own."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [_deepest(alias.name, known) for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else _deepest(base, known)
                for alias in node.names
            ]
        found.update(target for target in targets if target is not None and target != name)
    return found


def import_graph() -> dict[str, set[str]]:
    known = our_modules()
    return {name: imported_by(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep chain of imports cannot hit the recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A readable path round one circle inside `component`: a -> b -> ... -> a."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [start, *reversed(path[:-1]), start] if node != start else [start, start]
            if child not in previous:
                previous[child] = node
                frontier.append(child)
    return component


def test_the_graph_sees_imports_inside_functions_and_skips_type_checking_blocks(
    tmp_path: Path,
) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from app import settings\n"
        "if TYPE_CHECKING:\n"
        "    from app.store import Store\n"
        "def later():\n"
        "    import app.errors\n"
        "    from app.webhooks.inbox import Inbox\n"
        "    from . import github_client\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source)
    known = our_modules()
    assert imported_by("app.probe", path, known) == {
        "app.settings",
        "app.errors",
        "app.webhooks.inbox",
        "app.github_client",
    }


def test_circles_are_found_and_shown_as_a_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_in_app_reviewers_and_tasks() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the walk found the tree
    found = [" -> ".join(one_cycle(graph, component)) for component in circles(graph)]
    assert found == [], "import circles:\n" + "\n".join(found)


def folder(module: str) -> str:
    """`app.<folder>` (or the flat module) for app/, else the top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "app" and len(parts) > 1 else parts[0]


def test_folders_import_only_folders_below_them() -> None:
    layer = {name: depth for depth, names in enumerate(LAYERS) for name in names}
    graph = import_graph()
    assert {folder(module) for module in graph} <= set(layer), "a folder missing from LAYERS"
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if folder(module) != folder(target)
        and layer[folder(target)] <= layer[folder(module)]
        and (module, target) not in UPWARD_ALLOWED
    )
    assert upward == [], "imports against the layers:\n" + "\n".join(upward)


def test_only_the_cli_starts_the_sandbox_and_the_sandbox_imports_nothing_of_ours() -> None:
    graph = import_graph()
    users = sorted(
        module
        for module, targets in graph.items()
        if any(folder(t) == "app.sandbox" for t in targets) and folder(module) != "app.sandbox"
    )
    assert users and {folder(module) for module in users} == {"app.cli"}
    imported = {
        target
        for module, targets in graph.items()
        if folder(module) == "app.sandbox"
        for target in targets
    }
    assert {folder(target) for target in imported} <= {"app.sandbox"}


def test_app_has_no_flat_modules_beyond_the_four() -> None:
    flat = {path.name for path in (ROOT / "app").glob("*.py")}
    assert flat - FLAT_APP_MODULES == set()
