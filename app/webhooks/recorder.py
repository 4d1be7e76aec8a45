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
from typing import TypeVar

from app.webhooks.delivery import BadDelivery, Received, parse_body
from app.webhooks.handoff import log_delivery
from app.webhooks.inbox import Delivery, Inbox

log = logging.getLogger(__name__)

MAX_BATCH = 64
_T = TypeVar("_T")

# What a delivery's request is told: its new row id, None (a duplicate), or the write's error.
Outcome = int | None | Exception
_Answer = asyncio.Future[int | None]


@dataclass(frozen=True)
class _Pending:
    received: Received
    loop: asyncio.AbstractEventLoop
    answer: _Answer


class _Stop:
    """Tells the writer thread to finish what is queued and end."""


class BatchingRecorder:
    """Records deliveries through one writer thread; `record` is awaited by request handlers.

    On the writer thread, after each commit: `on_recorded` runs for each new row before its
    request is answered (the receiver's inline /panic hook); `on_answered` gets the batch's new
    rows, (row id, delivery) in order, once the requests are woken (the receiver hands them to
    the dispatcher). Both must
    return quickly; an exception from either is logged and the writer carries on.
    """

    def __init__(
        self,
        inbox: Inbox,
        *,
        on_recorded: Callable[[Delivery], None] | None = None,
        on_answered: Callable[[list[tuple[int, Delivery]]], None] | None = None,
        max_batch: int = MAX_BATCH,
    ) -> None:
        self._writer = InboxWriter(inbox, on_recorded=on_recorded, on_answered=on_answered)
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[_Pending | _Stop] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    async def record(self, received: Received) -> int | None:
        """The new row id, or None for a duplicate; raises BadDelivery for an unusable body,
        or what the database raised."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[int | None] = loop.create_future()
        self._ensure_writer()
        self._queue.put(_Pending(received, loop, answer))
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
        self._writer.write(
            [pending.received for pending in batch],
            lambda outcomes: _settle(list(zip(batch, outcomes, strict=True))),
        )


class InboxWriter:
    """One batch into the inbox, then everything that follows a commit, in order.

    Commit (a failed batch is retried row by row, so one bad row cannot fail the others);
    `on_recorded` for each new row (the inline /panic hook, before anyone is answered);
    `answer` with one outcome per delivery; a log line per delivery; `on_answered` with the
    new rows. Used by the in-process recorder's thread and by the inbox process alike.
    """

    def __init__(
        self,
        inbox: Inbox,
        *,
        on_recorded: Callable[[Delivery], None] | None = None,
        on_answered: Callable[[list[tuple[int, Delivery]]], None] | None = None,
    ) -> None:
        self._inbox = inbox
        self._on_recorded = on_recorded
        self._on_answered = on_answered

    def write(self, batch: list[Received], answer: Callable[[list[Outcome]], None]) -> None:
        """Parse, commit, hook, answer (one outcome per item, in order), log, hand off."""
        parsed = [_parsed(received) for received in batch]
        deliveries = [item for item in parsed if isinstance(item, Delivery)]
        committed = iter(self._commit(deliveries) if deliveries else [])
        outcomes = [next(committed) if isinstance(item, Delivery) else item for item in parsed]
        recorded = [
            (outcome, item)
            for item, outcome in zip(parsed, outcomes, strict=True)
            if isinstance(item, Delivery) and isinstance(outcome, int)
        ]
        for _, delivery in recorded:
            _guarded(self._on_recorded, delivery)
        _guarded(answer, outcomes)
        for item, outcome in zip(parsed, outcomes, strict=True):
            if isinstance(item, Delivery):
                _log_recorded(item, outcome)
        if recorded:
            _guarded(self._on_answered, recorded)

    def _commit(self, deliveries: list[Delivery]) -> list[Outcome]:
        try:
            return list(self._inbox.record_many(deliveries))
        except Exception as error:
            if len(deliveries) == 1:
                return [error]
            log.warning("inbox batch of %d failed; recording them one by one", len(deliveries))
            return [self._commit([delivery])[0] for delivery in deliveries]


def _parsed(received: Received) -> Delivery | BadDelivery:
    try:
        return parse_body(received)
    except BadDelivery as problem:
        return problem


def _guarded(callback: Callable[[_T], None] | None, value: _T) -> None:
    if callback is None:
        return
    try:
        callback(value)
    except Exception:
        # The writer must survive anything: every later delivery depends on it.
        log.exception("inbox writer callback %s failed", getattr(callback, "__name__", "?"))


def _log_recorded(delivery: Delivery, outcome: Outcome) -> None:
    # Errors are logged where the request is answered (503); these are the stored ones.
    if isinstance(outcome, Exception):
        return
    described = "duplicate" if outcome is None else f"accepted id={outcome}"
    log_delivery(delivery.delivery_id, delivery.event, delivery.action, described)


def _settle(outcomes: list[tuple[_Pending, Outcome]]) -> None:
    """Wake the waiting requests: one wake-up per event loop, not one per delivery."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Answer, Outcome]]] = {}
    for pending, outcome in outcomes:
        by_loop.setdefault(pending.loop, []).append((pending.answer, outcome))
    for loop, answers in by_loop.items():
        try:
            loop.call_soon_threadsafe(_deliver, answers)
        except RuntimeError:
            # The loop is closed: the server stopped and nobody is waiting any more.
            log.debug("%d inbox answers dropped: their event loop is closed", len(answers))


def _deliver(answers: list[tuple[_Answer, Outcome]]) -> None:
    """On the requests' loop: hand each its row id, None, or the database's error."""
    for answer, outcome in answers:
        if answer.done():  # the request was cancelled meanwhile
            continue
        if isinstance(outcome, Exception):
            answer.set_exception(outcome)
        else:
            answer.set_result(outcome)
