"""The edit protocol: what an implementer's reply proposes, read strictly and never trusted.

Text blocks are always accepted, whatever protocol was asked for (small local models answer in
text):

    ### FILE: <path>       + a fenced block: the whole new content of the file
    ### APPEND: <path>     + a fenced block: text added at the end (newline hygiene applied)
    ### REPLACE: <path>    + a fenced block of hunks, each exactly
                             <<<<<<< SEARCH / old text / ======= / new text / >>>>>>> REPLACE
    ### DELETE: <path>     no block

A reply with no block whose last non-empty line is `ALREADY SATISFIED` says the ticket needs no
change. Where the provider supports tools the same four edits arrive as tool calls
(`EDIT_TOOLS`). A block that cannot be read is a `Problem` for the model to hear about, never an
exception: the reply is judged, not executed.

A fenced block closes at the last bare fence of its kind (same character, at least as long)
before the next header, so a Markdown file with fences of its own survives; a file holding a
line that looks like a header must be written through a tool call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from reviewers.model_client import ToolCall, ToolSpec

EditKind = Literal["file", "append", "replace", "delete"]

SATISFIED = "ALREADY SATISFIED"

_HEADER = re.compile(r"^ {0,3}###[ \t]+(FILE|APPEND|REPLACE|DELETE)[ \t]*:[ \t]*(.*?)[ \t]*$", re.I)
# A line that means to be a header but is not one (`### FILE path`, `### File - x`).
_NEAR_HEADER = re.compile(r"^ {0,3}#{2,4}[ \t]*(FILE|APPEND|REPLACE|DELETE)\b(?![ \t]*:)", re.I)
_OPENER = re.compile(r"^( *)(`{3,}|~{3,})[ \t]*([^`]*)$")
_SEARCH = re.compile(r"^<{5,}[ \t]*SEARCH[ \t]*$")
_DIVIDER = re.compile(r"^={5,}[ \t]*$")
_END = re.compile(r"^>{5,}[ \t]*REPLACE[ \t]*$")


@dataclass(frozen=True)
class Hunk:
    """One search/replace: `search` must occur exactly once in the file. A hunk of a text
    block holds whole lines (`lines`): it matches only where a line starts."""

    search: str
    replace: str
    lines: bool = False


@dataclass(frozen=True)
class Edit:
    kind: EditKind
    path: str
    content: str = ""  # file, append
    hunks: tuple[Hunk, ...] = ()  # replace

    def describe(self) -> str:
        return f"{self.kind.upper()} {self.path}"


@dataclass(frozen=True)
class Problem:
    """A block or tool call that could not be read, and why (told to the model)."""

    path: str | None
    reason: str


@dataclass(frozen=True)
class ParsedReply:
    edits: tuple[Edit, ...]
    problems: tuple[Problem, ...]
    satisfied: bool = False

    @property
    def proposes_nothing(self) -> bool:
        """No edit, no unreadable block, no claim of satisfaction: a reply to nudge."""
        return not self.edits and not self.problems and not self.satisfied


def is_edit_header(line: str) -> bool:
    """Whether `line` opens an edit block (`### FILE: ...` and the others)."""
    return _HEADER.match(line) is not None


def parse_reply(text: str, tool_calls: Sequence[ToolCall] = ()) -> ParsedReply:
    """Every edit `text` and `tool_calls` propose, in order, and every block that is unreadable."""
    edits, problems = parse_blocks(text)
    for call in tool_calls:
        edit, problem = edit_from_tool(call)
        if edit is not None:
            edits.append(edit)
        if problem is not None:
            problems.append(problem)
    satisfied = not edits and not problems and not tool_calls and _says_satisfied(text)
    return ParsedReply(tuple(edits), tuple(problems), satisfied)


def _says_satisfied(text: str) -> bool:
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    if not lines:
        return False
    return lines[-1].strip("*_`").rstrip(".").strip() == SATISFIED


def parse_blocks(text: str) -> tuple[list[Edit], list[Problem]]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    edits: list[Edit] = []
    problems: list[Problem] = []
    index = 0
    while index < len(lines):
        header = _HEADER.match(lines[index])
        if header is None:
            if _NEAR_HEADER.match(lines[index]):
                problems.append(
                    Problem(None, f"unreadable header {lines[index].strip()[:80]!r}: write "
                            "`### FILE: <path>` (or APPEND, REPLACE, DELETE) with the colon")
                )  # fmt: skip
            index += 1
            continue
        kind = header.group(1).lower()
        path = _unquote(header.group(2))
        index += 1
        if not path:
            problems.append(Problem(None, f"### {kind.upper()}: names no path"))
            continue
        if kind == "delete":
            edits.append(Edit("delete", path))
            continue
        body, index, problem = _fenced_body(lines, index, kind, path)
        if problem is not None:
            problems.append(problem)
            continue
        assert body is not None
        if kind == "replace":
            hunks, reason = parse_hunks(body)
            if reason is not None:
                problems.append(Problem(path, f"### REPLACE: {path}: {reason}"))
                continue
            edits.append(Edit("replace", path, hunks=hunks))
        else:
            content = "\n".join(body) + "\n" if body else ""
            edits.append(Edit("file" if kind == "file" else "append", path, content=content))
    return edits, problems


def _unquote(path: str) -> str:
    path = path.strip()
    for quote in ("`", '"', "'"):
        if len(path) >= 2 and path[0] == quote and path[-1] == quote:
            return path[1:-1].strip()
    return path


def _fenced_body(
    lines: list[str], index: int, kind: str, path: str
) -> tuple[list[str] | None, int, Problem | None]:
    """The lines of the fenced block starting at the next non-blank line; where to go on."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    opener = _OPENER.match(lines[index]) if index < len(lines) else None
    if opener is None:
        reason = f"### {kind.upper()}: {path} must be followed by a fenced block (```)"
        return None, index, Problem(path, reason)
    indent, fence = len(opener.group(1)), opener.group(2)
    start = index + 1
    stop = next((i for i in range(start, len(lines)) if _HEADER.match(lines[i])), len(lines))
    closer = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    closing = [i for i in range(start, stop) if closer.match(lines[i])]
    if not closing:
        reason = f"### {kind.upper()}: {path}: the fenced block is never closed"
        return None, stop, Problem(path, reason)
    end = closing[-1]
    body = [_dedent(line, indent) for line in lines[start:end]]
    return body, end + 1, None


