"""A repository's root `package.json`, where JavaScript test runners take their settings
(AVA's `"ava"`, Jest's `"jest"`, Mocha's `"mocha"`, the `test` script)."""

from __future__ import annotations

import json
from typing import Any

from app.guards.trees import Side, TreeView


def manifest(trees: TreeView, side: Side) -> dict[str, Any] | None:
    """The root `package.json` of `side`: `{}` when there is none, None when it does not
    parse into an object (so whatever it says cannot be read)."""
    text = trees.text(side, "package.json")
    if text is None:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def section(manifest: dict[str, Any], key: str) -> dict[str, Any]:
    """A runner's settings (`"ava": {...}`); `{}` when absent or not an object."""
    value = manifest.get(key)
    return value if isinstance(value, dict) else {}


def strings(value: object) -> list[str]:
    """A setting's strings: the value itself, a list's items, an object's keys (AVA's
    `"extensions": {"ts": "module"}`)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [key for key in value if isinstance(key, str)]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []
