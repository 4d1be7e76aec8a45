"""Removed tests whose package went with them (`exemptions.set_aside`, rule 1).

A deleted test file is set aside, all of its tests, when its directory held source code, all
of which the change deleted (none renamed, most of its lines not added back anywhere), and
the directory no longer exists at the head: the code those tests ran is gone whole.
"""

from __future__ import annotations

import posixpath

from app.guards.tamper.code_names import is_source
from app.guards.tamper.diffs import mostly_added
from app.guards.tamper.exemptions.evidence import Evidence


def package_gone(ev: Evidence, index: int) -> bool:
    """A deleted test file whose directory, source code and all, the change deleted."""
    change = ev.files[index]
    if change.status != "deleted" or change.old_path is None:
        return False
    directory = posixpath.dirname(change.old_path)
    sources = [
        c
        for c in ev.files
        if c.old_path is not None
        and posixpath.dirname(c.old_path) == directory
        and is_source(c.old_path)
    ]
    if not directory or not sources or any(c.status != "deleted" for c in sources):
        return False
    if ev.trees.listing("head", directory):
        return False
    deleted = [line.text for c in sources for line in c.removed]
    return not mostly_added(deleted, ev.added_lines)
