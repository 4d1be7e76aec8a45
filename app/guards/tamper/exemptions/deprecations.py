"""Removed Python tests that checked only a deprecation warning the change took out of the code.

A test that expects a `DeprecationWarning` from an old import path, or from an old argument,
and checks nothing else; the change deletes the module `__getattr__` that warned and gave the
old name, or the `if hash is not None:` block that warned. Kept, the test would fail: what it
checked is gone, on purpose.

A removed test (every line of it deleted) is set aside when, with the whole trees:

- it expects a deprecation: a `with` block (or call) of `pytest.deprecated_call`, or of
  `pytest.warns`/`assertWarns`/`assertWarnsRegex` given a `DeprecationWarning`,
  `PendingDeprecationWarning`, `FutureWarning` or other `...DeprecationWarning`;
- every check it makes is inside such a block (an `assert` on the warnings recorded is fine):
  an `assert`, `pytest.raises` or `self.assert...` outside one checks behaviour that may stay,
  and keeps the test under the other rules;
- the change deletes from source code a `warn(...)` whose call names a deprecation (its
  category, or "deprecat" in its message), together with the whole block around it (the `if`,
  `def` or class it is in, every line; the whole file for one at a module's top level): the
  deprecated path went, not only its warning; and most of that block is not added back
  anywhere in the change (moved is not gone);
- a word of four characters or more is in both the test and that block (`ExceptionMiddleware`,
  `hash`, `WS_1004_NO_STATUS_RCVD`), other than the words every deprecation shares
  (`warnings`, `DeprecationWarning`, `deprecated`, ...), and no line of the head's source
  code that mentions it also warns or speaks of a deprecation: the test's warning is not
  raised from somewhere else.

What it cannot tell: a deprecated path deleted whole while the function around it stays, with
a test that reached that function only through the deprecated path; the function's own tests
are the suite's, and the review panel sees a deprecation removed.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

from app.guards.changes import FileChange
from app.guards.tamper.code_names import is_source
from app.guards.tamper.conditions.skip_conditions import dotted_name
from app.guards.tamper.lang.python import PYTHON, is_module
from app.guards.tamper.lang.text import enclosing
from app.guards.trees import Hit, TreeView

_WARN = re.compile(r"(?<![\w.])(?:warnings\.)?warn\s*\(")
_DEPRECATION = re.compile(r"[Dd]eprecat|FutureWarning")
# A line that warns by itself: a `warn(` call, a deprecation category, a `deprecated` decorator.
_WARNS = re.compile(r"(?<![\w.])(?:warnings\.)?warn\s*\(|Deprecation|FutureWarning|@\w*deprecated")
_CATEGORY = re.compile(r"Deprecation|FutureWarning")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
# Words every deprecation and its test share: no link between one test and one warning.
_SHARED = frozenset(
    {
        "self", "None", "True", "False", "return", "import", "from", "with", "class", "pass",
        "warnings", "warn", "warns", "DeprecationWarning", "PendingDeprecationWarning",
        "FutureWarning", "UserWarning", "deprecated", "deprecated_call", "deprecation",
        "Deprecated", "stacklevel", "category", "pytest", "match", "record", "will", "removed",
        "instead", "version", "release", "future", "favor", "favour", "argument", "parameter",
        "attribute", "function", "method", "module", "name", "value", "args", "kwargs", "this",
        "that", "have", "been", "there", "Please", "please", "assert", "test", "tests",
    }
)  # fmt: skip
# The most lines a `warn(` call is read over.
_MAX_CALL_LINES = 12


class Deprecations:
    """The deprecation blocks one change deletes from source code, read once."""

    def __init__(
        self,
        files: Sequence[FileChange],
        trees: TreeView,
        moved: Callable[[Sequence[str]], bool],
    ) -> None:
        self._files = files
        self._trees = trees
        self._moved = moved
        self._warned: dict[str, bool] = {}

    def went_with(self, lines: Sequence[str], position: int, decorators: Sequence[str]) -> bool:
        """Whether the removed test at `lines[position]` (a whole base file; its decorators
        `decorators`) checked only a deprecation that a block the change deleted raised (see
        the module's docstring)."""
        if not self._blocks:
            return False
        end = PYTHON.block_end(lines, position)
        text = "\n".join(lines[position:end])
        if not checks_only_deprecations(text):
            return False
        words = set(_WORD.findall("\n".join([*decorators, text]))) - _SHARED
        return any(
            any(not self._warned_at_head(word) for word in words & block) for block in self._blocks
        )

    @cached_property
    def _blocks(self) -> list[set[str]]:
        """The words of each block the change deletes whole around a deprecation warning."""
        return [set(_WORD.findall(text)) - _SHARED for text in self._deleted_blocks()]

    def _deleted_blocks(self) -> Iterator[str]:
        for change in self._files:
            path = change.old_path
            if not is_source(path) or path is None or not is_module(path):
                continue
            text = self._trees.text("base", path)
            if text is None:
                continue
            lines = text.split("\n")
            deleted = {line.number for line in change.removed}
            for line in change.removed:
                if not _WARN.search(line.text) or not _deprecation(lines, line.number - 1):
                    continue
                block = _around(lines, line.number - 1, deleted, whole=change.status == "deleted")
                if block is not None and not self._moved(block):
                    yield "\n".join(block)

    def _warned_at_head(self, word: str) -> bool:
        """Whether the head's source code mentions the word in a warning: in a `warn(` call
        (its message may be lines below), or on a line naming a deprecation category or a
        `deprecated` decorator. A docstring saying it is deprecated warns no one."""
        if word not in self._warned:
            pattern = re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])")
            self._warned[word] = any(
                is_source(hit.path) and pattern.search(hit.text) and self._in_warning(hit)
                for hit in self._trees.search("head", [word])
            )
        return self._warned[word]

    def _in_warning(self, hit: Hit) -> bool:
        if _WARNS.search(hit.text):
            return True
        text = self._trees.text("head", hit.path)
        if text is None:
            return True  # unreadable: taken to warn
        lines = text.split("\n")
        start = max(0, hit.number - _MAX_CALL_LINES)
        for number in range(hit.number - 1, start - 1, -1):
            if _WARN.search(lines[number]):
                span = "\n".join(lines[number : hit.number])
                return span.count("(") > span.count(")")
        return False


