"""One reader per language of test files, behind one protocol (`reader.Reader`).

`reader_for(path)` is the reader of a file, by its name: Python, JavaScript and TypeScript,
Go, Ruby, Rust, Java, Kotlin, Elixir; any other file (a configuration, a fixture, a language
with no reader) is read by every reader together (`mixed`). What a language's test files look
like is said in its module only; the rule asks the reader, never the file's suffix.
"""

from __future__ import annotations

from app.guards.tamper.lang.elixir import ELIXIR
from app.guards.tamper.lang.go import GO
from app.guards.tamper.lang.javascript import JAVASCRIPT
from app.guards.tamper.lang.jvm import JAVA, KOTLIN
from app.guards.tamper.lang.mixed import mixed
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.lang.reader import Language, Reader
from app.guards.tamper.lang.ruby import RUBY
from app.guards.tamper.lang.rust import RUST

__all__ = ["MIXED", "READERS", "Reader", "plain_comment", "reader_for"]

# In the order a file of no known language is read by them: a header is the first one's that
# defines a test on it.
READERS: tuple[Language, ...] = (PYTHON, JAVASCRIPT, GO, RUST, RUBY, JAVA, KOTLIN, ELIXIR)
MIXED = mixed(READERS)


def reader_for(path: str | None) -> Language:
    """The reader of the file at `path` (the mixed reader for a file of no known language,
    or none)."""
    if path:
        for reader in READERS:
            if reader.reads(path):
                return reader
    return MIXED


def plain_comment(text: str, path: str) -> bool:
    """A line that is a comment and nothing else, read by the language's line comment (`#`
    in Python, Ruby and Elixir, `//` in the others; in C, `#` is the preprocessor): it runs
    nothing and defines nothing. A directive (`//go:generate`, `//export`, `#!`, a Ruby
    `#:nodoc:`), with no space after its marker, is not plain; nor is a line inside a block
    comment or a string, which cannot be told from one line."""
    marker = reader_for(path).comment
    stripped = text.strip()
    if not stripped.startswith(marker):
        return False
    rest = stripped[len(marker) :]
    return not rest or rest[0].isspace()
