"""How connected each changed file is: an import graph over the repository's files.

Built from import lines only (Python `import`/`from`, JavaScript/TypeScript relative `import`,
`export ... from` and `require`): no file content other than those lines is read, and nothing
of it reaches a prompt except counts and the paths of changed files. The graph is a heuristic
for ordering what a reviewer sees first; a language it does not know simply has no edges.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

PYTHON_SUFFIXES = (".py", ".pyi")
JS_SUFFIXES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")
SOURCE_GLOBS = tuple(f"*{suffix}" for suffix in (*PYTHON_SUFFIXES, *JS_SUFFIXES))
# Import lines, as `git grep -E` patterns (POSIX classes: git's ERE has no \s).
IMPORT_PATTERN = (
    r"^[[:space:]]*(import[[:space:]]|from[[:space:]].*[[:space:]]import\b)"
    r"|\brequire[[:space:]]*\(|^[[:space:]]*export[[:space:]].*[[:space:]]from[[:space:]]"
)

# The same lines, for a text already read (the implementer's first view reads whole files).
_IMPORT_LINE = re.compile(
    r"^\s*(import\s|from\s.*\simport\b)|\brequire\s*\(|^\s*export\s.*\sfrom\s"
)

_SRC_ROOTS = frozenset({"src", "lib", "python"})
_PY_IMPORT = re.compile(r"\s*import\s+(.+)")
_PY_FROM = re.compile(r"\s*from\s+(\.*)([\w.]*)\s+import\s+(.+)")
_JS_SPECIFIER = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])(\.{1,2}/[^"'\n]*)\1"""
)


@dataclass
class ImportGraph:
    """Undirected links between repository files that import one another."""

    links: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, a: str, b: str) -> None:
        if a != b:
            self.links[a].add(b)
            self.links[b].add(a)

    def neighbours(self, path: str) -> set[str]:
        return set(self.links.get(path, ()))

    def degree(self, path: str) -> int:
        return len(self.links.get(path, ()))


def import_lines(path: str, text: str) -> list[str]:
    """The lines of a source file that `IMPORT_PATTERN` finds (none for other files)."""
    if not path.endswith((*PYTHON_SUFFIXES, *JS_SUFFIXES)):
        return []
    return [line for line in text.splitlines() if _IMPORT_LINE.search(line)]


def build_graph(import_lines: Mapping[str, Sequence[str]], paths: Iterable[str]) -> ImportGraph:
    """The graph over `paths` (every file at the head, plus deleted ones: an import of a
    deleted module is a link worth seeing) from each file's import lines."""
    known = set(paths)
    modules = _python_modules(known)
    graph = ImportGraph()
    for path, lines in import_lines.items():
        if path.endswith(PYTHON_SUFFIXES):
            targets = _python_targets(path, lines, modules)
        elif path.endswith(JS_SUFFIXES):
            targets = _js_targets(path, lines, known)
        else:
            continue
        for target in targets:
            graph.add(path, target)
    return graph


def _python_modules(paths: Iterable[str]) -> dict[str, list[str]]:
    """Dotted module name -> files; `src/pkg/x.py` also answers to `pkg.x`."""
    modules: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        if not path.endswith(PYTHON_SUFFIXES):
            continue
        parts = path.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or not all(part.isidentifier() for part in parts):
            continue
        modules[".".join(parts)].append(path)
        if len(parts) > 1 and parts[0] in _SRC_ROOTS:
            modules[".".join(parts[1:])].append(path)
    return modules


def _python_targets(path: str, lines: Sequence[str], modules: Mapping[str, list[str]]) -> set[str]:
    package = _package_of(path)
    targets: set[str] = set()
    for line in lines:
        for name in _python_imported_names(line, package):
            targets.update(_resolve_module(name, modules))
    return targets


def _package_of(path: str) -> list[str]:
    parts = path.rsplit(".", 1)[0].split("/")
    return parts[:-1]


def _python_imported_names(line: str, package: list[str]) -> list[str]:
    """Candidate module names, most specific first per import (`a.b.c` before `a.b`)."""
    code = line.split("#", 1)[0]
    match = _PY_FROM.match(code)
    if match:
        dots, module, names = match.groups()
        if dots:
            up = len(dots) - 1
            if up > len(package):
                return []
            base = package[: len(package) - up] if up else package
            module = ".".join([*base, module] if module else base)
        if not module:
            return []
        imported = [n.split(" as ")[0].strip(" ()\\") for n in names.split(",")]
        return [f"{module}.{n}" for n in imported if n.isidentifier()] + [module]
    match = _PY_IMPORT.match(code)
    if match:
        return [part.split(" as ")[0].strip() for part in match.group(1).split(",")]
    return []


def _resolve_module(name: str, modules: Mapping[str, list[str]]) -> list[str]:
    """The files for `name`, or for its nearest enclosing package that is a file here."""
    parts = name.split(".")
    while parts:
        found = modules.get(".".join(parts))
        if found:
            return found
        parts.pop()
    return []


def _js_targets(path: str, lines: Sequence[str], known: set[str]) -> set[str]:
    folder = posixpath.dirname(path)
    targets: set[str] = set()
    for line in lines:
        for _, specifier in _JS_SPECIFIER.findall(line):
            base = posixpath.normpath(posixpath.join(folder, specifier))
            if base.startswith("../"):
                continue
            for candidate in _js_candidates(base):
                if candidate in known:
                    targets.add(candidate)
                    break
    return targets


def _js_candidates(base: str) -> list[str]:
    return [
        base,
        *(base + suffix for suffix in JS_SUFFIXES),
        *(f"{base}/index{suffix}" for suffix in JS_SUFFIXES),
    ]


def connectivity_order(changed: Sequence[str], graph: ImportGraph) -> list[str]:
    """Changed files, most connected first, each followed by the changed files it links to.

    A file's score is its degree in the repository graph plus twice its links to other
    changed files (a change that touches many changed files is where the change lives).
    Walking from the best-scored file through its changed neighbours keeps connected
    changes next to each other, so a bounded prompt shows coherent pieces, not scraps.
    """
    changed_set = set(changed)

    def score(path: str) -> tuple[int, str]:
        linked = len(graph.neighbours(path) & changed_set)
        return (-(graph.degree(path) + 2 * linked), path)

    remaining = sorted(changed_set, key=score)
    seen: set[str] = set()
    order: list[str] = []
    for start in remaining:
        if start in seen:
            continue
        queue = [start]
        seen.add(start)
        while queue:
            current = queue.pop(0)
            order.append(current)
            for neighbour in sorted(graph.neighbours(current) & changed_set, key=score):
                if neighbour not in seen:
                    seen.add(neighbour)
                    queue.append(neighbour)
    return order
