"""Reading a unified diff (git's or plain `diff -u`) into a `ChangeSet`, with unidiff.

unidiff gives hunks, modes and binary markers; git's extended headers it keeps as raw lines
(`rename from`, `copy to`, ...) are read here, and git's C-style quoted paths are unquoted, so a
path is compared exactly as git would write it to disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from app.errors import UserError
from app.guards.changes import GITLINK_MODE, SYMLINK_MODE, ChangeSet, FileChange, Line, Status
from app.guards.paths import display

_DEV_NULL = "/dev/null"
_QUOTED_PAIR = re.compile(r'("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")')
_EXTENDED = re.compile(r"^(rename from|rename to|copy from|copy to) (.*)$")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
# git's default context; used when a diff does not show its own width (see _old_length).
_DEFAULT_CONTEXT = 3


def parse_diff(data: bytes) -> ChangeSet:
    """Parse a unified diff; an unreadable one is a `UserError` (bad input, exit code 2)."""
    text = data.decode("utf-8", errors="replace")
    try:
        patch = PatchSet(text)
    except (UnidiffParseError, UnicodeError, ValueError, AssertionError) as exc:
        raise UserError(f"unreadable diff: {_one_line(str(exc))}") from None
    if text.strip() and not len(patch):
        raise UserError("unreadable diff: no file changes found (is it a unified diff?)")
    files = tuple(_file_change(patched) for patched in patch)
    links = {c.path: c.link_target for c in files if c.is_symlink and c.link_target is not None}
    return ChangeSet(files=files, source="diff", diff_bytes=len(data), links=links)


def unquote_git_path(path: str) -> str:
    """`"a/\\303\\244"` -> `a/ä`: git quotes paths with unusual bytes using C escapes."""
    if not (len(path) >= 2 and path.startswith('"') and path.endswith('"')):
        return path
    body = path[1:-1]
    out = bytearray()
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            out.extend(char.encode("utf-8", errors="surrogateescape"))
            index += 1
            continue
        following = body[index + 1 : index + 2]
        octal = body[index + 1 : index + 4]
        if len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(int(octal, 8) & 0xFF)
            index += 4
        elif following in _ESCAPES:
            out.append(_ESCAPES[following])
            index += 2
        else:
            out.extend(b"\\")
            index += 1
    return out.decode("utf-8", errors="surrogateescape")


@dataclass
class _Header:
    rename_from: str | None = None
    rename_to: str | None = None
    copy_from: str | None = None
    copy_to: str | None = None


def _header(patched: PatchedFile) -> _Header:
    header = _Header()
    for raw in patched.patch_info or ():
        match = _EXTENDED.match(raw.rstrip("\n"))
        if match is None:
            continue
        key, value = match.group(1).replace(" ", "_"), unquote_git_path(match.group(2))
        setattr(header, key, value)
    return header


def _strip_component(name: str, *, git: bool) -> str:
    """`name` as `git apply` (default `-p1`) writes it: the first component removed, whatever
    its letters (`s/.github/x.yml` lands on `.github/x.yml`). A git diff's name without one is
    refused by git apply, so it is refused here; a traditional diff's is kept as git keeps it."""
    if "/" in name:
        return name.split("/", 1)[1]
    if git:
        raise UserError(
            f"ambiguous diff: {display(name)!r} has no leading component for -p1 to remove"
        )
    return name


def _git_header_pair(line: str) -> tuple[str, str] | None:
    """The two names of a `diff --git A B` line, or None when spaces leave them ambiguous.
    Unquoted, the line can be split only where both halves name the same path once their first
    component is removed (git's own reading); a rename's differing names come from its
    `rename from`/`rename to` lines instead."""
    rest = line.rstrip("\n")[len("diff --git ") :]
    quoted = _QUOTED_PAIR.fullmatch(rest)
    if quoted is not None:
        return unquote_git_path(quoted.group(1)), unquote_git_path(quoted.group(2))
    splits = [
        (rest[:index], rest[index + 1 :])
        for index, char in enumerate(rest)
        if char == " " and _after_first(rest[:index]) == _after_first(rest[index + 1 :])
    ]
    if len(splits) == 1:
        return splits[0]
    if not splits and rest.count(" ") == 1:
        first, second = rest.split(" ")
        return first, second
    return None


def _after_first(name: str) -> str | None:
    return name.split("/", 1)[1] if "/" in name else None


def _paths(patched: PatchedFile, header: _Header) -> tuple[str | None, str | None]:
    info = list(patched.patch_info or ())
    git = bool(info) and info[0].startswith("diff --git ")
    source = unquote_git_path(patched.source_file or "")
    target = unquote_git_path(patched.target_file or "")
    if git:
        return _git_paths(patched, info[0], source, target, header)
    old = None if source == _DEV_NULL else _strip_component(source, git=False)
    new = None if target == _DEV_NULL else _strip_component(target, git=False)
    if old is not None and new is not None:
        # git apply writes one file for a traditional diff: the new name, or the old one when
        # the new only adds to it (`x.c` over `x.c.orig`'s reverse, `file~`).
        old = new = old if len(old) < len(new) and new.startswith(old) else new
    return old, new


