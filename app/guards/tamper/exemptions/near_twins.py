"""Removed tests whose near twin stays: the same body but for one token, and that token gone.

A deprecated option removed with the test that passed it, beside a test that stays with the
same body but the option's new name (`origin_whitelist` for `permitted_origins`), or a server
dropped with the one test of a list that named it: everything the removed test checked, its
twin still checks, but the handling of that one token, and the change took that token out of
the code: the option (the server, the mode) is gone.

A removed test (every line of it deleted) is set aside when, with the whole trees:

- another test of the same file, in the same suite, stays whole (none of its lines changed) and
  runs (no skip, pending or xfail on it);
- their bodies (the lines under the headers; the titles may differ) are the same token for
  token but where the removed test has one token and the twin another, the same pair at every
  such place (`origin_whitelist` for `permitted_origins`, twice over is fine);
- the removed test's token is a word of four characters or more that the change deletes from
  source code (not tests), and no file of the head tree mentions it at all, prose aside (a
  changelog saying it was removed is no sign it stays).

A test differing by two things (the option and the expected status), by a token still in the
code, or whose twin is skipped or changed, is judged as before. Bare diffs get none of this:
it needs the trees.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from app.guards.changes import FileChange, Line
from app.guards.tamper.code_names import is_prose, is_source
from app.guards.tamper.definitions import Definition, definitions
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.text import enclosing
from app.guards.trees import TreeView

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"^[A-Za-z_]\w{3,}$")
_SKIPPED = re.compile(r"\b(?:skip|skipif|skipIf|pending|xfail|xit|xdescribe|xspecify)\b")


def near_twins(
    files: Sequence[FileChange],
    trees: TreeView,
    unmatched: Mapping[int, Sequence[Definition]],
    wholly_deleted: Callable[[int, Definition], bool],
) -> dict[int, set[int]]:
    """Per file, the header lines of the removed tests a near twin stands in for; a test is
    one the change deletes whole when `wholly_deleted(file, test)` says so."""
    found: dict[int, set[int]] = {}
    for index, defs in unmatched.items():
        change = files[index]
        if change.old_path is None or change.new_path is None:
            continue
        text = trees.text("base", change.old_path)
        if text is None:
            continue
        lines = text.split("\n")
        deleted = {line.number for line in change.removed}
        numbered = [Line(n + 1, t, n + 1) for n, t in enumerate(lines)]
        everything = definitions(numbered, len(lines), reader_for(change.old_path))
        kept = [d for d in everything if d.body is not None and not _touched(d, lines, deleted)]
        for removed in defs:
            if not wholly_deleted(index, removed):
                continue
            token = _twin_token(removed, lines, kept)
            if token is not None and _gone(files, trees, token):
                found.setdefault(index, set()).add(removed.line.number)
    return found


def _touched(definition: Definition, lines: Sequence[str], deleted: set[int]) -> bool:
    """Whether the change deletes (or rewrites) a line of the test with text on it."""
    end = definition.end or definition.line.number
    return any(definition.line.number <= n <= end and lines[n - 1].strip() for n in deleted)


def _twin_token(
    removed: Definition, lines: Sequence[str], kept: Sequence[Definition]
) -> str | None:
    """The one token by which a removed test differs from a kept, running twin in the same
    suite; None when there is no such twin."""
    if removed.body is None:
        return None
    body = _tokens(removed.body)
    suite = enclosing(lines, removed.line.number - 1)
    for twin in kept:
        if twin.body is None or enclosing(lines, twin.line.number - 1) != suite:
            continue
        if _SKIPPED.search(lines[twin.line.number - 1]) or any(
            _SKIPPED.search(text) for text in twin.body
        ):
            continue
        pair = _one_substitution(body, _tokens(twin.body))
        if pair is not None and _WORD.match(pair[0]):
            return pair[0]
    return None


def _tokens(body: Sequence[str]) -> list[str]:
    return [token for text in body for token in _TOKEN.findall(text)]


def _one_substitution(old: Sequence[str], new: Sequence[str]) -> tuple[str, str] | None:
    """The (old, new) token pair when the two lists differ only by it, at one or more places."""
    if len(old) != len(new):
        return None
    pairs = {(a, b) for a, b in zip(old, new, strict=True) if a != b}
    return pairs.pop() if len(pairs) == 1 else None


def _gone(files: Sequence[FileChange], trees: TreeView, token: str) -> bool:
    """Whether the change deletes the token from source code and nothing at the head but prose
    mentions it."""
    word = re.compile(rf"(?<![\w$]){re.escape(token)}(?![\w$])")
    deleted_from_source = any(
        is_source(change.old_path) and any(word.search(line.text) for line in change.removed)
        for change in files
    )
    if not deleted_from_source:
        return False
    hits = trees.search("head", [token]) + trees.mentions("head", [token])
    return all(is_prose(hit.path) for hit in hits if word.search(hit.text))
