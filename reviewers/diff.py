"""A change as files and hunks, parsed from `git diff`, and rendered for a reviewer.

Paths come from `git diff --name-status -z` (exact bytes, no quoting) and are paired with the
patch's `diff --git` sections, which git emits in the same order. Each hunk is rendered with
the new file's line numbers, so a reviewer's `path:line` points at a real line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

Status = Literal["added", "modified", "deleted", "renamed", "copied", "type-changed"]

_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied",
           "T": "type-changed"}  # fmt: skip
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)")
NUMBER_WIDTH = 6


class DiffParseError(ValueError):
    """git's output did not have the shape this parser relies on."""


@dataclass(frozen=True)
class ChangedFile:
    path: str  # the new path (the old one for a deletion)
    status: Status
    old_path: str | None = None  # renames and copies


@dataclass(frozen=True)
class Hunk:
    header: str
    old_start: int
    new_start: int
    lines: tuple[str, ...]

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))

    @property
    def new_range(self) -> tuple[int, int]:
        """First and last line of the new file this hunk covers."""
        count = sum(1 for line in self.lines if line[:1] in (" ", "+"))
        return self.new_start, max(self.new_start, self.new_start + count - 1)

    def render(self) -> str:
        out = [self.header]
        number = self.new_start
        for line in self.lines:
            marker = line[:1]
            if marker in (" ", "+"):
                out.append(f"{number:>{NUMBER_WIDTH}} {line}")
                number += 1
            else:
                out.append(f"{'':>{NUMBER_WIDTH}} {line}")
        return "\n".join(out) + "\n"


@dataclass(frozen=True)
class FileDiff:
    file: ChangedFile
    hunks: tuple[Hunk, ...]
    binary: bool = False

    @property
    def path(self) -> str:
        return self.file.path

    @property
    def added(self) -> int:
        return sum(hunk.added for hunk in self.hunks)

    @property
    def removed(self) -> int:
        return sum(hunk.removed for hunk in self.hunks)

    def commentable_lines(self) -> frozenset[int]:
        """New-file lines inside the hunks: where an inline review comment can be placed."""
        lines: set[int] = set()
        for hunk in self.hunks:
            number = hunk.new_start
            for line in hunk.lines:
                if line[:1] in (" ", "+"):
                    lines.add(number)
                    number += 1
        return frozenset(lines)

    def describe(self) -> str:
        """`modified, +3 -1` / `renamed from a.py, +0 -0` / `binary, added`."""
        status: str = self.file.status
        if self.file.old_path:
            status = f"{status} from {self.file.old_path}"
        if self.binary:
            return f"binary, {status}; content not shown"
        return f"{status}, +{self.added} -{self.removed}"


def parse_name_status(output: str) -> list[ChangedFile]:
    """`git diff --name-status -z` output as changed files."""
    tokens = output.split("\0")
    if tokens and tokens[-1] == "":
        tokens.pop()
    files: list[ChangedFile] = []
    index = 0
    while index < len(tokens):
        code = tokens[index][:1]
        if code not in _STATUS:
            raise DiffParseError(f"unexpected name-status entry {tokens[index]!r}")
        status = cast(Status, _STATUS[code])
        if code in "RC":
            if index + 2 >= len(tokens):
                raise DiffParseError("truncated rename entry")
            files.append(ChangedFile(tokens[index + 2], status, old_path=tokens[index + 1]))
            index += 3
        else:
            if index + 1 >= len(tokens):
                raise DiffParseError("truncated name-status entry")
            files.append(ChangedFile(tokens[index + 1], status))
            index += 2
    return files


def split_patch(patch: str) -> list[list[str]]:
    """The patch cut into one list of lines per `diff --git` section."""
    sections: list[list[str]] = []
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
        elif line:
            raise DiffParseError(f"text before the first file: {line[:60]!r}")
    return sections


def parse_section(changed: ChangedFile, lines: list[str]) -> FileDiff:
    hunks: list[Hunk] = []
    binary = False
    current: list[str] | None = None
    header = ""
    starts = (0, 0)
    for line in lines[1:]:
        match = _HUNK.match(line) if line.startswith("@@") else None
        if match:
            if current is not None:
                hunks.append(Hunk(header, starts[0], starts[1], tuple(current)))
            header, starts, current = line, (int(match.group(1)), int(match.group(3))), []
        elif current is not None:
            if line[:1] in (" ", "+", "-", "\\"):
                current.append(line)
            elif line:
                raise DiffParseError(f"{changed.path}: unexpected line in a hunk: {line[:60]!r}")
        elif line.startswith("Binary files ") and line.endswith(" differ"):
            binary = True
    if current is not None:
        hunks.append(Hunk(header, starts[0], starts[1], tuple(current)))
    return FileDiff(file=changed, hunks=tuple(hunks), binary=binary)


def parse_diff(name_status: str, patch: str) -> list[FileDiff]:
    """Files and hunks from the two outputs of one `git diff` (same revisions and options)."""
    files = parse_name_status(name_status)
    sections = split_patch(patch)
    if len(files) != len(sections):
        raise DiffParseError(
            f"git listed {len(files)} changed files but the patch has {len(sections)} sections"
        )
    return [parse_section(file, section) for file, section in zip(files, sections, strict=True)]


def file_heading(diff: FileDiff, note: str = "") -> str:
    extra = f"; {note}" if note else ""
    return f"=== {diff.path} ({diff.describe()}{extra}) ===\n"