def _deprecation(lines: Sequence[str], start: int) -> bool:
    """Whether the `warn(` call starting at `lines[start]` names a deprecation."""
    depth = 0
    for text in lines[start : start + _MAX_CALL_LINES]:
        if _DEPRECATION.search(text):
            return True
        depth += text.count("(") - text.count(")")
        if depth <= 0:
            return False
    return False


def _around(
    lines: Sequence[str], position: int, deleted: set[int], *, whole: bool
) -> list[str] | None:
    """The lines of the block around `lines[position]` when the change deletes every line of
    it with text on it; the whole file for a line at the top level of a deleted file."""
    found: list[str] | None = None
    header = enclosing(lines, position)
    while header is not None:
        end = PYTHON.block_end(lines, header)
        numbers = range(header + 1, end + 1)
        if not all(number in deleted for number in numbers if lines[number - 1].strip()):
            return found
        # Deleted whole: so may the block around it be (a `def` around the `if`, whose
        # other lines link the warning to its test: starlette's `__deprecated__` names).
        found = list(lines[header:end])
        header = enclosing(lines, header)
    return list(lines) if whole else found


def checks_only_deprecations(text: str) -> bool:
    """Whether a Python test (its whole text) expects a deprecation, and makes every check it
    makes inside such an expectation."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return False
    nodes = [node for node in ast.walk(tree) if isinstance(node, ast.stmt | ast.expr)]
    inside = [(n.lineno, n.end_lineno or n.lineno) for n in nodes if _expectation(n)]
    if not inside:
        return False
    return all(
        any(start <= node.lineno <= end for start, end in inside)
        for node in nodes
        if _is_check(node)
    )


def _expectation(node: ast.AST) -> bool:
    """A `with` block expecting a deprecation, or a call given the code to run
    (`pytest.deprecated_call(func, arg)`)."""
    if isinstance(node, ast.With | ast.AsyncWith):
        return any(_expects_deprecation(item.context_expr) for item in node.items)
    return isinstance(node, ast.Call) and _expects_deprecation(node) and len(node.args) > 1


def _expects_deprecation(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
    if name == "deprecated_call":
        return True
    if name not in ("warns", "assertWarns", "assertWarnsRegex") or not node.args:
        return False
    return bool(_CATEGORY.search(ast.unparse(node.args[0])))


def _is_check(node: ast.AST) -> bool:
    """An assertion, or a call that checks (`pytest.raises`, `self.assertEqual`), other than
    the deprecation expectations themselves."""
    if isinstance(node, ast.Assert):
        return True
    if not isinstance(node, ast.Call) or _expects_deprecation(node):
        return False
    name = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
    return name == "raises" or name.startswith(("assert", "fail"))
