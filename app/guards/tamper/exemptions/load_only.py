"""Removed tests that only loaded a file the change deletes.

A test whose body is `require 'rack/mock_session'` checks that a deprecated file still loads;
a change that deletes the file deletes the test with it. Kept, the test fails to load what is
gone: what it checked, the file loading, is gone on purpose.

A removed test (every line of it deleted) is set aside, with the whole trees, when every
statement of its body loads a file (Ruby `require`/`require_relative` of a literal path,
Python `import a.b`/`from a.b import c`) that the change deletes and that no file of the head
ends with: the test checked nothing else. A test that also calls or asserts anything, or loads
a file that stays (or one another file of the head still provides), is judged as any other.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from app.guards.changes import FileChange
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.python import PYTHON

_RUBY_LOAD = re.compile(
    r"""^require(?P<relative>_relative)?\s*\(?\s*['"](?P<p>[\w./-]+)['"]\s*\)?\s*$"""
)
_PYTHON_LOAD = re.compile(r"^(?:import\s+(?P<m>[\w.]+)|from\s+(?P<f>[\w.]+)\s+import\s+[\w, ]+)$")


def loads_only_deleted(
    files: Sequence[FileChange],
    head_files: Sequence[str],
    path: str,
    lines: Sequence[str],
    position: int,
) -> bool:
    """Whether the test at `lines[position]` of `path` (its whole base file) only loads files
    the change deletes that no file of the head ends with."""
    reader = reader_for(path)
    python = reader is PYTHON
    end = reader.block_end(lines, position)
    # A comment after the statement (a `noqa` for F401) says nothing about what it loads.
    body = [re.sub(r"\s+#[^'\"]*$", "", text).strip() for text in lines[position + 1 : end]]
    statements = [text for text in body if text and not text.startswith("#") and text != "end"]
    if not statements:
        return False
    deleted = [c.old_path for c in files if c.status == "deleted" and c.old_path is not None]
    for statement in statements:
        targets = _targets(statement, path, python=python)
        if not targets:
            return False
        if not any(_gone(target, deleted, head_files) for target in targets):
            return False
    return True


def _targets(statement: str, path: str, *, python: bool) -> list[str]:
    """The file endings a load statement may read (`rack/mock_session.rb`)."""
    if python:
        match = _PYTHON_LOAD.match(statement)
        if match is None:
            return []
        module = (match["m"] or match["f"]).replace(".", "/")
        return [f"{module}.py", f"{module}/__init__.py"]
    match = _RUBY_LOAD.match(statement)
    if match is None:
        return []
    target = match["p"] if match["p"].endswith(".rb") else match["p"] + ".rb"
    if match["relative"]:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return [target]


def _gone(target: str, deleted: Sequence[str], head_files: Sequence[str]) -> bool:
    def ends(candidate: str) -> bool:
        return candidate == target or candidate.endswith("/" + target)

    return any(ends(path) for path in deleted) and not any(ends(path) for path in head_files)
