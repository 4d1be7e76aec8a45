"""What test inbox processes run behind the inbox (module-level: a spawned child imports them)."""

from __future__ import annotations

from pathlib import Path

from app.settings import Settings
from app.store import Store
from app.webhooks.dispatch import InboxOnlyDispatcher
from app.webhooks.handoff import InlineHook
from app.webhooks.inbox import Delivery

MARKER_DIR = "inline-marks"


def nothing(settings: Settings, store: Store) -> tuple[InboxOnlyDispatcher, InlineHook | None]:
    return InboxOnlyDispatcher(), None


def marking(settings: Settings, store: Store) -> tuple[InboxOnlyDispatcher, InlineHook | None]:
    """An inline hook that leaves a file per delivery, to show it ran before the answer."""
    marks = Path(settings.data_dir) / MARKER_DIR
    marks.mkdir(parents=True, exist_ok=True)

    def mark(delivery: Delivery) -> None:
        (marks / delivery.delivery_id).write_text(delivery.event)

    return InboxOnlyDispatcher(), mark


def broken(settings: Settings, store: Store) -> tuple[InboxOnlyDispatcher, InlineHook | None]:
    raise RuntimeError("the dispatcher cannot be built")
