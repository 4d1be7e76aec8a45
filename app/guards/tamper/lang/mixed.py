"""Files in a language with no reader of its own: a configuration, a fixture, a script, C#,
Swift or Scala tests. A test there may be written as in any language the rule reads (Scala's
`test("name")` reads as JavaScript's, a `.go.txt` fixture's `func TestX` as Go's), so every
reader reads it: a header is the first reader's that defines a test on it, and that reader
reads its body and cases; a line checks or skips when any reader says so. Blocks end at a
closing line, as in most languages.

Not read here: the skip markers that mean something else outside their language (RSpec's bare
`skip`, Mocha's `this.skip()`, node:test's options), and a language's own line comment:
`//` is taken for every file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.guards.tamper.lang.reader import Language, Reader, SkipKind, either, first_skip


@dataclass(frozen=True)
class Mixed(Language):
    readers: tuple[Language, ...] = field(default=())

    def at(self, header: str) -> Reader:
        return next((r for r in self.readers if r.test_name(header) is not None), self)

    def skip(self, text: str) -> SkipKind | None:
        return first_skip(self.markers, text, own=False)


def _joined(patterns: Sequence[re.Pattern[str] | None]) -> re.Pattern[str] | None:
    found = [pattern.pattern for pattern in patterns if pattern is not None]
    return either(*found) if found else None


def mixed(readers: Sequence[Language]) -> Mixed:
    """The reader of a file of no known language: `readers`, in order, read it together."""
    splitting = next(r for r in readers if r.split_header is not None)
    return Mixed(
        name="mixed",
        suffixes=(),
        comment="//",
        headers=tuple(pattern for reader in readers for pattern in reader.headers),
        assertions=either(*(reader.assertions.pattern for reader in readers)),
        markers=tuple(marker for reader in readers for marker in reader.markers),
        focus=_joined([reader.focus for reader in readers]),
        suite_skip=_joined([reader.suite_skip for reader in readers]),
        skipped=_joined([reader.skipped for reader in readers]),
        skipping_decorator=_joined([reader.skipping_decorator for reader in readers]),
        split_header=splitting.split_header,
        name_line=splitting.name_line,
        readers=tuple(readers),
    )
