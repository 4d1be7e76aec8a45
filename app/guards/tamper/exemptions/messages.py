"""Removed tests that expect a deleted definition's own message (`exemptions.set_aside`, rule
10).

The test calls a definition the change deletes whole (most of its body not added back) and
expects, word for word, a message of that definition's own body (a string of 30 characters or
more) that nothing at the head but prose holds: the test is that definition's, whatever other
class has its name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

from app.guards.tamper.code_names import STRING, is_prose
from app.guards.tamper.diffs import mostly_added
from app.guards.tamper.exemptions.evidence import Evidence, body_after
from app.guards.tamper.lang import reader_for
from app.guards.trees import TreeView

# A message a test expects word for word, long enough to be a deleted definition's own.
_MIN_MESSAGE = 30


class ExpectedMessages:
    """The definitions one change deletes whole, with their bodies, read once for every
    removed test."""

    def __init__(self, evidence: Evidence) -> None:
        self._evidence = evidence

    def went(self, lines: Sequence[str], position: int, path: str) -> bool:
        """Whether the test at `lines[position]` (its whole base file, at `path`) calls a
        definition the change deletes whole and expects, word for word, a message of that
        definition's own (a string of `_MIN_MESSAGE` characters or more in its deleted body),
        which nothing at the head but prose holds: a test of a method that expects its
        deprecation text went with it, whatever other class has a method of that name."""
        block = "\n".join(lines[position : reader_for(path).block_end(lines, position)])
        messages = {
            literal[1:-1]
            for literal in STRING.findall(block)
            if len(literal) - 2 >= _MIN_MESSAGE and "\\" not in literal
        }
        if not messages:
            return False
        trees = self._evidence.trees
        code = STRING.sub('""', block)
        for name, body in self._deleted_bodies:
            if not re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", code):
                continue
            said = [message for message in messages if message in body]
            if any(_unsaid(trees, message) for message in said):
                return True
        return False

    @cached_property
    def _deleted_bodies(self) -> list[tuple[str, str]]:
        """Each definition the change deletes from source code with its deleted body, when
        most of that body is not added back anywhere."""
        evidence = self._evidence
        found: list[tuple[str, str]] = []
        for name, records in evidence.deleted.items():
            for removed in records:
                body = body_after(evidence.files[removed.file], removed.line)
                if body and not mostly_added(body, evidence.added_lines):
                    found.append((name, "\n".join(body)))
        return found


def _unsaid(trees: TreeView, message: str) -> bool:
    """Whether no file of the head but prose holds the message."""
    hits = trees.search("head", [message]) + trees.mentions("head", [message])
    return all(is_prose(hit.path) for hit in hits if message in hit.text)
