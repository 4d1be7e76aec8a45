"""Slash commands: finding `/ourobot <verb> [args]` lines in a comment body.

Only text GitHub renders as a paragraph of the comment counts, read with a CommonMark parser
(markdown-it-py) rather than line by line: a command quoted (`>`, and a line that continues the
quote lazily), inside a fenced block (which a line with an info string does not close), an
indented block, `<pre>` or another HTML block, an HTML comment, a list item, a table or a
heading, or written with code or links, is somebody talking *about* a command, not issuing
one. Each command is a whole line of such a paragraph. The parser is pure: authorization and
dispatch live elsewhere.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import IntEnum

from markdown_it import MarkdownIt
from markdown_it.token import Token

PREFIX = "/ourobot"
MAX_ARGS = 8
MAX_ARG_CHARS = 100
MAX_COMMANDS = 5


class Permission(IntEnum):
    """Repository permission levels, ordered so they compare."""

    NONE = 0
    READ = 1
    TRIAGE = 2
    WRITE = 3
    MAINTAIN = 4
    ADMIN = 5

    @classmethod
    def parse(cls, value: str | None) -> Permission:
        try:
            return cls[(value or "none").strip().upper()]
        except KeyError:
            return cls.NONE


# The minimum permission each verb needs. Anything that spends model budget or pushes needs
# write; lifting a hold needs at least what placing one does; stopping the world needs admin.
VERB_PERMISSIONS: dict[str, Permission] = {
    "help": Permission.READ,
    "status": Permission.READ,
    "hold": Permission.TRIAGE,
    "unhold": Permission.WRITE,
    "review": Permission.WRITE,
    "plan": Permission.WRITE,
    "implement": Permission.WRITE,
    "fix": Permission.WRITE,
    "merge": Permission.WRITE,
    # Opens a pull request that goes through every gate again: no more than asking for one.
    "revert": Permission.WRITE,
    # Accepts a finding the guards or the panel made: the people who own the repository's rules.
    "override": Permission.MAINTAIN,
    "scout": Permission.MAINTAIN,
    "budget": Permission.MAINTAIN,
    "panic": Permission.ADMIN,
    "resume": Permission.ADMIN,
}
VERBS = frozenset(VERB_PERMISSIONS)
# Verbs an operator login may use without holding the repository permission.
OPERATOR_VERBS = frozenset({"panic", "resume"})

_COMMAND = re.compile(r"/ourobot(?:\s+(.*))?", re.IGNORECASE)
# Characters that render as nothing: a command smuggled with them is not a visible command.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_BREAKS = frozenset({"softbreak", "hardbreak"})
# Raw HTML elements whose content the browser shows as text, not paragraphs: one opened in an
# HTML block stays open past the blank line that ends the block.
_RAW_ELEMENT = re.compile(r"<(/?)(pre|code|textarea|xmp|listing|plaintext)\b", re.IGNORECASE)


@functools.cache
def _reader() -> MarkdownIt:
    """CommonMark with raw HTML recognised (a `<pre>` or comment block is no paragraph) and
    the GitHub table extension (a table cell is no paragraph either)."""
    return MarkdownIt("commonmark", {"html": True}).enable("table")


@dataclass(frozen=True)
class SlashCommand:
    verb: str
    args: tuple[str, ...]
    line: int  # 1-based line of the comment body

    @property
    def known(self) -> bool:
        return self.verb in VERBS

    @property
    def min_permission(self) -> Permission:
        return VERB_PERMISSIONS.get(self.verb, Permission.READ)


def parse_commands(body: str | None) -> list[SlashCommand]:
    """Every visible `/ourobot` command in a comment, in order, at most MAX_COMMANDS.

    A bare `/ourobot` or an unknown verb yields a command with that verb (or "help") so the
    caller can answer it rather than ignore the person.
    """
    if not body or PREFIX not in body.lower():
        return []  # most comments: no parse at all
    tokens = _reader().parse(body.replace("\r\n", "\n").replace("\r", "\n"))
    commands: list[SlashCommand] = []
    raw = 0  # raw HTML text elements open here
    for index, token in enumerate(tokens):
        # A paragraph of the document itself: not one quoted, in a list item or a table.
        if token.type != "paragraph_open" or token.level != 0 or raw:
            raw = _raw_depth(token, raw)
            continue
        inline = tokens[index + 1]
        first = inline.map[0] if inline.map else (token.map[0] if token.map else 0)
        for offset, text in _plain_lines(inline):
            command = _command(text, first + offset + 1)
            if command is not None:
                commands.append(command)
                if len(commands) == MAX_COMMANDS:
                    return commands
    return commands


def _raw_depth(token: Token, depth: int) -> int:
    """How many raw text elements are open after `token` (HTML in it opens or closes them)."""
    html = [token.content] if token.type in ("html_block", "html_inline") else []
    html += [child.content for child in token.children or () if child.type == "html_inline"]
    for text in html:
        for match in _RAW_ELEMENT.finditer(text):
            depth = max(depth - 1, 0) if match.group(1) else depth + 1
    return depth


def _plain_lines(inline: Token) -> list[tuple[int, str]]:
    """The lines of a paragraph that render as plain text only, with their offset in it: a
    line with code, a link, emphasis or inline HTML in it is not a plain command."""
    lines: list[tuple[int, str]] = []
    parts: list[str] = []
    offset, plain, raw = 0, True, 0
    for child in [*(inline.children or ()), None]:
        if child is None or child.type in _BREAKS:
            if plain and parts:
                lines.append((offset, "".join(parts)))
            offset, parts, plain = offset + 1, [], not raw
        elif child.type == "text":
            parts.append(child.content)
        else:
            raw = _raw_depth(child, raw)
            plain = False
    return lines


def _command(text: str, line: int) -> SlashCommand | None:
    if _INVISIBLE.search(text):
        return None
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    words = (match.group(1) or "").split()
    verb = words[0].lower() if words else "help"
    args = tuple(word[:MAX_ARG_CHARS] for word in words[1 : 1 + MAX_ARGS])
    return SlashCommand(verb=verb, args=args, line=line)


def may_run(
    command: SlashCommand, permission: Permission, *, login: str, operators: frozenset[str]
) -> bool:
    """Whether a commenter with `permission` may run `command`. Never decided by a login shape."""
    if command.verb in OPERATOR_VERBS and login.lower() in {o.lower() for o in operators}:
        return True
    return permission >= command.min_permission
