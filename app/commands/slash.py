"""Slash commands: finding `/ourobot <verb> [args]` lines in a comment body.

Only lines a reader sees as plain text count: a command quoted (`>`), inside a fenced or
indented code block, or inside an HTML comment is somebody talking *about* a command, not
issuing one. The parser is pure: authorization and dispatch live elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

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

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_COMMAND = re.compile(r"^ {0,3}/ourobot(?:\s+(.*))?$", re.IGNORECASE)
# Characters that render as nothing: a command smuggled with them is not a visible command.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


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
    if not body:
        return []
    text = _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), body.replace("\r\n", "\n"))
    commands: list[SlashCommand] = []
    fence: str | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        fence_match = _FENCE.match(raw)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        if _INVISIBLE.search(raw):
            continue
        match = _COMMAND.match(raw.rstrip())
        if match is None:
            continue
        words = (match.group(1) or "").split()
        verb = words[0].lower() if words else "help"
        args = tuple(word[:MAX_ARG_CHARS] for word in words[1 : 1 + MAX_ARGS])
        commands.append(SlashCommand(verb=verb, args=args, line=number))
        if len(commands) == MAX_COMMANDS:
            break
    return commands


def may_run(
    command: SlashCommand, permission: Permission, *, login: str, operators: frozenset[str]
) -> bool:
    """Whether a commenter with `permission` may run `command`. Never decided by a login shape."""
    if command.verb in OPERATOR_VERBS and login.lower() in {o.lower() for o in operators}:
        return True
    return permission >= command.min_permission
