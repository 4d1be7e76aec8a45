"""Reading a state document (JSON) into the plain data `decide` takes.

Only a document nobody can read is refused as a whole (`StateUnreadable`, exit 2): not JSON,
not an object at the top, a key given twice (which of the two would a reader believe?), or a
bare NaN/Infinity. Everything else is left to the conditions, which fail on the fields they
cannot read.
"""

from __future__ import annotations

import json
from typing import Any

from app.errors import UserError

MAX_STATE_BYTES = 64 * 1024 * 1024


class StateUnreadable(UserError):
    """The state document as a whole cannot be read; the message says why, in one line."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StateUnreadable(f"the key {json.dumps(key)} appears twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise StateUnreadable(f"{name} is not a JSON number")


def parse_state(data: bytes | str, *, source: str = "the state") -> dict[str, Any]:
    if len(data) > MAX_STATE_BYTES:
        raise StateUnreadable(f"{source} is larger than {MAX_STATE_BYTES} bytes")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise StateUnreadable(f"{source} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise StateUnreadable(
            f"{source} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise StateUnreadable(f"{source} is nested too deeply") from None
    except StateUnreadable as exc:
        raise StateUnreadable(f"{source}: {exc}") from None
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else "a single value"
        raise StateUnreadable(f"{source} must be a JSON object, got {kind}")
    return value
