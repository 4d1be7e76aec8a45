"""Removed tests whose subject went with them (`exemptions.set_aside`, rule 2).

The test uses (calls, reads, or names in a `monkeypatch`/`mock` target string) a distinctive
name (not a builtin, keyword or generic word like `get`, `run`, `main`) that
- the change deletes a definition of, from source code (not tests);
- no source file of the head tree still provides: defines, imports, assigns or uses it other
  than as an attribute of something else (`ssl.SSLContext` does not provide `SSLContext`);
  strings that mention it count as providing it, a plain comment line does not (it runs
  nothing); no other file mentions at all (code in a language the rules do not read, a
  script, a config entry: what cannot be read is taken to provide it), but for prose, where
  only a definition counts (a changelog saying it was removed is no evidence it stays);
- was not renamed or moved: most of its deleted body is not added back in the change (to any
  file), and no deleted line that used it comes back with another name of the project's in
  its place (defined in its code, or imported from it under another name); a one-line
  definition, with no body to compare, lives on when its line comes back renamed, when it
  only named code the head still defines (`old = parse_config`), or when its line uses
  project code and none that the change deletes (`exemptions.evidence`);
and every other project definition the test exercises is either gone too, the class (or Go
receiver, or JavaScript object) a gone subject was defined on, or a definition from whose body
the change deleted a line that used a gone subject (the function the removed feature was cut
out of). So a test whose own subject stays cannot be excused by deleting some helper it
happens to call; and a test that exercises any name the change deleted but that lives on,
renamed or elsewhere, is not excused at all.
"""

from __future__ import annotations

import re

from app.guards.tamper.code_names import References, defined_names, is_source
from app.guards.tamper.exemptions.evidence import SUBJECT, Evidence, defines, may_define
from app.guards.tamper.lang import reader_for
from app.guards.trees import Hit


def subject_gone(ev: Evidence, found: References) -> bool:
    """Whether the names a removed test uses (`found`) show its subject went with it."""
    used = found.exercised | found.named
    subjects = {n for n in used & ev.removed.keys() if ev.is_gone(n, reading=SUBJECT)}
    if not subjects:
        return False
    for name in found.exercised - subjects:
        if name in ev.removed and not ev.went_with(name, subjects):
            return False  # deleted but still there, or renamed: the code stays
        # Project code the test exercised that stays. Prose defines none: a `const stdout`
        # in a guide's example is no code of the project's.
        heads = [
            h
            for h in ev.hits(name)
            if may_define(h.path) or (is_source(h.path) and name in defines(h))
        ]
        if heads and not all(_allowed(ev, name, hit, subjects) for hit in heads):
            return False
    return True


def _allowed(ev: Evidence, name: str, hit: Hit, subjects: set[str]) -> bool:
    """Whether a project definition a removed test exercises, still at the head, is part
    of what went: the class a gone subject was defined on, or a definition the change cut
    a use of a gone subject out of."""
    if name in ev.owners(subjects):
        return True
    change = next((c for c in ev.files if c.new_path == hit.path), None)
    if change is None or change.old_path is None:
        return False
    text = ev.trees.text("base", change.old_path)
    if text is None:
        return False
    lines = text.splitlines()
    reader = reader_for(change.old_path)
    cut = {
        line.number
        for line in change.removed
        if any(re.search(rf"(?<![\w$]){re.escape(s)}(?![\w$])", line.text) for s in subjects)
    }
    for position, base_line in enumerate(lines):
        if name in defined_names(base_line, change.old_path):
            end = reader.block_end(lines, position)
            if any(position + 1 < number <= end for number in cut):
                return True
    return False