def _dedent(line: str, indent: int) -> str:
    if indent == 0:
        return line
    strip = len(line) - len(line.lstrip(" "))
    return line[min(strip, indent) :]


def parse_hunks(body: Sequence[str]) -> tuple[tuple[Hunk, ...], str | None]:
    """The SEARCH/REPLACE hunks of a REPLACE block, or why they cannot be read."""
    hunks: list[Hunk] = []
    index = 0
    while index < len(body):
        line = body[index]
        if not line.strip():
            index += 1
            continue
        if not _SEARCH.match(line):
            return (), f"expected '<<<<<<< SEARCH', found {line.strip()[:60]!r}"
        divider = _next(body, index + 1, _DIVIDER)
        end = _next(body, (divider or index) + 1, _END) if divider is not None else None
        if divider is None or end is None:
            return (), "a hunk needs '<<<<<<< SEARCH', '=======' and '>>>>>>> REPLACE' in order"
        search = body[index + 1 : divider]
        if not any(part.strip() for part in search):
            return (), "the SEARCH text is empty (use ### APPEND: to add to a file)"
        replace = body[divider + 1 : end]
        hunks.append(Hunk(_joined(search), _joined(replace), lines=True))
        index = end + 1
    if not hunks:
        return (), "no '<<<<<<< SEARCH' hunk in the block"
    return tuple(hunks), None


def _next(body: Sequence[str], start: int, pattern: re.Pattern[str]) -> int | None:
    for index in range(start, len(body)):
        if _SEARCH.match(body[index]) and pattern is not _SEARCH:
            return None  # a new hunk began before this one ended
        if pattern.match(body[index]):
            return index
    return None


def _joined(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


# ---- tool calls -------------------------------------------------------------------------------

_PATH_PROPERTY = {"type": "string", "description": "the file's path relative to the repository"}

EDIT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "write_file",
        "Create a file, or replace a whole file with new content. Prefer append_file or "
        "replace_in_file for a change to part of an existing file.",
        {
            "type": "object",
            "properties": {
                "path": _PATH_PROPERTY,
                "content": {"type": "string", "description": "the file's whole new content"},
            },
            "required": ["path", "content"],
        },
    ),
    ToolSpec(
        "append_file",
        "Add text at the end of an existing file.",
        {
            "type": "object",
            "properties": {
                "path": _PATH_PROPERTY,
                "content": {"type": "string", "description": "the text to add at the end"},
            },
            "required": ["path", "content"],
        },
    ),
    ToolSpec(
        "replace_in_file",
        "Replace one exact piece of an existing file: `search` must occur exactly once.",
        {
            "type": "object",
            "properties": {
                "path": _PATH_PROPERTY,
                "search": {"type": "string", "description": "the exact text to replace"},
                "replace": {"type": "string", "description": "the text to put in its place"},
            },
            "required": ["path", "search", "replace"],
        },
    ),
    ToolSpec(
        "delete_file",
        "Delete a file.",
        {"type": "object", "properties": {"path": _PATH_PROPERTY}, "required": ["path"]},
    ),
)
_TOOL_FIELDS: Mapping[str, tuple[EditKind, tuple[str, ...]]] = {
    "write_file": ("file", ("path", "content")),
    "append_file": ("append", ("path", "content")),
    "replace_in_file": ("replace", ("path", "search", "replace")),
    "delete_file": ("delete", ("path",)),
}


def edit_from_tool(call: ToolCall) -> tuple[Edit | None, Problem | None]:
    """The edit a tool call asks for, or why it cannot be read."""
    spec = _TOOL_FIELDS.get(call.name)
    if spec is None:
        known = ", ".join(_TOOL_FIELDS)
        return None, Problem(None, f"unknown tool {call.name[:60]!r} (the tools are {known})")
    kind, fields = spec
    values = _string_fields(call.arguments, fields)
    if isinstance(values, str):
        return None, Problem(None, f"tool call {call.name}: {values}")
    path = values["path"].strip()
    if not path:
        return None, Problem(None, f"tool call {call.name}: path is empty")
    if kind == "delete":
        return Edit("delete", path), None
    if kind == "replace":
        if not values["search"]:
            reason = f"tool call {call.name}: search is empty (use append_file to add text)"
            return None, Problem(path, reason)
        return Edit("replace", path, hunks=(Hunk(values["search"], values["replace"]),)), None
    return Edit(kind, path, content=values["content"]), None


def _string_fields(arguments: Mapping[str, Any], fields: Sequence[str]) -> dict[str, str] | str:
    values: dict[str, str] = {}
    for name in fields:
        value = arguments.get(name)
        if not isinstance(value, str):
            return f"{name} must be a string" if name in arguments else f"{name} is missing"
        values[name] = value
    return values
