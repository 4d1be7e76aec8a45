"""Removed tests of a deleted test file named after a subject that went (`exemptions.set_aside`,
rule 3).

A deleted test file named after a name (`creole_test.rb`, `test_legacy.py`,
`encrypted_cookie_spec.rb` for `EncryptedCookie`) that the file uses, that the change deletes
a definition of from source code, gone from the whole head tree and not renamed (rule 2's
three conditions on the name alone): the file's tests that use it go with it, whatever else
they call on the way (an app built with a helper, a layout). Which code a file is about is
what its name says, and that code is nowhere now. Its tests that do not use it are judged one
by one, as anywhere else.
"""

from __future__ import annotations

import posixpath
import re

from app.guards.tamper.code_names import is_distinctive
from app.guards.tamper.definitions import Definition
from app.guards.tamper.exemptions.evidence import SUBJECT, Evidence
from app.guards.tamper.lang import reader_for

_FILE_SUBJECT = (
    re.compile(r"^test_(?P<n>\w+)\.py$"),
    re.compile(r"^(?P<n>\w+)_(?:test|spec)\.(?:py|go|rb|exs?)$"),
    re.compile(r"^(?P<n>[\w$]+)\.(?:test|spec)\.[cm]?[jt]sx?$"),
    re.compile(r"^(?P<n>\w+)Tests?\.(?:java|kt|cs|swift|scala)$"),
)


def file_subject_gone(ev: Evidence, index: int) -> str | None:
    """The subject a deleted test file is named after (`creole_test.rb`, `test_legacy.py`,
    `encrypted_cookie_spec.rb` for `EncryptedCookie`), when it went: a distinctive name the
    file uses, that the change deletes a definition of from source code, gone from the
    whole head tree and not renamed. The file's tests that use it then go with it,
    whatever else they call on the way (an app built with a helper, a layout): which code
    a file is about is what its name says, and that code is nowhere now. Its tests that do
    not use it are judged one by one, as anywhere else."""
    change = ev.files[index]
    if change.status != "deleted" or change.old_path is None:
        return None
    names = [
        name
        for name in _file_subjects(change.old_path)
        if name in ev.removed and is_distinctive(name)
    ]
    text = ev.trees.text("base", change.old_path) if names else None
    if text is None:
        return None
    used = [n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text)]
    ev.search(used)
    return next((name for name in used if ev.is_gone(name, reading=SUBJECT)), None)


def uses(ev: Evidence, index: int, definition: Definition, name: str) -> bool:
    """Whether a removed test (or a helper of its own file it calls) uses `name`: the
    names read from it, or the word in its own lines (`Rack::Protection::Name.new`)."""
    found = ev.references(index, definition)
    if found is not None and name in found.exercised | found.named:
        return True
    lines = ev.wholly_deleted(index, definition)
    if lines is None:
        return False
    position = definition.line.number - 1
    path = ev.files[index].old_path or ""
    end = reader_for(path).block_end(lines, position)
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return any(word.search(line) for line in lines[position:end])


def _file_subjects(path: str) -> list[str]:
    """The name a test file is named after, by the runners' conventions, as it is spelled and
    as a class would be (`encrypted_cookie_spec.rb` tests `EncryptedCookie`)."""
    base = posixpath.basename(path)
    for pattern in _FILE_SUBJECT:
        match = pattern.match(base)
        if match is not None:
            name = match["n"]
            camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
            return list(dict.fromkeys((name, camel)))
    return []
