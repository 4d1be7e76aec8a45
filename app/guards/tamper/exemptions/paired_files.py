"""A deleted test file and the deleted source file it is named after: `jwt_test.go` and
`jwt.go`, `ordered_hash_spec.rb` or `spec_logger.rb` and `logger.rb`, `test_lru.py` and
`lru.py`, `test/wrap.js` and `lib/wrap.js`.

What `app.guards.tamper.exemptions.subjects` reads to set aside the tests of such a file (its rule 5): which
source files a test file pairs with, and which lines of the head tree mention a name without
providing it once the file that defined it is gone (a plain comment, an autoload of the deleted
file). Everything here is text; what it cannot read is taken to provide the name.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from app.guards.changes import FileChange
from app.guards.tamper.code_names import is_source
from app.guards.tamper.lang import MIXED, reader_for
from app.guards.tamper.lang.go import GO
from app.guards.tamper.lang.ruby import RUBY
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
# `autoload :Logger, "rack/logger"`, alone on its line.
_AUTOLOAD = re.compile(
    r"^\s*autoload\s*\(?\s*:(?P<n>\w+)\s*,\s*(?P<q>['\"])(?P<p>[\w./-]+)(?P=q)\s*\)?\s*$"
)


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


def autoload_target(text: str, name: str, path: str) -> str | None:
    """The file a Ruby `autoload :name, "path"` line loads `name` from (`rack/logger.rb`), as
    the end of a path; None for any other line."""
    match = _AUTOLOAD.match(text) if reader_for(path) is RUBY else None
    if match is None or match["n"] != name:
        return None
    target = match["p"].removeprefix("./")
    return target if target.endswith(".rb") else f"{target}.rb"


def ends_at(path: str, target: str) -> bool:
    """Whether `path` is `target` under some folder of the load path."""
    return path == target or path.endswith("/" + target)
