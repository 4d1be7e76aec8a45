"""Proposed edits, validated before they touch the worktree, then applied.

Every path a model proposes is checked in this order, and the first failure refuses it:
1. lexically (`app.guards.paths.unsafe_reason`): absolute, `..`, `.git`, control and invisible
   characters, backslashes, Windows and HFS+ aliases -> `unsafe-path`;
2. the mode: in `light` mode the implementer writes nothing -> `protected-path`;
3. on disk: every directory on the way is resolved, and a path that leads through a symlink
   out of the worktree, into its `.git`, or onto a protected path is refused -> `symlink`
   (a write to a symlink itself follows it and is judged by where it lands);
4. protected patterns, on the path as written and as resolved -> `protected-path`; in `pro`
   mode the edit is allowed and flagged for an admin's approval instead;
5. a path git ignores would be tested but never committed -> `unsafe-path`.

Then the edits are applied in order. An edit that cannot be applied (a SEARCH text not found,
or found twice; an APPEND to a file that does not exist) refuses the iteration as `edit`. The
caller resets the worktree when anything was refused: an iteration lands whole or not at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.guards.paths import ProtectedPaths, display, unsafe_reason
from app.loop.edits import Edit, Hunk
from app.repo_config import RepoConfig

MAX_EDIT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Refusal:
    """Why (part of) an iteration was not accepted; told to the model, kept in the record."""

    rule: str  # a guard rule id, or `edit` / `malformed` for the protocol's own refusals
    path: str | None
    reason: str

    def line(self) -> str:
        where = f" {display(self.path)}" if self.path else ""
        return f"- [{self.rule}]{where}: {self.reason}"


@dataclass(frozen=True)
class Flag:
    """Allowed, but a person must approve it (pro mode: a protected path was changed)."""

    rule: str
    path: str
    reason: str


@dataclass(frozen=True)
class Target:
    edit: Edit
    resolved: str  # the repository path the edit lands on


@dataclass
class Applied:
    """What applying one iteration's edits did."""

    refusals: list[Refusal] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # resolved paths written or deleted


class PathPolicy:
    """Where one repository's implementer may write."""

    def __init__(self, worktree: Path, config: RepoConfig) -> None:
        self.root = worktree
        self.real_root = Path(os.path.realpath(worktree))
        self.mode = config.mode
        self.protected = ProtectedPaths(config.guards.effective_protected_paths(config.mode))

    def check(self, edit: Edit) -> tuple[Target | None, Refusal | Flag | None]:
        """Where `edit` lands, or why it may not; a Flag when it may, with approval."""
        path = edit.path
        reason = unsafe_reason(path)
        if reason is not None:
            return None, Refusal("unsafe-path", path, reason)
        if self.mode == "light":
            return None, Refusal("protected-path", path, "mode is light: ourobot writes nothing")
        resolved, problem = self._resolve(path, follow_last=edit.kind != "delete")
        if problem is not None:
            return None, problem
        assert resolved is not None
        for candidate in dict.fromkeys((path, resolved)):
            match = self.protected.match(candidate)
            if match is None:
                continue
            via = "" if candidate == path else f" (it resolves to {display(resolved)})"
            reason = f"protected by the pattern {match.pattern!r}{via}"
            if self.mode == "pro":
                return Target(edit, resolved), Flag("protected-path", path, reason)
            rule = "protected-path" if candidate == path else "symlink"
            return None, Refusal(rule, path, reason)
        return Target(edit, resolved), None

    def _resolve(self, path: str, *, follow_last: bool) -> tuple[str | None, Refusal | None]:
        parts = path.split("/")
        parent = Path(os.path.realpath(self.root.joinpath(*parts[:-1])))
        target = parent / parts[-1]
        if follow_last and target.is_symlink():
            target = Path(os.path.realpath(target))
        if not target.is_relative_to(self.real_root) or target == self.real_root:
            return None, Refusal(
                "symlink", path, "leads through a symlink to a place outside the worktree"
            )
        resolved = target.relative_to(self.real_root).as_posix()
        reason = unsafe_reason(resolved)
        if reason is not None:
            return None, Refusal("symlink", path, f"resolves to {display(resolved)}: {reason}")
        return resolved, None


