"""Path rules: canonical forms, unsafe paths, protected-path matching and symlink targets.

Filesystems disagree about which names are the same file. Windows folds case, ignores trailing
dots and spaces and reads `name::$DATA` as `name`; macOS (HFS+) folds case and ignores
zero-width characters; both have 8.3-style or normalised aliases. A guard that compares names
byte for byte lets `.GitHub/Workflows/x.yml` or `.git\u200bhub/workflows/x.yml` slip past, so
every comparison here happens on a canonical form that removes those differences, and any path
that only a lenient filesystem would map onto something else is itself reported.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pathspec

# Code points that renderers and HFS+ ignore (Unicode Default_Ignorable_Code_Point plus the
# bidirectional controls); everything of general category Cf is treated the same way.
_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_SHORT_NAME = re.compile(r"[^~]{1,6}~[0-9]+(\.[^.]{0,3})?")
_NTFS_STREAM = re.compile(r":(\$|[^:]*:\$)")
_DRIVE = re.compile(r"[A-Za-z]:")
# A name a probe child can never collide with a real pattern by accident.
_GLOB_CHARS = frozenset("*?[]!\\")


def is_ignorable(char: str) -> bool:
    code = ord(char)
    if unicodedata.category(char) == "Cf":
        return True
    return any(low <= code <= high for low, high in _IGNORABLE_RANGES)


def is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029)


def strip_ignorable(text: str) -> str:
    return "".join(char for char in text if not is_ignorable(char))


def canonical_component(component: str, *, streams: bool = True) -> str:
    """One path component as a case-insensitive, normalising filesystem would see it.

    With `streams`, an NTFS stream suffix is dropped as Windows would (`.git::$INDEX_ALLOCATION`
    and `.git:$DATA` open `.git`); without, the colon is kept as POSIX filesystems keep it.
    """
    text = unicodedata.normalize("NFKC", component)
    text = strip_ignorable(text)
    text = unicodedata.normalize("NFKC", text.casefold())
    if streams and ":" in text:
        text = text.split(":", 1)[0]
    text = text.rstrip(". ") if text not in (".", "..") else text
    if text == "git~1":
        return ".git"
    return text


def canonical_path(path: str, *, streams: bool = True) -> str:
    """The canonical form used for every comparison: `/`-separated canonical components."""
    parts = path.replace("\\", "/").split("/")
    canonical = [canonical_component(part, streams=streams) for part in parts]
    return "/".join(part for part in canonical if part not in ("", "."))


def canonical_forms(path: str) -> tuple[str, ...]:
    """Every name `path` may stand for: as Windows reads it and as a POSIX filesystem does."""
    return tuple(dict.fromkeys((canonical_path(path), canonical_path(path, streams=False))))


def display(text: str, limit: int = 200) -> str:
    """Untrusted text made safe to print: invisible and control characters become escapes."""
    shown = "".join(
        char if char.isprintable() and not is_ignorable(char) else f"\\u{ord(char):04x}"
        for char in text
    )
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def unsafe_reason(path: str) -> str | None:
    """Why `path` must not appear in a change, or None when it is an ordinary relative path."""
    if not path:
        return "empty path"
    for char in path:
        if is_control(char):
            return f"control character U+{ord(char):04X} in the path"
        if 0xD800 <= ord(char) <= 0xDFFF:
            return "the path is not valid UTF-8"
    if "\\" in path:
        return "backslash in the path (a directory separator on Windows)"
    if path.startswith("/") or _DRIVE.match(path):
        return "absolute path"
    for char in path:
        if is_ignorable(char):
            return f"invisible Unicode character U+{ord(char):04X} in the path"
    for part in path.split("/"):
        reason = _unsafe_component(part)
        if reason is not None:
            return reason
    return None


def _unsafe_component(part: str) -> str | None:
    if part == "":
        return "empty path component ('//' or a trailing '/')"
    if part in (".", ".."):
        return f"'{part}' component"
    canonical = canonical_component(part)
    if canonical in (".", "..", ""):
        return f"alias of '{canonical or '.'}' in component {display(part)!r}"
    if canonical == ".git":
        return f"'.git' component ({display(part)!r})"
    if _NTFS_STREAM.search(part):
        return f"NTFS stream name in component {display(part)!r}"
    if part[-1] in ". ":
        return f"trailing dot or space in component {display(part)!r} (a Windows alias)"
    if _SHORT_NAME.fullmatch(part):
        return f"8.3 short-name alias in component {display(part)!r}"
    if canonical.startswith(".") and part.casefold() != canonical:
        return f"component {display(part)!r} is an alias of the dot-file {canonical!r}"
    return None


@dataclass(frozen=True)
class ProtectedMatch:
    path: str
    pattern: str


class ProtectedPaths:
    """Gitignore-style protected patterns, matched against canonical paths.

    A path also counts as protected when it is a directory on the way to a protected pattern
    (`.github`, `.github/workflows`): replacing that directory with a file or a symlink would
    move everything below it.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: tuple[str, ...] = tuple(patterns)
        canonical = [_canonical_pattern(pattern) for pattern in self.patterns]
        self._spec = pathspec.GitIgnoreSpec.from_lines(canonical)
        self._ancestors: dict[str, str] = {}
        for original, pattern in zip(self.patterns, canonical, strict=True):
            for ancestor in _literal_ancestors(pattern):
                self._ancestors.setdefault(ancestor, original)

    def match(self, path: str) -> ProtectedMatch | None:
        for canonical in canonical_forms(path):
            if not canonical:
                continue
            result = self._spec.check_file(canonical)
            if result.include and result.index is not None:
                return ProtectedMatch(path, self.patterns[result.index])
            if canonical in self._ancestors:
                return ProtectedMatch(path, self._ancestors[canonical])
        return None


