"""What one agent turn asks the harness to do, read strictly from the model's reply.

A reply is judged, never executed as it stands. It may hold, in text or as tool calls:

- **a shell command**: the first fenced block whose info string is `bash` or `sh`, or a `bash`
  tool call with a `command` argument. Only the first is run; how many more were left is said;
- **edit blocks** (`### FILE/APPEND/REPLACE/DELETE`, or their tools: `app.loop.edits`);
- **SUBMIT** as the last line (or a `submit` tool call): the worktree as it stands is the
  proposal. Edit blocks without a command are a submission too, as before the agent loop;
- **DONE** as the last line (or a `done` tool call): the work is finished;
- **ALREADY SATISFIED** as the last line: the ticket needed no change;
- **declared test changes**: a `### TEST CHANGES` section of `- <test>: <why>` lines (or the
  `submit` tool's `test_changes`), the tests whose expectations the change alters on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.guards.declared import Declared
from app.loop.edits import EDIT_TOOLS, ParsedReply, is_edit_header, parse_reply
from reviewers.model_client import ToolCall, ToolSpec

SUBMIT, DONE = "SUBMIT", "DONE"
MAX_DECLARED = 50
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*$")
_DECLARED_HEADER = re.compile(r"^ {0,3}###[ \t]+TEST CHANGES[ \t]*:?[ \t]*$", re.I)
_DECLARED_LINE = re.compile(r"^\s*[-*]\s+`?([^`:\s][^`]*?)`?\s*:\s+(\S.*)$")
SHELLS = ("bash", "sh", "shell", "console")

AGENT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "bash",
        "Run one shell command in the repository's sandbox (no network); you get its exit code "
        "and output.",
        {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command"}},
            "required": ["command"],
        },
    ),
    ToolSpec(
        "submit",
        "Submit the worktree as it stands: the harness checks, commits and tests it.",
        {
            "type": "object",
            "properties": {
                "test_changes": {
                    "type": "array",
                    "description": "tests whose expectations this change alters on purpose",
                    "items": {
                        "type": "object",
                        "properties": {"test": {"type": "string"}, "why": {"type": "string"}},
                        "required": ["test", "why"],
                    },
                }
            },
        },
    ),
    ToolSpec("done", "Say the ticket is done (after a green submission).", {"type": "object"}),
    *EDIT_TOOLS,
)


@dataclass(frozen=True)
class Turn:
    """Everything one reply asks for."""

    command: str | None
    commands_left: int  # further command blocks that were not run
    edits: ParsedReply
    submit: bool
    done: bool
    satisfied: bool
    declared: tuple[Declared, ...]

    @property
    def asks_nothing(self) -> bool:
        return (
            self.command is None
            and not self.edits.edits
            and not self.edits.problems
            and not (self.submit or self.done or self.satisfied)
        )


def read_turn(text: str, tool_calls: Sequence[ToolCall] = ()) -> Turn:
    """The actions `text` and `tool_calls` ask for, in the protocol above."""
    commands = _command_blocks(text)
    submit = _last_line(text) == SUBMIT
    done = _last_line(text) == DONE
    declared = list(_declared_in_text(text))
    edit_calls: list[ToolCall] = []
    for call in tool_calls:
        if call.name == "bash":
            command = call.arguments.get("command")
            if isinstance(command, str) and command.strip():
                commands.append(command)
        elif call.name == "submit":
            submit = True
            declared += _declared_in_tool(call.arguments)
        elif call.name == "done":
            done = True
        else:
            edit_calls.append(call)
    # Edit blocks are read from the text outside the shell blocks: a heredoc that writes a
    # Markdown file may hold lines that look like headers.
    edits = parse_reply(_without_commands(text), edit_calls)
    return Turn(
        command=commands[0] if commands else None,
        commands_left=max(0, len(commands) - 1),
        edits=edits,
        submit=submit,
        done=done and not submit,
        satisfied=edits.satisfied,
        declared=tuple(declared[:MAX_DECLARED]),
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    return lines[-1].strip("*_`").rstrip(".").strip() if lines else ""


def _fences(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, info word) of every fenced block, outermost only."""
    lines = text.replace("\r\n", "\n").split("\n")
    found = []
    index = 0
    while index < len(lines):
        opened = _FENCE_OPEN.match(lines[index])
        if opened is None:
            index += 1
            continue
        fence, info = opened.group(1), opened.group(2).lower()
        close = next(
            (
                n
                for n in range(index + 1, len(lines))
                if lines[n].strip().startswith(fence[0] * len(fence))
                and not lines[n].strip().strip(fence[0])
            ),
            len(lines),
        )
        found.append((index, close, info))
        index = close + 1
    return found


def _shell_blocks(text: str) -> list[tuple[int, int]]:
    """The shell blocks of `text` that are commands: not the body of an edit block (a
    `### FILE: run.sh` may well be fenced as bash)."""
    lines = text.replace("\r\n", "\n").split("\n")
    found = []
    for start, end, info in _fences(text):
        before = next((lines[n] for n in range(start - 1, -1, -1) if lines[n].strip()), "")
        if info in SHELLS and not is_edit_header(before):
            found.append((start, end))
    return found


def _command_blocks(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    bodies = ["\n".join(lines[start + 1 : end]).strip() for start, end in _shell_blocks(text)]
    return [body for body in bodies if body]


def _without_commands(text: str) -> str:
    lines = text.replace("\r\n", "\n").split("\n")
    for start, end in reversed(_shell_blocks(text)):
        del lines[start : end + 1]
    return "\n".join(lines)


def _declared_in_text(text: str) -> list[Declared]:
    found: list[Declared] = []
    inside = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if _DECLARED_HEADER.match(line):
            inside = True
            continue
        if inside:
            match = _DECLARED_LINE.match(line)
            if match:
                found.append(Declared(match.group(1).strip(), match.group(2).strip()))
            elif line.strip():
                inside = False
    return found


def _declared_in_tool(arguments: Mapping[str, Any]) -> list[Declared]:
    entries = arguments.get("test_changes")
    if not isinstance(entries, list):
        return []
    return [
        Declared(str(entry["test"]).strip(), str(entry["why"]).strip())
        for entry in entries
        if isinstance(entry, dict) and entry.get("test") and entry.get("why")
    ]
