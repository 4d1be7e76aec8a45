"""Go test files that no Go the module supports builds: a `//go:build` constraint on release
tags that is false for every Go from the base go.mod's `go` directive on (gin's
`context_1.18_test.go`, `//go:build !go1.19`, in a module at `go 1.20`). Their tests ran
nowhere the project is tested, like a Python test under a `skipif` on a Python version older
than `requires-python`, so removing them removes nothing that ran.

The floor is the base's, never the head's: a change cannot raise the `go` directive to excuse
itself. Only release tags (`go1.N`) are known; any other tag (`linux`, `windows`, `race`, a
custom tag) is unknown and may hold, and a constraint that is not false whatever the unknown
tags are is taken to build (three-valued logic: `!go1.19 && linux` is false, `!go1.19 ||
linux` is not). A file without a `//go:build` line, or one we cannot parse, builds."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

from app.guards.changes import FileChange
from app.guards.tamper.lang.go import is_test_file
from app.guards.trees import TreeView

__all__ = ["constraint_added", "go_never_built"]

Version = tuple[int, int]

_GO_DIRECTIVE = re.compile(r"^\s*go\s+(\d+)\.(\d+)\b")
_BUILD_LINE = re.compile(r"^//go:build\s+(?P<expr>.+?)\s*$")
# The old form, read by the go command when a file has no `//go:build` line: spaces are `||`,
# commas `&&` (`// +build linux,amd64 darwin`).
_PLUS_BUILD = re.compile(r"^//\s*\+build\s+(?P<expr>.+?)\s*$")
_TOKEN = re.compile(r"\s*(\(|\)|!|&&|\|\||[\w.]+)")
_RELEASE_TAG = re.compile(r"^go(\d+)\.(\d+)$")
# Where the suite runs (`conditions.skip_conditions`): Linux on x86_64, built by gc. `cgo`
# depends on the environment, and any other tag on the command line (`-tags`): unknown.
_ON_LINUX = frozenset({"linux", "unix", "amd64", "gc"})
_ELSEWHERE = frozenset(
    {
        "aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
        "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos",
        "386", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips", "mipsle",
        "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv",
        "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm", "gccgo", "tinygo",
    }
)  # fmt: skip


def go_never_built(files: Sequence[FileChange], trees: TreeView | None, index: int) -> bool:
    """Whether the Go test file `files[index]` was, at the base, built by no Go the module
    supported then (its build constraint false on every Go from the base go.mod's `go` on)."""
    change = files[index]
    path = change.old_path
    if path is None or not is_test_file(path):
        return False
    expr = _constraint(_base_lines(change, trees))
    if expr is None:
        return False
    floor = _go_floor(files, trees, path)
    if floor is None:
        return False
    return _evaluate(expr, floor) is False


def constraint_added(change: FileChange, trees: TreeView | None) -> int | None:
    """The line of a `//go:build` constraint the change gives a Go test file that existed,
    when the head's constraint may be false where the suite runs (Linux, x86_64, gc: an
    `ignore` or custom tag, another system) and the base's was surely true there, or absent:
    a file-wide skip, like a module's `pytestmark`. One that holds on Linux (`!windows`,
    `linux || darwin`) passes, and so does one reworded from a constraint that may already
    be false (`integration` made `integration && !race`)."""
    path = change.new_path or ""
    if change.status not in ("modified", "renamed") or not is_test_file(path):
        return None
    added = [line for line in change.added if _constraint_line(line.text)]
    if not added:
        return None
    head = trees.text("head", path) if trees is not None else None
    if head is not None:
        expr = _file_constraint(head.splitlines())
        before = _file_constraint(_base_lines(change, trees))
    else:
        expr = _any_constraint([line.text for line in added])
        before = _any_constraint([line.text for line in change.removed])
    if expr is None or _evaluate(expr, None) is True:
        return None
    if before is not None and _evaluate(before, None) is not True:
        return None
    return added[0].number


def _constraint_line(text: str) -> bool:
    return bool(_BUILD_LINE.match(text.strip()) or _PLUS_BUILD.match(text.strip()))


def _file_constraint(lines: Sequence[str]) -> str | None:
    """A whole file's constraint, as the go command reads it: its `//go:build` line, else its
    old-form `// +build` line (in its header: the first lines that say something)."""
    return _constraint(lines) or _plus_build([line for line in lines if line.strip()][:20])


def _any_constraint(lines: Sequence[str]) -> str | None:
    """The constraint among lines a bare diff shows: a `//go:build` line, else a `// +build`."""
    for text in lines:
        match = _BUILD_LINE.match(text.strip())
        if match is not None:
            return match["expr"]
    return _plus_build(lines)


def _plus_build(lines: Sequence[str]) -> str | None:
    """The first old-form `// +build` line among `lines` in the new form: its alternatives,
    each a conjunction (`// +build linux,amd64 darwin` is `(linux && amd64) || (darwin)`)."""
    for text in lines:
        match = _PLUS_BUILD.match(text.strip())
        if match is not None:
            options = [" && ".join(term.split(",")) for term in match["expr"].split()]
            return " || ".join(f"({option})" for option in options)
    return None


def _base_lines(change: FileChange, trees: TreeView | None) -> list[str]:
    """The file as it was at the base: from the base tree, or all of it from the diff when it
    was deleted."""
    if trees is not None and change.old_path is not None:
        text = trees.text("base", change.old_path)
        if text is not None:
            return text.splitlines()
    if change.status == "deleted":
        return [line.text for line in change.removed]
    return []


def _constraint(lines: Iterable[str]) -> str | None:
    """The `//go:build` expression of a Go file: only in its header, before `package`."""
    for text in lines:
        stripped = text.strip()
        if stripped.startswith("package ") or stripped == "package":
            return None
        match = _BUILD_LINE.match(stripped)
        if match is not None:
            return match["expr"]
        # Anything but comments before `package`: not a Go file header we can read.
        if stripped and not stripped.startswith(("//", "/*", "*")):
            return None
    return None


def _go_floor(files: Sequence[FileChange], trees: TreeView | None, path: str) -> Version | None:
    """The base's `go` directive of the module `path` is in (the nearest go.mod above it)."""
    folder = posixpath.dirname(path)
    while True:
        name = posixpath.join(folder, "go.mod") if folder else "go.mod"
        text = trees.text("base", name) if trees is not None else None
        if text is None:
            changed = [c for c in files if c.old_path == name]
            text = "\n".join(line.text for c in changed for line in c.removed) if changed else None
        if text is not None:
            for line in text.splitlines():
                match = _GO_DIRECTIVE.match(line)
                if match is not None:
                    return int(match.group(1)), int(match.group(2))
            if trees is not None:
                return None  # the module's own go.mod, without a `go` line
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _evaluate(expr: str, floor: Version | None) -> bool | None:
    """The constraint's truth on every Go from `floor` on: True, False, or None (depends on
    an unknown tag or a later release). None when it cannot be parsed. Without a floor, on
    Linux, x86_64, gc: the system, architecture and compiler tags are known, release tags
    are not."""
    tokens: list[str] = []
    position = 0
    while position < len(expr):
        match = _TOKEN.match(expr, position)
        if match is None:
            return None
        tokens.append(match.group(1))
        position = match.end()
        while position < len(expr) and expr[position].isspace():
            position += 1
    parser = _Parser(tokens, floor)
    try:
        value = parser.either()
    except ValueError:
        return None
    return value if parser.done() else None


class _Parser:
    """`||` over `&&` over `!` and parentheses, as `go/build/constraint` reads them, in
    Kleene's three-valued logic (None: unknown)."""

    def __init__(self, tokens: list[str], floor: Version | None) -> None:
        self._tokens = tokens
        self._at = 0
        self._floor = floor

    def done(self) -> bool:
        return self._at == len(self._tokens)

    def _peek(self) -> str | None:
        return self._tokens[self._at] if self._at < len(self._tokens) else None

    def _next(self) -> str:
        token = self._peek()
        if token is None:
            raise ValueError("unexpected end")
        self._at += 1
        return token

    def either(self) -> bool | None:
        value = self.both()
        while self._peek() == "||":
            self._next()
            other = self.both()
            value = (
                True
                if value is True or other is True
                else (None if None in (value, other) else False)
            )
        return value

    def both(self) -> bool | None:
        value = self.unary()
        while self._peek() == "&&":
            self._next()
            other = self.unary()
            value = (
                False
                if value is False or other is False
                else (None if None in (value, other) else True)
            )
        return value

    def unary(self) -> bool | None:
        word = self._next()
        if word == "!":
            value = self.unary()
            return None if value is None else not value
        if word == "(":
            value = self.either()
            if self._next() != ")":
                raise ValueError("unbalanced")
            return value
        if word in (")", "&&", "||"):
            raise ValueError("unexpected operator")
        return self._tag(word)

    def _tag(self, tag: str) -> bool | None:
        if self._floor is None:
            return True if tag in _ON_LINUX else (False if tag in _ELSEWHERE else None)
        release = _RELEASE_TAG.match(tag)
        if release is None:
            return None
        # `go1.N` holds on Go 1.N and every later release.
        return True if (int(release.group(1)), int(release.group(2))) <= self._floor else None
