"""Globs as JavaScript test runners write them (AVA's `files`, Mocha's `spec`): `*` within a
folder, `**` across folders, `?`, `{a,b}` alternatives, a leading `!` leaving out."""

from __future__ import annotations

import re
from functools import cache


def globbed(globs: list[str], path: str) -> bool:
    """Whether any of the runner's `files` globs takes `path` in (a `!` glob leaves out)."""
    taken = [g for g in globs if not g.startswith("!")]
    left = [g[1:] for g in globs if g.startswith("!")]
    return any(glob_pattern(g).fullmatch(path) for g in taken) and not any(
        glob_pattern(g).fullmatch(path) for g in left
    )


@cache
def glob_pattern(pattern: str) -> re.Pattern[str]:
    """A glob as a regular expression over repository paths (read once per glob: a runner's
    globs are matched against every file of a tree)."""
    out = ""
    index = 0
    pattern = pattern.removeprefix("./")
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out += "(?:.*/)?"
            index += 3
        elif pattern.startswith("**", index):
            out += ".*"
            index += 2
        elif pattern[index] == "*":
            out += "[^/]*"
            index += 1
        elif pattern[index] == "?":
            out += "[^/]"
            index += 1
        elif pattern[index] == "{" and "}" in pattern[index:]:
            end = pattern.index("}", index)
            out += "(?:" + "|".join(re.escape(p) for p in pattern[index + 1 : end].split(",")) + ")"
            index = end + 1
        else:
            out += re.escape(pattern[index])
            index += 1
    return re.compile(out)
