"""Fields of an issue payload as plain values, for handlers that pass them on to a job."""

from __future__ import annotations

from collections.abc import Mapping


def text_of(value: object) -> str:
    """A title or body as the event carried it ("" when absent or not text)."""
    return value if isinstance(value, str) else ""


def label_names(labels: object) -> list[str]:
    """The names of an issue's labels in the payload."""
    if not isinstance(labels, list):
        return []
    return [
        str(label["name"])
        for label in labels
        if isinstance(label, Mapping) and isinstance(label.get("name"), str)
    ]
