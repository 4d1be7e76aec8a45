"""Removed tests of a deleted test file whose source file went with it (`exemptions.set_aside`,
rule 5): `jwt_test.go` and `jwt.go`, `ordered_hash_spec.rb` or `spec_logger.rb` and
`logger.rb`, `test_lru.py` and `lru.py`, `test/wrap.js` and `lib/wrap.js`.

The deleted test file is paired by its stem with a source file the change deletes, most of
whose lines are not added back, and which is named after a name it defined, however short or
common (`JWT`, `Logger`), that is gone. Gone here is rule 2's "no longer provided, not renamed
or moved" but that a name that took its place in a retargeted line counts as a rename only
when the project defines it (`Hash` for `OrderedHash` is no code of the project's:
`evidence.PAIRED`). A test of the file then goes if it uses (by rule 3's reading, or in the
header of a suite around it) a name the source file defined (a distinctive one, or the one it
is named after) that is gone, and every such name it uses is gone, a class or module the file
only opened around what went, or a method of a class that went (other classes' methods of
that name are not its code) that the change does not define anew. Whatever else it calls,
when it is named after the file: its name or a suite header around it holds the file's stem
(`TestJWT...`, `describe Rack::Logger`); a test of other code that builds a helper of the file
on its way is not the file's test.

Everything here is text; what it cannot read is taken to provide the name.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Sequence

from app.guards.changes import FileChange
from app.guards.tamper.code_names import (
    defined_names,
    is_distinctive,
    is_reserved,
    is_source,
)
from app.guards.tamper.definitions import Definition
from app.guards.tamper.diffs import mostly_added
from app.guards.tamper.exemptions.evidence import CLASS, PAIRED, Evidence, assigns, decorators
from app.guards.tamper.lang import MIXED, reader_for
from app.guards.tamper.lang.go import GO
from app.guards.tamper.lang.text import enclosing
from app.guards.tamper.test_files import collects_tests, is_test_path

# A test file's stem by its runner's convention: `test_x.py`, `x_test.go`, `x_spec.rb`,
# `spec_x.rb`, `x.test.ts`, `XTest.java`.
_TEST_STEMS = (
    re.compile(r"^(?:test|spec)_(?P<n>\w+)\.(?:py|rb)$"),
    re.compile(r"^(?P<n>\w+)_(?:test|spec)\.(?:py|go|rb|exs?)$"),
    re.compile(r"^(?P<n>[\w$.-]+)\.(?:test|spec)\.[cm]?[jt]sx?$"),
    re.compile(r"^(?P<n>\w+)Tests?\.(?:java|kt|cs|swift|scala)$"),
)
# A script mocha or ava collects for the folder it is in (`test/wrap.js`): its name is its stem.
_FOLDER_SCRIPT = re.compile(r"^(?P<n>[\w$.-]+)\.[cm]?[jt]sx?$")


def test_stem(path: str) -> str | None:
    """The name a test file is named after (`jwt` for `middleware/jwt_test.go`)."""
    if not is_test_path(path):
        return None
    base = posixpath.basename(path)
    for pattern in _TEST_STEMS:
        match = pattern.match(base)
        if match is not None:
            return match["n"]
    match = _FOLDER_SCRIPT.match(base)
    return match["n"] if match is not None and collects_tests(path) else None


def source_stem(path: str) -> str | None:
    """A source file's name without its suffix (`logger` for `lib/rack/logger.rb`)."""
    return posixpath.splitext(posixpath.basename(path))[0] if is_source(path) else None


def paired_sources(files: Sequence[FileChange], index: int) -> list[int]:
    """The source files the change deletes that the deleted test file `files[index]` is named
    after: the same stem, the same language and, for Go, whose tests see only their own
    package, the same folder."""
    test = files[index]
    stem = test_stem(test.old_path or "") if test.status == "deleted" else None
    if stem is None or test.old_path is None:
        return []
    return [
        number
        for number, change in enumerate(files)
        if change.status == "deleted"
        and change.old_path is not None
        and source_stem(change.old_path) == stem
        and _same_language(change.old_path, test.old_path)
        and (
            reader_for(test.old_path) is not GO
            or posixpath.dirname(change.old_path) == posixpath.dirname(test.old_path)
        )
    ]


def _same_language(one: str, other: str) -> bool:
    """Whether two files are in one language: read by the same reader (`.ts` and `.js`,
    `.pyi` and `.py`), or, in a language with no reader, of the same suffix."""
    reader = reader_for(one)
    if reader is MIXED:
        return posixpath.splitext(one)[1] == posixpath.splitext(other)[1]
    return reader is reader_for(other)


def named_after(name: str, stem: str) -> bool:
    """Whether a definition is the one its file is named after, as a class or constant would
    be spelled (`JWT` in `jwt.go`, `OrderedHash` in `ordered_hash.rb`)."""
    return name.replace("_", "").lower() == re.sub(r"[_-]", "", stem).lower()


