"""Which App permission a REST call made with an installation token needs, as GitHub documents
it per endpoint ("Permissions required for GitHub Apps"). A call the App's permissions do not
cover answers 403 with `x-accepted-github-permissions`, as on GitHub, so an App registered
from a manifest that forgot a permission fails here as it would there.

Reads need `read` (or more), every other method `write`. Routes not listed need none beyond
being installed (metadata is granted to every App).
"""

from __future__ import annotations

import re

LEVELS = ("read", "write", "admin")

# (method or "*", route template pattern, permission, level or None = by method)
RULES: tuple[tuple[str, str, str, str | None], ...] = (
    ("PUT", r"/pulls/\{number\}/merge$", "contents", "write"),
    ("*", r"/check-runs|/check-suites", "checks", None),
    ("*", r"/actions/", "actions", None),
    ("*", r"/statuses/|/status$|/statuses$", "statuses", None),
    ("*", r"/labels", "issues", None),
    ("*", r"/issues", "issues", None),
    ("*", r"/pulls", "pull_requests", None),
    ("*", r"/contents|/git/|/compare/|/branches|/commits/", "contents", None),
)


def required(method: str, route: str) -> tuple[str, str] | None:
    """(permission, minimum level) for `method route`, or None."""
    for rule_method, pattern, permission, level in RULES:
        if rule_method in ("*", method) and re.search(pattern, route):
            return permission, level or ("read" if method in ("GET", "HEAD") else "write")
    return None


def lacking(granted: dict[str, str], method: str, route: str) -> str | None:
    """`permission=level` the call needs and `granted` lacks; None when it is covered."""
    need = required(method, route)
    if need is None:
        return None
    permission, level = need
    have = granted.get(permission)
    if have in LEVELS and LEVELS.index(have) >= LEVELS.index(level):
        return None
    return f"{permission}={level}"
