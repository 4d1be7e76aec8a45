"""Who is acting: the one place that decides whether a payload's actor may start anything.

Apps' bots never trigger the loop, whatever their name; that includes ourobot itself, so a
comment ourobot posts can never start ourobot again. Decided from GitHub's `type` field and
`performed_via_github_app`, never from a login pattern.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_automation(user: Any, item: Mapping[str, Any] | None = None) -> bool:
    """True for an App's bot user, or for an item an App performed on someone's behalf."""
    if not isinstance(user, Mapping):
        return True  # no actor we can identify: never let it start work
    if user.get("type") != "User":
        return True
    return bool(item is not None and item.get("performed_via_github_app"))


def login_of(user: Any) -> str | None:
    if isinstance(user, Mapping) and isinstance(user.get("login"), str):
        return str(user["login"])
    return None
