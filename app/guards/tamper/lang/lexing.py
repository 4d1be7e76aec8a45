"""Which lines of a run start inside a string or a block comment, for the languages read: a
test header there defines no test (a module body wrapped in `\"\"\"`, a suite in `/* ... */`).

A small lexer per language, by its syntax (`Syntax`): line comments, block comments (nested
where the language nests them), strings that may span lines, Ruby's `=begin`/`=end` and
heredocs. A run is read as if it started in code: a diff's hunk that starts inside a string
reads its two sides alike, so only what the change opens or closes tells.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

# A Ruby heredoc opener: `<<~RUBY`, `<<-EOS`, `<<'EOS'`, `<<"EOS"`, `<<EOS`.
_HEREDOC = re.compile(r"<<[~-]?(['\"`]?)(?P<id>[A-Z_][A-Z0-9_]*)\1")
_RAW = re.compile(r'r(#*)"')


@dataclass(frozen=True)
class Syntax:
    """How a language writes comments and strings. `quotes` end at the line's end unless
    escaped (a one-line string); `spanning` may run over lines (`\"\"\"`, a backtick)."""

    comment: tuple[str, ...] = ()
    block: tuple[tuple[str, str], ...] = ()
    nested: bool = False
    quotes: tuple[str, ...] = ()
    spanning: tuple[str, ...] = ()
    # Rust's raw strings (`r#"..."#`).
    raw: bool = False
    # Ruby's `=begin`/`=end` at the start of a line, and heredocs.
    ruby: bool = False
    # Code stepped over whole: Rust's character literals (`'"'`; a lone `'` is a lifetime).
    skip: re.Pattern[str] | None = None


@dataclass
class _State:
    close: str | None = None  # what ends the string or comment the lexer is in
    depth: int = 0  # nesting of block comments
    escapes: bool = True
    spans: bool = True  # whether it may go on past its line
    heredoc: str | None = None


def masked(lines: Sequence[str], syntax: Syntax) -> set[int]:
    """The positions of `lines` whose start lies inside a string or a block comment."""
    state = _State()
    found: set[int] = set()
    for position, text in enumerate(lines):
        if state.heredoc is not None:
            found.add(position)
            if text.strip() == state.heredoc:
                state.heredoc = None
            continue
        if syntax.ruby and state.close == "=end":
            found.add(position)
            if text.startswith("=end"):
                state = _State()
            continue
        if state.close is not None:
            found.add(position)
        elif syntax.ruby and text.startswith("=begin"):
            found.add(position)
            state = _State(close="=end")
            continue
        state = _scan(text, syntax, state)
        if state.close is not None and not state.spans:
            state = _State()  # a one-line string ends with its line
    return found


def _scan(text: str, syntax: Syntax, state: _State) -> _State:
    """The lexer's state at the end of `text`, starting in `state`."""
    index = 0
    pending_heredoc: str | None = None
    special = _special(syntax)
    while index < len(text):
        if state.close is not None:
            index = _inside(text, index, syntax, state)
            continue
        # In code, only a character that may open something needs a look.
        ahead = special.search(text, index)
        if ahead is None:
            break
        index = ahead.start()
        if any(text.startswith(marker, index) for marker in syntax.comment):
            break
        stepped = syntax.skip.match(text, index) if syntax.skip is not None else None
        if stepped is not None:
            index = stepped.end()
            continue
        opened = _opening(text, index, syntax)
        if opened is not None:
            state.close, state.escapes, length, state.depth, state.spans = opened
            index += length
            continue
        if syntax.ruby and pending_heredoc is None:
            heredoc = _HEREDOC.match(text, index)
            if heredoc is not None and (index == 0 or text[index - 1] != "<"):
                pending_heredoc = heredoc["id"]
                index = heredoc.end()
                continue
        index += 1
    if pending_heredoc is not None and state.close is None:
        state.heredoc = pending_heredoc
    return state


@cache
def _special(syntax: Syntax) -> re.Pattern[str]:
    """The characters that may start a comment, a string or a stepped-over literal."""
    starts = {token[0] for token in (*syntax.comment, *syntax.quotes, *syntax.spanning)}
    starts |= {start[0] for start, _ in syntax.block}
    if syntax.raw:
        starts.add("r")
    if syntax.skip is not None:
        starts |= {"'", "b"}
    if syntax.ruby:
        starts.add("<")
    return re.compile("[" + "".join(re.escape(char) for char in sorted(starts)) + "]")


def _opening(text: str, index: int, syntax: Syntax) -> tuple[str, bool, int, int, bool] | None:
    """What opens at `text[index]`: the text that closes it, whether backslashes escape in
    it, how long the opener is, the block comment depth, and whether it may span lines."""
    for start, end in syntax.block:
        # `\/*` is an escaped slash in a regular expression (`/\/*$/`), not a comment.
        escaped = index > 0 and text[index - 1] == "\\"
        if text.startswith(start, index) and not escaped:
            return end, False, len(start), 1, True
    if syntax.raw and text.startswith("r", index) and not _in_word(text, index):
        raw = _RAW.match(text, index)
        if raw is not None:
            return '"' + raw.group(1), False, raw.end() - index, 0, True
    for quote in syntax.spanning:
        if text.startswith(quote, index):
            return quote, True, len(quote), 0, True
    for quote in syntax.quotes:
        if text.startswith(quote, index):
            return quote, True, len(quote), 0, False
    return None


def _in_word(text: str, index: int) -> bool:
    return index > 0 and (text[index - 1].isalnum() or text[index - 1] == "_")


def _inside(text: str, index: int, syntax: Syntax, state: _State) -> int:
    """Past the next character of a string or comment, closing it where it ends."""
    close = state.close or ""
    if state.depth and syntax.nested:
        opener = next((start for start, end in syntax.block if end == close), None)
        if opener and text.startswith(opener, index):
            state.depth += 1
            return index + len(opener)
    if state.escapes and text[index] == "\\":
        return index + 2
    if text.startswith(close, index):
        state.depth = max(state.depth - 1, 0)
        if state.depth == 0:
            state.close = None
        return index + len(close)
    return index + 1
