"""Handing recorded rows to the dispatcher: merged under load, in order, nothing dropped."""

from __future__ import annotations

import threading
import time

from app.webhooks.handoff import DispatchQueue
from app.webhooks.inbox import Delivery


class BatchRecorder:
    """A BatchDispatcher that remembers each submission (slow, like a broker round trip)."""

    def __init__(self, delay_s: float = 0.0, fail_first: bool = False) -> None:
        self.calls: list[list[int]] = []
        self.delay_s = delay_s
        self.fail_first = fail_first
        self.lock = threading.Lock()
        self.attempted = threading.Event()

    def submit(self, row_id: int) -> None:
        self.submit_many([row_id])

    def submit_many(self, row_ids: list[int]) -> None:
        time.sleep(self.delay_s)
        self.attempted.set()
        with self.lock:
            if self.fail_first:
                self.fail_first = False
                raise ConnectionError("broker down")
            self.calls.append(list(row_ids))


def rows(*ids: int) -> list[tuple[int, Delivery]]:
    return [(row_id, Delivery(f"d{row_id}", "issues", "opened", 1, b"{}")) for row_id in ids]


def test_an_idle_queue_submits_at_once() -> None:
    dispatcher = BatchRecorder()
    queue = DispatchQueue(dispatcher)
    queue.submit(rows(1))
    deadline = time.monotonic() + 5
    while not dispatcher.calls and time.monotonic() < deadline:
        time.sleep(0.001)
    assert dispatcher.calls == [[1]]
    queue.close()


def test_under_load_batches_merge_into_fewer_submissions_in_order() -> None:
    dispatcher = BatchRecorder(delay_s=0.002)
    queue = DispatchQueue(dispatcher)
    for row_id in range(1, 201):
        queue.submit(rows(row_id))
    queue.close()  # flushes what is queued
    submitted = [row_id for call in dispatcher.calls for row_id in call]
    assert submitted == list(range(1, 201))
    assert len(dispatcher.calls) < 50


def test_a_failed_submission_is_logged_and_the_next_ones_go_on(caplog) -> None:
    dispatcher = BatchRecorder(fail_first=True)
    queue = DispatchQueue(dispatcher)
    queue.submit(rows(1, 2))
    assert dispatcher.attempted.wait(5)  # the failing submission happened on its own
    queue.submit(rows(3))
    queue.close()
    assert "the sweeper will retry" in caplog.text
    assert [row_id for call in dispatcher.calls for row_id in call] == [3]


def test_after_close_rows_are_left_to_the_sweeper(caplog) -> None:
    dispatcher = BatchRecorder()
    queue = DispatchQueue(dispatcher)
    queue.close()
    queue.submit(rows(9))
    assert dispatcher.calls == []
    assert "not dispatched" in caplog.text