def apply_edits(
    policy: PathPolicy,
    edits: Sequence[Edit],
    ignored: Callable[[Sequence[str]], set[str]] | None = None,
) -> Applied:
    """Validate every edit, then (only if all are valid) apply them in order. `ignored` says
    which repository paths git ignores."""
    result = Applied()
    targets: list[Target] = []
    for edit in edits:
        target, verdict = policy.check(edit)
        if isinstance(verdict, Refusal):
            result.refusals.append(verdict)
        elif isinstance(verdict, Flag):
            result.flags.append(verdict)
        if target is not None:
            targets.append(target)
    hidden = ignored([t.resolved for t in targets if t.edit.kind != "delete"]) if ignored else set()
    for target in targets:
        if target.resolved in hidden:
            result.refusals.append(
                Refusal("unsafe-path", target.edit.path, "git ignores this path (.gitignore): "
                        "the tests would read it but it would never be committed")
            )  # fmt: skip
    if result.refusals:
        return result
    for target in targets:
        problem = _apply(policy.real_root, target)
        if problem is not None:
            result.refusals.append(Refusal("edit", target.edit.path, problem))
            return result
        result.paths.append(target.resolved)
    return result


def _apply(root: Path, target: Target) -> str | None:
    """Apply one validated edit; why it could not be, or None."""
    edit = target.edit
    file = root / target.resolved
    if file.is_dir() and not file.is_symlink():
        return "is a directory"
    if edit.kind == "delete":
        if not file.is_symlink() and not file.exists():
            return "does not exist"
        file.unlink()
        return None
    if edit.kind == "file":
        if len(edit.content.encode()) > MAX_EDIT_BYTES:
            return f"the new content is larger than {MAX_EDIT_BYTES} bytes"
        blocker = _file_on_the_way(root, target.resolved)
        if blocker is not None:
            return f"{blocker} is a file, not a directory"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(edit.content.encode())
        return None
    text, problem = _read_text(file)
    if problem is not None:
        hint = " (use ### FILE: to create a file)" if problem == "does not exist" else ""
        return problem + hint
    assert text is not None
    if edit.kind == "append":
        new = text + ("\n" if text and not text.endswith("\n") else "") + _ending(edit.content)
    else:
        new, problem = _replaced(text, edit.hunks)
        if problem is not None:
            return problem
    if len(new.encode()) > MAX_EDIT_BYTES:
        return f"the file would be larger than {MAX_EDIT_BYTES} bytes"
    file.write_bytes(new.encode())
    return None


def _file_on_the_way(root: Path, path: str) -> str | None:
    parts = path.split("/")
    for end in range(1, len(parts)):
        prefix = "/".join(parts[:end])
        if (root / prefix).is_file():
            return prefix
    return None


def _read_text(file: Path) -> tuple[str | None, str | None]:
    if not file.is_file():
        return None, "does not exist"
    data = file.read_bytes()
    if b"\0" in data:
        return None, "is a binary file"
    try:
        # newline="" semantics: CRLF files keep their line endings.
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "is not UTF-8 text"


def _ending(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def _replaced(text: str, hunks: Sequence[Hunk]) -> tuple[str, str | None]:
    for number, hunk in enumerate(hunks, start=1):
        which = f"hunk {number}: " if len(hunks) > 1 else ""
        search, replace = hunk.search, hunk.replace
        if "\r\n" in text and "\r\n" not in search:
            search, replace = search.replace("\n", "\r\n"), replace.replace("\n", "\r\n")
        starts = _occurrences(text, search, at_line_start=hunk.lines)
        count = len(starts)
        if count == 0 and search.endswith(("\n", "\r\n")) and not text.endswith("\n"):
            # The file's last line has no newline; the block's always does.
            stripped = search.rstrip("\r\n")
            if (
                text.endswith(stripped)
                and len(_occurrences(text, stripped, at_line_start=hunk.lines)) == 1
            ):
                text = text[: -len(stripped)] + replace.rstrip("\r\n")
                continue
        if (
            count == 0
            and replace.strip()
            and len(_occurrences(text, replace, at_line_start=hunk.lines)) == 1
        ):
            # Already applied (a model repeating the change the branch holds): nothing new.
            continue
        if count == 0:
            return text, (
                f"{which}the SEARCH text is not in the file; it must match the current file "
                "exactly, indentation and blank lines included"
            )
        if count > 1:
            return text, (
                f"{which}the SEARCH text occurs {count} times; include more lines so that it "
                "occurs exactly once"
            )
        text = text[: starts[0]] + replace + text[starts[0] + len(search) :]
    return text, None


def _occurrences(text: str, search: str, *, at_line_start: bool) -> list[int]:
    found: list[int] = []
    start = text.find(search)
    while start != -1:
        if not at_line_start or start == 0 or text[start - 1] == "\n":
            found.append(start)
        start = text.find(search, start + 1)
    return found
