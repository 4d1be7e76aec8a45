"""How the receiver hands a recorded delivery to whatever processes it.

`Dispatcher.submit` is a hint, not the source of truth: the row is already durable in the
inbox when it is called, and the sweeper re-submits rows that stay unfinished. So a dispatcher
must not raise on a broker outage (log it and return); the receiver still answers 202.

Implementations: the Celery dispatcher in `tasks/` (Redis mode) and `app.webhooks.embedded`
(embedded mode) by the workers; `InboxOnlyDispatcher` and `RecordingDispatcher` below.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.webhooks.inbox import Delivery


class Dispatcher(Protocol):
    def submit(self, row_id: int) -> None:
        """Ask for inbox row `row_id` to be processed soon. Never raises on an outage."""


@runtime_checkable
class BatchDispatcher(Protocol):
    """A dispatcher that takes a whole batch of new rows at once (one publish, one claim)."""

    def submit(self, row_id: int) -> None: ...

    def submit_many(self, row_ids: list[int]) -> None: ...


@runtime_checkable
class InMemoryDispatcher(Protocol):
    """A dispatcher whose submits only queue in memory: they never wait on I/O or a lock held
    for long. The receiver calls such a dispatcher on its inbox writer thread, right after the
    commit, instead of handing the rows to its dispatch thread: one thread wake-up (and one
    GIL hand-off) less per batch, on the path that acknowledges webhooks."""

    in_memory: bool

    def submit(self, row_id: int) -> None: ...

    def submit_parsed(self, rows: list[tuple[int, Delivery]]) -> None:
        """Submit rows together with their deliveries as the receiver parsed them (`payload`
        None: not parsed), so that processing in this process neither parses the bodies
        again nor reads back what the receiver already knows."""


class InboxOnlyDispatcher:
    """Submits nothing: rows wait in the inbox until a sweeper or a worker picks them up.

    For a receiver that runs without any processing wired in (and for benchmarks of the
    receiver alone).
    """

    in_memory = True

    def submit(self, row_id: int) -> None:
        return None

    def submit_parsed(self, rows: list[tuple[int, Delivery]]) -> None:
        return None


class RecordingDispatcher:
    """Remembers what was submitted, in order; for tests. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._submitted: list[int] = []

    def submit(self, row_id: int) -> None:
        with self._lock:
            self._submitted.append(row_id)

    @property
    def submitted(self) -> list[int]:
        with self._lock:
            return list(self._submitted)


@runtime_checkable
class Closable(Protocol):
    """A dispatcher that owns threads or connections; `ourobot serve` closes it on shutdown."""

    def close(self) -> None: ...
