"""Skip and xfail markers given a name of the module's own, read where they are applied:
`slow = pytest.mark.skip(reason="slow")` then `@slow` on a test, or werkzeug's
`require_watchdog = pytest.mark.skipif(watchdog is None, ...)` then `@require_watchdog`.

Without this, `@slow` on an existing test was no skip at all to the rule: a red test silenced
by a marker it names once and applies anywhere. Read here, the decorator line is spelled as the
marker it names (`@pytest.mark.skip(reason="slow")`), so every part of the rule judges it as if
written in place: a new skip on an existing test is reported, a platform-only one passes, and
a marker reworded under the same name is a rewording.

A name the module binds once, at its top level, to a marker expression is read as that marker;
one bound to a marker and to anything else as well is read as a skip whose condition cannot be
read (which marker applies cannot be told), so put on an existing test it is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from app.guards.tamper.code_names import binding_count, python_module

_ASSIGNED = re.compile(
    r"^(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<expr>(?:pytest\.mark\.(?:skip|skipif|xfail)"
    r"|unittest\.(?:skip|skipIf|skipUnless|expectedFailure))\b.*)$"
)
_APPLIED = re.compile(r"^(?P<lead>\s*)@(?P<name>[A-Za-z_]\w*)\s*(?:#.*)?$")
# Lines a marker's expression may run over (a bound on the work, not a policy).
_MAX_LINES = 12


def named_markers(texts: Sequence[str]) -> dict[str, str]:
    """The names a module's lines bind once, at the top level, to a skip or xfail marker, each
    with the marker's expression on one line."""
    found: dict[str, str] = {}
    for index, text in enumerate(texts):
        match = _ASSIGNED.match(text)
        if match is None:
            continue
        expression = _whole(texts, index, match["expr"])
        if expression is not None:
            found[match["name"]] = expression
    # A marker name bound again (or in a module that does not parse) may be anything where it
    # is applied: a skip whose condition cannot be read, so put on an existing test it is
    # reported.
    module = python_module("\n".join(texts)) if found else None
    return {
        name: expr
        if module is not None and binding_count(module, name) == 1
        else "pytest.mark.skipif(rebound_marker_name)"
        for name, expr in found.items()
    }


def rewrite_marker(text: str, markers: Mapping[str, str]) -> str:
    """A decorator line naming a marker, spelled as the marker."""
    match = _APPLIED.match(text)
    if match is None or match["name"] not in markers:
        return text
    return f"{match['lead']}@{markers[match['name']]}"


def _whole(texts: Sequence[str], index: int, first: str) -> str | None:
    """The expression that starts with `first` on line `index`, joined up to where its
    brackets close; None when they do not close within a few lines."""
    parts = [first.strip()]
    depth = _depth(first)
    position = index
    while depth > 0:
        position += 1
        if position >= len(texts) or position - index > _MAX_LINES:
            return None
        parts.append(texts[position].strip())
        depth += _depth(texts[position])
    return " ".join(parts) if depth == 0 else None


def _depth(text: str) -> int:
    code = re.sub(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|#.*$", "", text)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
