"""The router: (event, action) -> the handlers that care, each one concern, each isolated.

The routing table itself (which handler listens to what) is `app.handlers.routes`; this module
imports no handler, so a handler can import `Event` and `Router` without an import circle.

A handler looks at one verified webhook payload and answers with `Job`s: plain values naming
work to run later. It decides nothing irreversible and calls nothing remote. A handler that
raises is logged and skipped; the others still run, so one bug cannot swallow an event.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.jobs.registry import Job

log = logging.getLogger(__name__)

ANY_ACTION = "*"


@dataclass(frozen=True)
class Event:
    """A verified delivery as handlers see it. `payload` is the text at trigger time."""

    name: str
    action: str
    payload: Mapping[str, Any]
    delivery_id: str

    @property
    def installation_id(self) -> int | None:
        installation = self.payload.get("installation")
        if isinstance(installation, Mapping) and isinstance(installation.get("id"), int):
            return int(installation["id"])
        return None

    @property
    def repo_full_name(self) -> str | None:
        repository = self.payload.get("repository")
        if isinstance(repository, Mapping) and isinstance(repository.get("full_name"), str):
            return str(repository["full_name"])
        return None


Handler = Callable[[Event], list[Job]]


class Router:
    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str], list[Handler]] = defaultdict(list)

    def add(self, event: str, action: str, handler: Handler) -> None:
        self._handlers[(event, action)].append(handler)

    def handlers_for(self, event: str, action: str) -> list[Handler]:
        return [
            *self._handlers.get((event, action), []),
            *self._handlers.get((event, ANY_ACTION), []),
        ]

    def route(
        self, event: str, action: str, payload: Mapping[str, Any], *, delivery_id: str
    ) -> list[Job]:
        incoming = Event(name=event, action=action, payload=payload, delivery_id=delivery_id)
        jobs: list[Job] = []
        for handler in self.handlers_for(event, action):
            try:
                jobs.extend(handler(incoming))
            except Exception:
                log.exception(
                    "handler %s failed on %s.%s delivery %s",
                    getattr(handler, "__qualname__", handler),
                    event,
                    action,
                    delivery_id,
                )
        return jobs
