"""What happens to a delivery once it is committed: the inline hook, then the dispatcher.

Both run wherever the inbox is written (the in-process recorder's thread, or the inbox
process) and neither can fail a delivery: the row is durable, and the sweeper re-submits
whatever stays pending.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, cast

from sqlalchemy.exc import StatementError

from app.webhooks.dispatch import BatchDispatcher, Dispatcher, InMemoryDispatcher
from app.webhooks.inbox import Delivery

log = logging.getLogger("app.webhooks")

InlineHook = Callable[[Delivery], None]


def guarded_inline(inline: InlineHook | None) -> InlineHook | None:
    """The inline hook, made unable to fail the delivery it runs for."""
    if inline is None:
        return None
    hook = inline

    def run_inline(delivery: Delivery) -> None:
        try:
            hook(delivery)
        except Exception:
            # The delivery is recorded; a broken hook must not make GitHub see a failure.
            log.exception("inline hook failed for delivery=%s", delivery.delivery_id)

    return run_inline


class DispatchQueue:
    """Calls the dispatcher on its own thread, in order, after the delivery is answered.

    An `InMemoryDispatcher` (the embedded runner) is called directly instead: its submit only
    queues, so the thread hop would cost more than the call.

    Under load, rows from consecutive batches are merged into one submission, at most one per
    MIN_INTERVAL_S: a Celery publish costs as much CPU as recording a dozen deliveries, in the
    process that records them. Idle, a row is submitted at once.

    Submitting is a hint (the row is durable, the sweeper re-submits what stays pending), so a
    broker that is slow or down delays neither the acknowledgement nor the next recording.
    """

    MIN_INTERVAL_S = 0.05
    MAX_ROWS = 500

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher
        self._in_memory = isinstance(dispatcher, InMemoryDispatcher) and dispatcher.in_memory
        self._batches = isinstance(dispatcher, BatchDispatcher)
        self._queue: queue.SimpleQueue[list[int] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, rows: list[tuple[int, Delivery]]) -> None:
        if self._in_memory:
            # Queues in memory and returns at once: no need for the hop to the dispatch thread.
            # The parsed deliveries come along: processing in this process need not parse or
            # read them again.
            self._submit_parsed(rows)
            return
        row_ids = [row_id for row_id, _ in rows]
        with self._lock:
            if self._closed:
                log.warning(
                    "inbox rows %s not dispatched: shutting down (the sweeper will)", row_ids
                )
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="dispatch", daemon=True)
                self._thread.start()
        self._queue.put(row_ids)

    def close(self) -> None:
        """Submit what is queued, then stop the thread."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _run(self) -> None:
        last = 0.0
        while True:
            first = self._queue.get()
            if first is None:
                return
            # Linger only when the previous submission was moments ago, i.e. under load.
            time.sleep(max(0.0, last + self.MIN_INTERVAL_S - time.monotonic()))
            row_ids, stop = list(first), False
            while len(row_ids) < self.MAX_ROWS:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                row_ids += more
            self._submit_now(row_ids)
            last = time.monotonic()
            if stop:
                return

    def _submit_parsed(self, rows: list[tuple[int, Delivery]]) -> None:
        try:
            cast(InMemoryDispatcher, self._dispatcher).submit_parsed(rows)
        except Exception as error:
            log.warning(
                "dispatch of inbox rows %s failed (the sweeper will retry): %s",
                [row_id for row_id, _ in rows],
                describe(error),
            )

    def _submit_now(self, row_ids: list[int]) -> None:
        if self._batches:
            try:
                cast(BatchDispatcher, self._dispatcher).submit_many(row_ids)
            except Exception as error:
                log.warning(
                    "dispatch of inbox rows %s failed (the sweeper will retry): %s",
                    row_ids,
                    describe(error),
                )
            return
        for row_id in row_ids:
            try:
                self._dispatcher.submit(row_id)
            except Exception as error:
                log.warning(
                    "dispatch of inbox row %d failed (the sweeper will retry): %s",
                    row_id,
                    describe(error),
                )


def log_delivery(
    delivery_id: str, event: str, action: str, outcome: str, *, level: int = logging.INFO
) -> None:
    """The one line per delivery that operators grep for, whichever process writes it."""
    log.log(
        level,
        "webhook delivery=%s event=%s action=%s outcome=%s",
        delivery_id,
        event,
        action or "-",
        outcome,
    )


def describe(error: BaseException) -> str:
    """One short line about an error, never the statement parameters (they hold the body)."""
    cause: Any = error.orig if isinstance(error, StatementError) else error
    first = (str(cause).strip().splitlines() or [""])[0]
    return f"{type(cause).__name__}: {first[:200]}"