def _git_paths(
    patched: PatchedFile, line: str, source: str, target: str, header: _Header
) -> tuple[str | None, str | None]:
    pair = _git_header_pair(line)
    renamed = header.rename_from or header.copy_from
    if pair is None and renamed is None:
        raise UserError(f"ambiguous diff: cannot tell the two paths of {display(line.strip())!r}")
    old: str | None = None
    new: str | None = None
    if pair is not None:
        old, new = (_strip_component(name, git=True) for name in pair)
        # unidiff reads the names of the `diff --git` line greedily and, when hunks follow,
        # checked its `+++` line against them; git apply insists both agree with its reading.
        shown_sides = ((old, source), (new, target)) if len(patched) else ()
        for side, shown in shown_sides:
            if shown != _DEV_NULL and _strip_component(shown, git=True) != side:
                raise UserError(f"inconsistent diff: {display(line.strip())!r} names other paths")
    if source == _DEV_NULL:
        old = None
    if target == _DEV_NULL:
        new = None
    old = header.rename_from or header.copy_from or old
    new = header.rename_to or header.copy_to or new
    return old, new


def _status(old: str | None, new: str | None, header: _Header) -> Status:
    if old is None:
        return "added"
    if new is None:
        return "deleted"
    if header.copy_from is not None:
        return "copied"
    if header.rename_from is not None or old != new:
        return "renamed"
    return "modified"


def _file_change(patched: PatchedFile) -> FileChange:
    header = _header(patched)
    old_path, new_path = _paths(patched, header)
    status = _status(old_path, new_path, header)
    # A gitlink's "Subproject commit <sha>" line is a pointer, not a line of the file tree.
    gitlink = GITLINK_MODE in (patched.source_mode, patched.target_mode)
    added, removed, context = ([], [], []) if gitlink else _lines(patched)
    old_count = _old_length(patched, status, len(removed))
    new_count: int | None = None
    if status == "added":
        new_count = len(added)
    elif status == "deleted":
        new_count = 0
    elif old_count is not None:
        new_count = old_count - len(removed) + len(added)
    link_target = None
    if patched.target_mode == SYMLINK_MODE and added:
        link_target = "\n".join(line.text for line in added)
    return FileChange(
        status=status,
        old_path=old_path,
        new_path=new_path,
        old_mode=None if status == "added" else patched.source_mode,
        new_mode=None if status == "deleted" else patched.target_mode,
        binary=bool(patched.is_binary_file),
        added=tuple(added),
        removed=tuple(removed),
        old_line_count=old_count,
        new_line_count=new_count,
        link_target=link_target,
        context=tuple(context),
    )


def _lines(patched: PatchedFile) -> tuple[list[Line], list[Line], list[Line]]:
    added: list[Line] = []
    removed: list[Line] = []
    context: list[Line] = []
    for hunk in patched:
        position = max(hunk.target_start, 1)
        for line in hunk:
            text = line.value[:-1] if line.value.endswith("\n") else line.value
            if line.is_added:
                number = line.target_line_no or position
                added.append(Line(number, text, number))
                position = number + 1
            elif line.is_removed:
                removed.append(Line(line.source_line_no or 0, text, position))
            elif line.is_context and line.target_line_no:
                context.append(Line(line.target_line_no, text, line.target_line_no))
                position = line.target_line_no + 1
    return added, removed, context


def _old_length(patched: PatchedFile, status: Status, removed: int) -> int | None:
    """The old file's length, when the diff proves it.

    A deleted file shows every line. Otherwise the last hunk reaches the end of the file when it
    has fewer trailing context lines than the diff's context width; without that proof the
    length is unknown and the shrink rule cannot judge the file from this diff.
    """
    if status == "deleted":
        return removed if len(patched) else None
    if status == "added" or not len(patched):
        return 0 if status == "added" else None
    width = _context_width(patched)
    last = patched[-1]
    trailing = 0
    for line in reversed(last):
        if line.is_context:
            trailing += 1
        elif line.is_added or line.is_removed:
            break
    if trailing < width:
        return int(last.source_start + last.source_length - 1)
    return None


def _context_width(patched: PatchedFile) -> int:
    widths = []
    for hunk in patched:
        if hunk.source_start <= 1:
            continue  # leading context is cut short by the start of the file
        leading = 0
        for line in hunk:
            if not line.is_context:
                break
            leading += 1
        widths.append(leading)
    return max(widths) if widths else _DEFAULT_CONTEXT


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "parse error"
    return first[:200]
