"""One background thread working through a queue in order, with a way to wait until it is done.

The sandbox's webhook deliveries and its CI runs both work this way: what was queued first
happens first (GitHub delivers a repository's events in order), and a test can block until
everything queued so far has been handled.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

Item = TypeVar("Item")


class SerialWorker(Generic[Item]):
    """Calls `work(item)` for each `put` item, one at a time, on a thread named `name`."""

    def __init__(self, name: str, work: Callable[[Item], None], *, stop_timeout_s: float) -> None:
        self._name = name
        self._work = work
        self._stop_timeout_s = stop_timeout_s
        self._queue: queue.Queue[Item | None] = queue.Queue()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Let the item at hand finish (up to `stop_timeout_s`), then end the thread."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=self._stop_timeout_s)
            self._thread = None

    def put(self, item: Item) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(item)

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until every item put so far has been worked; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._work(item)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()