class PairedFiles:
    """The source files the deleted test files of one change pair with, read once."""

    def __init__(self, evidence: Evidence) -> None:
        self._evidence = evidence
        self._pair_names_of: dict[int, frozenset[str]] = {}

    def freed(self, index: int, defs: Sequence[Definition]) -> set[int]:
        """The header lines of the tests of a deleted test file that go with a source file of
        its stem the change deletes (`exemptions.paired_files`): those that use a name the source
        file defined, when every such name they use is gone (but the classes and modules the
        file only opened around what went)."""
        freed: set[int] = set()
        for source in paired_sources(self._evidence.files, index):
            names = self._pair_names(source)
            if not names:
                continue
            openings = self._openings(source)
            stem = source_stem(self._evidence.files[source].old_path or "") or ""
            for definition in defs:
                if not self._named_after_file(index, definition, stem):
                    continue
                used = self._pair_uses(index, definition, names)
                gone = {name for name in used if self._evidence.is_gone(name, reading=PAIRED)}
                if gone and all(
                    name in gone or name in openings or self._member_of_gone(name, source)
                    for name in used
                ):
                    freed.add(definition.line.number)
        return freed

    def _named_after_file(self, index: int, definition: Definition, stem: str) -> bool:
        """Whether the test, or a suite around it, is named after the file: its name or the
        header of a suite around it holds the stem (`TestJWTWithConfig` for `jwt.go`,
        `describe Rack::Logger` for `logger.rb`), case and `_` aside. A test of other code
        that only calls a helper of the file (`TestReverse` building a `Pad`) is not the
        file's test."""
        lines = self._evidence.wholly_deleted(index, definition)
        key = _flat(stem)
        if lines is None or not key:
            return False
        names = [definition.name]
        suite = enclosing(lines, definition.line.number - 1)
        while suite is not None:
            names.append(lines[suite])
            suite = enclosing(lines, suite)
        return any(key in _flat(name) for name in names)

    def _pair_names(self, source: int) -> frozenset[str]:
        """The names a deleted source file defined (its distinctive ones, and the one it is
        named after, however short or common: `JWT` in `jwt.go`, `Logger` in `logger.rb`);
        none unless the file went: most of its lines not added back anywhere in the change,
        and the name it is named after gone. A file named after nothing it defines (`util.go`
        of helpers) is no subject its tests go with."""
        if source not in self._pair_names_of:
            self._pair_names_of[source] = self._read_pair_names(source)
        return self._pair_names_of[source]

    def _read_pair_names(self, source: int) -> frozenset[str]:
        change = self._evidence.files[source]
        path = change.old_path or ""
        stem = source_stem(path)
        if stem is None or mostly_added(
            [line.text for line in change.removed], self._evidence.added_lines
        ):
            return frozenset()
        defined = {name for line in change.removed for name in defined_names(line.text, path)}
        subjects = {name for name in defined if named_after(name, stem) and not is_reserved(name)}
        names = {name for name in defined if is_distinctive(name)} | subjects
        self._evidence.search(names)
        if not any(self._evidence.is_gone(name, reading=PAIRED) for name in subjects):
            return frozenset()
        return frozenset(names)

    def _pair_uses(self, index: int, definition: Definition, names: Collection[str]) -> set[str]:
        """Which of `names` a removed test uses: read from it and the helpers of its file it
        calls, or as words in its own lines or in the headers of the suites around it (the
        `describe Thor::CoreExt::OrderedHash do` whose `subject` its tests use), as rule 3
        reads them (a description naming the subject names it too)."""
        lines = self._evidence.wholly_deleted(index, definition)
        found = self._evidence.references(index, definition)
        if lines is None or found is None:
            return set()
        used = set(names) & (found.exercised | found.named)
        position = definition.line.number - 1
        path = self._evidence.files[index].old_path or ""
        start = position - len(decorators(lines, position))
        own = lines[start : reader_for(path).block_end(lines, position)]
        suite = enclosing(lines, position)
        while suite is not None:
            own.append(lines[suite])
            suite = enclosing(lines, suite)
        text = "\n".join(own)
        used |= {n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text)}
        return used

    def _member_of_gone(self, name: str, source: int) -> bool:
        """A method (or nested definition) the source file defined only inside a class, Go
        receiver or JavaScript object that went (`OrderedHash#shift`): other classes' methods
        of the name (`Arguments#shift`) are not its code. Unless the change defines the name
        anew, outside tests, or moves or renames it: where its code would live on."""
        records = [r for r in self._evidence.deleted.get(name, []) if r.file == source]
        owners = [self._evidence.owner(r, through=True)[:1] for r in records]
        return (
            bool(records)
            and all(owner and self._evidence.is_gone(owner[0], reading=PAIRED) for owner in owners)
            and not self._evidence.lives_on(name, reading=PAIRED)
            and not self._defined_anew(name)
        )

    def _defined_anew(self, name: str) -> bool:
        """Whether a line the change adds outside tests defines the name, assigns it, or
        names it in a string or symbol, as dynamic definitions do (`define_method(:name)`,
        `setattr(cls, "name", ...)`)."""
        named = re.compile(rf"""(?<![\w$:]):{re.escape(name)}\b|(['"`]){re.escape(name)}\1""")
        return any(
            name in defined_names(line.text, change.path)
            or assigns(line.text, name)
            or named.search(line.text) is not None
            for change in self._evidence.files
            if change.new_path is not None and not is_test_path(change.new_path)
            for line in change.added
        )

    def _openings(self, source: int) -> set[str]:
        """The classes and Ruby modules a deleted source file only opened around a definition
        that went (`class Thor` and `module CoreExt` around `class OrderedHash`): each of the
        file's definitions of the name is a `class` or `module` line."""
        around: set[str] = set()
        for name in self._pair_names(source):
            if self._evidence.is_gone(name, reading=PAIRED):
                for removed in self._evidence.deleted.get(name, []):
                    if removed.file == source:
                        around.update(self._evidence.around(removed))
        return {
            name
            for name in around
            if all(
                CLASS.match(r.line.text)
                for r in self._evidence.deleted.get(name, [])
                if r.file == source
            )
        }


def _flat(text: str) -> str:
    """Letters and digits only, lowercased: `OrderedHash`, `ordered_hash` and `ordered-hash`
    spelled alike."""
    return re.sub(r"[^a-z0-9]", "", text.lower())
