"""Rust's tests, as cargo reads them: a function under `#[test]` (or a test macro's
attribute: `#[tokio::test]`, `#[rstest]`, `#[test_case(...)]`), or named `test_x`, in
`tests/` or in a source file's `#[cfg(test)] mod tests`; `assert!` checks; `#[ignore]` and
`#[should_panic]` (a panic then passes the test).

What `cargo test` on Linux x86_64 leaves out of the build is not code: an item under a
`#[cfg(...)]` false there (`#[cfg(any())]`, `#[cfg(windows)]`, `#[cfg(not(test))]`), and a
whole file under `#![cfg(...)]` (`masked`). A predicate that cannot be told (a feature, a
`cfg` of the project's own) is taken for true.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either

_ATTRIBUTE = re.compile(
    r"#\[(?:[\w:]+::)?test\b|#\[(?:rstest|test_case|wasm_bindgen_test|quickcheck|proptest)\b"
)
_FN = re.compile(
    r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
    r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+(?P<n>\w+)"
)
CFG = re.compile(r"^\s*#(?P<inner>!?)\[cfg\((?P<pred>.*)\)\]\s*(?://.*)?$")
_CFG_ATTR = re.compile(r"#\[cfg_attr\((?P<pred>.*),\s*(?:ignore|should_panic)\b")
# Longest predicate read (a bound on the work; nested ones recurse).
_MAX_PREDICATE = 2000
# Values of the configuration `cargo test` builds with on Linux x86_64.
_TRUE_NAMES = frozenset({"test", "unix", "debug_assertions"})
_FALSE_NAMES = frozenset({"windows", "miri", "doc", "doctest"})
_VALUES = {
    "target_os": "linux",
    "target_family": "unix",
    "target_arch": "x86_64",
    "target_pointer_width": "64",
    "target_endian": "little",
    "panic": "unwind",
}
_SYNTAX = Syntax(
    comment=("//",),
    block=(("/*", "*/"),),
    nested=True,
    spanning=('"',),
    raw=True,
    skip=re.compile(r"'(?:\\.|[^\\'])'|b'(?:\\.|[^\\'])'"),
)


def cfg_holds(predicate: str) -> bool | None:
    """Whether a `cfg` predicate holds when `cargo test` builds on Linux x86_64: True,
    False, or None when it cannot be told (a feature, a name of the project's own)."""
    if len(predicate) > _MAX_PREDICATE:
        return None
    try:
        value, rest = _predicate(predicate.strip())
    except RecursionError:
        return None
    return value if not rest.strip() else None


def _predicate(text: str) -> tuple[bool | None, str]:
    """The value of the predicate at the start of `text`, and the text after it."""
    match = re.match(r"(any|all|not)\s*\(", text)
    if match is not None:
        values: list[bool | None] = []
        rest = text[match.end() :].lstrip()
        while rest and not rest.startswith(")"):
            value, rest = _predicate(rest)
            values.append(value)
            rest = rest.lstrip().removeprefix(",").lstrip()
        if not rest.startswith(")"):
            return None, ""
        return _combined(match.group(1), values), rest[1:]
    match = re.match(r"(?P<key>\w+)\s*(?:=\s*\"(?P<value>[^\"]*)\")?", text)
    if match is None or not match.group("key"):
        return None, ""
    key, wanted = match.group("key"), match.group("value")
    rest = text[match.end() :]
    if wanted is None:
        if key in _TRUE_NAMES:
            return True, rest
        return (False if key in _FALSE_NAMES else None), rest
    if key in _VALUES:
        return wanted == _VALUES[key], rest
    return None, rest


def _combined(how: str, values: list[bool | None]) -> bool | None:
    if how == "not":
        return None if len(values) != 1 or values[0] is None else not values[0]
    if how == "any":
        if any(value is True for value in values):
            return True
        return False if all(value is False for value in values) else None
    if any(value is False for value in values):
        return False
    return True if all(value is True for value in values) else None


def _elsewhere(text: str) -> bool:
    """`#[cfg_attr(windows, ignore)]`: ignored only where its predicate holds, never here."""
    match = _CFG_ATTR.search(text)
    return match is not None and cfg_holds(match["pred"]) is False


@dataclass(frozen=True)
class _Rust(Language):
    def masked(self, lines: Sequence[str]) -> set[int]:
        """Strings and block comments, and what a false `cfg` leaves out of the build."""
        found = super().masked(lines)
        position = 0
        while position < len(lines):
            match = CFG.match(lines[position]) if position not in found else None
            if match is None or cfg_holds(match["pred"]) is not False:
                position += 1
                continue
            end = len(lines) if match["inner"] else _item_end(lines, position + 1, found)
            found.update(range(position + 1, end))
            position = end
        return found


def _item_end(lines: Sequence[str], position: int, masked: set[int]) -> int:
    """The end (exclusive) of the item starting at or after `lines[position]` (past its other
    attributes): where its braces balance, or its line ending in `;`."""
    depth = 0
    opened = False
    for index in range(position, len(lines)):
        if index in masked:
            continue
        text = lines[index].split("//")[0]
        depth += text.count("{") - text.count("}")
        opened = opened or "{" in text
        stripped = text.strip()
        if opened and depth <= 0:
            return index + 1
        if not opened and stripped.endswith(";") and not stripped.startswith("#"):
            return index + 1
    return len(lines)


RUST = _Rust(
    name="rust",
    suffixes=(".rs",),
    comment="//",
    headers=(re.compile(r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+(?P<n>test_\w+)\s*\("),),
    assertions=either(*CHECKS),
    markers=(
        Marker("decorator", re.compile(r"#\[(?:ignore|should_panic)\b")),
        Marker("decorator", _CFG_ATTR),
    ),
    skipping_decorator=re.compile(r"^#\[ignore\b"),
    attributed=_FN,
    attribute=_ATTRIBUTE,
    # Other attributes, doc and line comments, and an attribute's continued arguments.
    between=re.compile(r"^(?:#\[|//|/\*|\*|\)|\])"),
    elsewhere=_elsewhere,
    syntax=_SYNTAX,
)
