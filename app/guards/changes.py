"""What the guard rules read: a set of file changes, however it was obtained.

Both sources (a unified diff given to us, or two revisions of a repository whose diff we compute
ourselves) produce this same plain data, so every rule is one function over it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"

Status = Literal["added", "deleted", "modified", "renamed", "copied"]
Source = Literal["repo", "diff", "worktree"]


# Shorter lines (`}`, `pass`, `else:`, `end`) say too little to tell one piece of code from
# another: a change, a move or a rename is shown by the lines that say something.
_MIN_TELLING = 8
# A comment after code on the same line: `x = 1  # why`, `return; // why`.
_TRAILING_COMMENT = re.compile(r"\s+(?:#|//)\s.*$")


def is_telling(text: str) -> bool:
    """Whether a line says something: eight characters or more once stripped, one of them a
    letter or digit (not a brace, a blank or a one-word line)."""
    stripped = text.strip()
    return len(stripped) >= _MIN_TELLING and any(char.isalnum() for char in stripped)


def restated(text: str) -> str:
    """A line as a restatement compares it: no indentation, trailing comment or `;`, and its
    spaces collapsed (a formatter's `return` made `return;` says the same)."""
    code = _TRAILING_COMMENT.sub("", text)
    return " ".join(code.strip().rstrip(";").split())


@dataclass(frozen=True)
class Line:
    """One added or removed line of text.

    `number` is the line's number on its own side (new file for added lines, old file for
    removed ones); `anchor` is a line of the new file near the change, for annotations.
    """

    number: int
    text: str
    anchor: int


@dataclass(frozen=True)
class FileChange:
    status: Status
    old_path: str | None
    new_path: str | None
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False
    added: tuple[Line, ...] = ()
    removed: tuple[Line, ...] = ()
    # Whole-file line counts when known (always with --repo; in a diff only when it shows them).
    old_line_count: int | None = None
    new_line_count: int | None = None
    # How many of the old side's lines say something (`is_telling`); known only where the old
    # side was read whole (repository mode): what a rewrite of the file is measured against.
    old_telling_count: int | None = None
    # The new side's link target, when the new side is a symlink and its content is known.
    link_target: str | None = None
    # Bytes of binary content on the new side (diff mode: unknown, 0).
    binary_bytes: int = 0
    # The new side's unchanged lines a diff shows around the change (diff mode only: with the
    # repository, the whole file is read instead).
    context: tuple[Line, ...] = ()
    # A binary new side's printable runs that its old side did not hold (repository mode; a
    # diff shows no binary content): where the secret rule looks for credentials in it.
    strings: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """The path to report: where the file is now, or where it was if it is gone."""
        path = self.new_path if self.new_path is not None else self.old_path
        return path or ""

    @property
    def paths(self) -> tuple[str, ...]:
        found = [p for p in (self.old_path, self.new_path) if p is not None]
        return tuple(dict.fromkeys(found))

    @property
    def added_count(self) -> int:
        return len(self.added)

    @property
    def removed_count(self) -> int:
        return len(self.removed)

    @property
    def is_symlink(self) -> bool:
        return self.new_mode == SYMLINK_MODE

    @property
    def touches_gitlink(self) -> bool:
        return GITLINK_MODE in (self.old_mode, self.new_mode)

    @property
    def mode_changed(self) -> bool:
        return (
            self.old_mode is not None
            and self.new_mode is not None
            and self.old_mode != self.new_mode
        )


@dataclass(frozen=True)
class ChangeSet:
    """Every file change between two states, plus what is known about the whole diff."""

    files: tuple[FileChange, ...]
    source: Source
    diff_bytes: int
    base: str | None = None
    head: str | None = None
    # The commit the diff starts from when it is not `base`: their merge base (a PR's changes).
    merge_base: str | None = None
    # Set when the diff could not be evaluated (too large, unavailable, truncated): a failure.
    unevaluable: str | None = None
    # Symlinks in the new state (path -> target), for following chains of links.
    links: Mapping[str, str] = field(default_factory=dict)

    @property
    def added_lines(self) -> int:
        return sum(change.added_count for change in self.files)

    @property
    def deleted_lines(self) -> int:
        return sum(change.removed_count for change in self.files)

    @property
    def binary_files(self) -> int:
        return sum(1 for change in self.files if change.binary)
