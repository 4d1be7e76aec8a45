"""Removed tests that could only pass, so removing them cannot turn a red suite green.

An AVA test whose whole body is `t.pass()` (`test('x', t => { t.pass(); })`, kept so that a
file has a test on runtimes where the real ones are not registered) passes whatever the code
does. Only AVA's: the same callback under Jest is `done`, whose `.pass()`
throws, and tape's test never ends without `t.end()`, so there a removal may hide a failure.
The runner is read from the base file: the test must be called through the name the file
binds to `ava`'s default export, bound once. An empty body is not vacuous under AVA, which
fails a test that makes no assertion.

(Go's empty tests, which always pass too, are read from the diff alone in
`relocations`: a Go test has no runner to tell apart.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.guards.tamper.definitions import Definition
from app.guards.tamper.relocations import SkippedAnyway
from app.guards.trees import TreeView

_SCRIPT = re.compile(r"\.(?:[cm]?js|[cm]?ts|jsx|tsx)$")
# `import test from 'ava'`, `const test = require('ava')`: the name AVA's tests are called by.
_AVA_BINDING = re.compile(
    r"""^\s*(?:import\s+(?P<imported>[A-Za-z_$][\w$]*)\s+from"""
    r"""|(?:const|let|var)\s+(?P<required>[A-Za-z_$][\w$]*)\s*=\s*require\s*\()"""
    r"""\s*['"]ava['"]""",
    re.MULTILINE,
)
# The header's callback, `t => {`, `async (t) => {`, `function (t) {`: its one parameter.
_CALLBACK = re.compile(
    r",\s*(?:async\s+)?(?:\(\s*(?P<arrow>[A-Za-z_$][\w$]*)\s*\)|(?P<bare>[A-Za-z_$][\w$]*))"
    r"\s*=>\s*\{\s*$"
    r"|,\s*(?:async\s+)?function\s*\(\s*(?P<function>[A-Za-z_$][\w$]*)\s*\)\s*\{\s*$"
)


def always_passing(trees: TreeView | None) -> SkippedAnyway:
    """Header lines of the removed AVA tests, in files read whole at the base, whose body is
    only `t.pass()`."""

    def passing(path: str, defs: Sequence[Definition]) -> set[int]:
        if trees is None or not _SCRIPT.search(path):
            return set()
        runner = _ava_name(trees.text("base", path) or "")
        if runner is None:
            return set()
        return {d.line.number for d in defs if _only_passes(d, runner)}

    return passing


def _ava_name(text: str) -> str | None:
    bindings = list(_AVA_BINDING.finditer(text))
    if len(bindings) != 1:
        return None
    name = bindings[0]["imported"] or bindings[0]["required"]
    # Bound again anywhere else (`test = other`, a parameter or function named `test`): not
    # surely AVA's.
    rest = _AVA_BINDING.sub("", text)
    word = re.escape(name)
    declared = rf"\b(?:const|let|var|function|class|import)\s+(?:\*\s+as\s+)?{word}\b"
    parameter = rf"[(,]\s*{word}\s*[,)=]"
    assigned = rf"(?<![\w$.=!<>]){word}\s*=(?!=)"
    return None if re.search(f"{declared}|{parameter}|{assigned}", rest) else name


def _only_passes(definition: Definition, runner: str) -> bool:
    header = definition.line.text
    call = re.match(rf"\s*{re.escape(runner)}(?:\.serial)?\s*\(", header)
    callback = _CALLBACK.search(header)
    if call is None or callback is None or definition.body is None:
        return False
    t = callback["arrow"] or callback["bare"] or callback["function"]
    ends = ("", ";")
    return definition.body in {(f"{t}.pass(){a}", f"}}){b}") for a in ends for b in ends}