def _canonical_pattern(pattern: str) -> str:
    text = unicodedata.normalize("NFKC", strip_ignorable(pattern.strip()))
    return unicodedata.normalize("NFKC", text.casefold())


def _literal_ancestors(pattern: str) -> list[str]:
    """Directories a pattern lives under, as far as they are spelled without wildcards."""
    dir_only = pattern.endswith("/")
    body = pattern.strip("/")
    if "/" not in body and not pattern.startswith("/") and not dir_only:
        return []  # an unanchored name matches at any depth; it has no fixed directory
    parts = body.split("/")
    literal: list[str] = []
    for part in parts:
        if any(char in _GLOB_CHARS for char in part):
            break
        literal.append(part)
    fully_literal = len(literal) == len(parts)
    count = len(literal) if (dir_only or not fully_literal) else len(literal) - 1
    return ["/".join(literal[:end]) for end in range(1, count + 1)]


@dataclass(frozen=True)
class LinkResolution:
    """Where a symlink points: a repository path, or why it leaves or cannot be followed."""

    target: str | None
    problem: str | None


_MAX_HOPS = 40


def resolve_link(link_path: str, target: str, links: Mapping[str, str]) -> LinkResolution:
    """Resolve `target` (the link's content) relative to the link's directory, lexically,
    following links in `links` (repository path -> target) as a checkout would."""
    if not target:
        return LinkResolution(None, "the link target is empty")
    if "\0" in target or any(is_control(char) for char in target):
        return LinkResolution(None, "the link target contains control characters")
    if "\\" in target:
        return LinkResolution(None, "the link target contains a backslash")
    if target.startswith("/") or _DRIVE.match(target):
        return LinkResolution(None, "the link target is an absolute path outside the repository")
    stack = link_path.split("/")[:-1]
    pending = target.split("/")
    hops = 0
    # A case-insensitive checkout (Windows, macOS) reaches `Docs` through `docs`: links are
    # looked up by the canonical form of the path walked, as such a filesystem would.
    folded = {canonical_path(path): (path, value) for path, value in links.items()}
    own = canonical_path(link_path)
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if canonical_component(part) in (".", "..") and part != "..":
            return LinkResolution(None, f"the link target uses an alias of '..' ({display(part)})")
        if part == "..":
            if not stack:
                return LinkResolution(None, "the link target resolves outside the repository")
            stack.pop()
            continue
        stack.append(part)
        here = canonical_path("/".join(stack))
        if here in folded and here != own:
            hops += 1
            if hops > _MAX_HOPS:
                return LinkResolution(None, "the link target is a chain of too many links")
            next_target = folded[here][1]
            if next_target.startswith("/") or "\\" in next_target or _DRIVE.match(next_target):
                return LinkResolution(None, "the link target leads through an absolute link")
            stack.pop()
            pending = next_target.split("/") + pending
    return LinkResolution("/".join(stack), None)
