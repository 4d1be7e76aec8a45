"""Group commit for the inbox: concurrent requests share one transaction (and one disk sync).

Every delivery must be durable before it is acknowledged, and a commit costs a disk sync
(about 2 ms on SQLite here). One writer thread takes whatever deliveries are waiting, records
them with `Inbox.record_many` in one transaction, and wakes each waiting request with its own
answer. Under load the batch grows, so throughput scales with concurrency instead of being
capped by the sync; idle, a delivery waits for nothing but its own commit. A single writer
also keeps concurrent requests from queueing on SQLite's lock, whose busy handler sleeps in
growing steps and turns contention into long tail latencies.

If a batch fails, its deliveries are retried one by one, so one bad row cannot fail the others.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from app.inbox import Delivery, Inbox

log = logging.getLogger(__name__)

MAX_BATCH = 64


@dataclass(frozen=True)
class _Pending:
    delivery: Delivery
    loop: asyncio.AbstractEventLoop
    answer: asyncio.Future[int | None]


class _Stop:
    """Tells the writer thread to finish what is queued and end."""


class BatchingRecorder:
    """Records deliveries through one writer thread; `record` is awaited by request handlers.

    `on_recorded` runs on the writer thread for each new row, after its commit and before its
    request is answered (the receiver's inline /panic hook). It must not raise.
    """

    def __init__(
        self,
        inbox: Inbox,
        *,
        on_recorded: Callable[[Delivery], None] | None = None,
        max_batch: int = MAX_BATCH,
    ) -> None:
        self._inbox = inbox
        self._on_recorded = on_recorded
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[_Pending | _Stop] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    async def record(self, delivery: Delivery) -> int | None:
        """The new row id, or None for a duplicate; raises what the database raised."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[int | None] = loop.create_future()
        self._ensure_writer()
        self._queue.put(_Pending(delivery, loop, answer))
        return await answer

    def close(self) -> None:
        """Finish queued deliveries and stop the writer thread (it restarts if used again)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_Stop())
            thread.join()

    def _ensure_writer(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_loop, name="inbox-writer", daemon=True
                )
                self._thread.start()

    def _write_loop(self) -> None:
        while True:
            batch, stop = self._take_batch()
            if batch:
                self._write(batch)
            if stop:
                return

    def _take_batch(self) -> tuple[list[_Pending], bool]:
        """Block for the first item, then take whatever else is already waiting."""
        batch: list[_Pending] = []
        item = self._queue.get()
        while True:
            if isinstance(item, _Stop):
                return batch, True
            batch.append(item)
            if len(batch) >= self._max_batch:
                return batch, False
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return batch, False

    def _write(self, batch: list[_Pending]) -> None:
        try:
            row_ids = self._inbox.record_many([pending.delivery for pending in batch])
        except Exception as error:
            if len(batch) == 1:
                _settle(batch[0], error=error)
                return
            log.warning("inbox batch of %d failed; recording them one by one", len(batch))
            for pending in batch:
                self._write([pending])
            return
        for pending, row_id in zip(batch, row_ids, strict=True):
            if row_id is not None:
                self._after_commit(pending.delivery)
        for pending, row_id in zip(batch, row_ids, strict=True):
            _settle(pending, row_id=row_id)

    def _after_commit(self, delivery: Delivery) -> None:
        if self._on_recorded is None:
            return
        try:
            self._on_recorded(delivery)
        except Exception:
            # The writer thread must survive anything: every later delivery depends on it.
            log.exception("on_recorded failed for delivery %s", delivery.delivery_id)


def _settle(
    pending: _Pending, *, row_id: int | None = None, error: Exception | None = None
) -> None:
    """Wake the waiting request, on its own event loop."""

    def deliver() -> None:
        if pending.answer.done():  # the request was cancelled meanwhile
            return
        if error is not None:
            pending.answer.set_exception(error)
        else:
            pending.answer.set_result(row_id)

    try:
        pending.loop.call_soon_threadsafe(deliver)
    except RuntimeError:
        # The loop is closed: the server stopped and nobody is waiting any more.
        log.debug("inbox answer for delivery %s dropped: loop closed", pending.delivery.delivery_id)
