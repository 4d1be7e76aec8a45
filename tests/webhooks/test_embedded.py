"""app.webhooks.embedded: the in-process runner processes the durable inbox without Redis."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select

from app.jobs.registry import Job
from app.settings import Settings
from app.store import Store
from app.store.schema import halts, webhook_inbox
from app.webhooks.embedded import EmbeddedRunner
from app.webhooks.inbox import DONE, Delivery, Inbox
from tests.jobs.jobs_for_tests import GITHUB_LOG, STARTS_LOG, marker, read_lines
from tests.plugins.processes import wait_for
from tests.plugins.sandbox import SandboxHandle


class PayloadRouter:
    """Stands in for app.handlers.routes: a delivery's payload names the jobs to run."""

    def route(
        self, event: str, action: str, payload: Mapping[str, Any], *, delivery_id: str
    ) -> list[Job]:
        return [Job(name, kwargs) for name, kwargs in payload["jobs"]]


def embedded_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": tmp_path / "data",
        "database_url": None,
        "redis_url": None,
        "extra_job_modules": ("tests.jobs.jobs_for_tests",),
        "sweep_interval_s": 0.2,
        "sweep_after_s": 0.5,
        **overrides,
    }
    return Settings(**values)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return embedded_settings(tmp_path)


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    opened = Store.open(settings)
    opened.migrate()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def runner(settings: Settings, store: Store) -> Iterator[EmbeddedRunner]:
    started = EmbeddedRunner(settings, store, lambda _: PayloadRouter())
    started.start()
    try:
        yield started
    finally:
        started.stop()


def deliver(store: Store, guid: str, *jobs: tuple[str, dict[str, Any]]) -> int:
    body = json.dumps({"jobs": [list(planned) for planned in jobs]}).encode()
    row_id = Inbox(store).record(Delivery(guid, "issues", "opened", 5, body))
    assert row_id is not None
    return row_id


def state(store: Store, row_id: int) -> str:
    with store.read_session() as session:
        found: str = session.execute(
            select(webhook_inbox.c.state).where(webhook_inbox.c.id == row_id)
        ).scalar_one()
    return found


def test_submitted_rows_run_their_jobs_once(
    runner: EmbeddedRunner, store: Store, settings: Settings
) -> None:
    first = deliver(
        store, "g1", ("tests.post_once", {"key": "a"}), ("tests.post_once", {"key": "b"})
    )
    again = deliver(store, "g2", ("tests.post_once", {"key": "a"}))
    runner.submit(first)
    runner.submit(again)
    runner.submit(first)  # a duplicate submission
    wait_for(lambda: state(store, first) == DONE and state(store, again) == DONE, 10, "rows done")
    assert read_lines(settings.data_dir / GITHUB_LOG) == [marker("a"), marker("b")]
    assert len(read_lines(settings.data_dir / STARTS_LOG)) == 3  # ran thrice, acted twice


def test_the_sweeper_picks_up_rows_nobody_submitted(
    runner: EmbeddedRunner, store: Store, settings: Settings
) -> None:
    forgotten = deliver(store, "g3", ("tests.post_once", {"key": "swept"}))
    wait_for(lambda: state(store, forgotten) == DONE, 10, "the sweeper to process the row")
    assert read_lines(settings.data_dir / GITHUB_LOG) == [marker("swept")]


def test_a_rate_limited_job_is_retried_after_retry_after(
    tmp_path: Path, sandbox: SandboxHandle
) -> None:
    settings = embedded_settings(tmp_path, github_api_url=sandbox.url, sweep_after_s=60)
    store = Store.open(settings)
    store.migrate()
    repo = sandbox.create_repo(private=False)
    path = f"/repos/{repo.full_name}"
    sandbox.control.add_fault("secondary", method="GET", path=f"^{path}$", retry_after_s=1)
    runner = EmbeddedRunner(settings, store, lambda _: PayloadRouter())
    runner.start()
    try:
        row_id = deliver(store, "g4", ("tests.call_github", {"key": "rl", "path": path}))
        runner.submit(row_id)
        wait_for(lambda: state(store, row_id) == DONE, 10, "the retried row")
    finally:
        runner.stop()
        store.close()
    calls = sandbox.requests("GET", path)
    assert [call["status"] for call in calls] == [403, 200]
    assert calls[1]["t"] - calls[0]["t"] >= 1.0
    assert read_lines(settings.data_dir / GITHUB_LOG) == [marker("rl")]


def test_a_halted_installation_runs_nothing(
    runner: EmbeddedRunner, store: Store, settings: Settings
) -> None:
    with store.session() as session:
        session.execute(
            insert(halts).values(
                scope="installation:5", reason="panic", set_by="admin", set_at=datetime.now(UTC)
            )
        )
    row_id = deliver(store, "g5", ("tests.post_once", {"key": "h", "installation_id": 5}))
    runner.submit(row_id)
    wait_for(lambda: state(store, row_id) == DONE, 10, "the halted row to be settled")
    assert read_lines(settings.data_dir / STARTS_LOG) == []


def test_an_unknown_job_fails_the_row_visibly(
    runner: EmbeddedRunner, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="app.webhooks.embedded")
    row_id = deliver(store, "g6", ("tests.no_such_job", {}))
    runner.submit(row_id)
    wait_for(lambda: "no job named 'tests.no_such_job'" in caplog.text, 10, "the failure log")
    with store.read_session() as session:
        error = session.execute(
            select(webhook_inbox.c.last_error).where(webhook_inbox.c.id == row_id)
        ).scalar_one()
    assert error is not None and "tests.no_such_job" in error
    assert state(store, row_id) != DONE


def test_stop_is_prompt_and_submit_after_stop_is_harmless(settings: Settings, store: Store) -> None:
    runner = EmbeddedRunner(settings, store, lambda _: PayloadRouter())
    runner.submit(1)  # before start: queued, not an error
    runner.start()
    started = time.monotonic()
    runner.stop(timeout_s=5)
    assert time.monotonic() - started < 1.0
    runner.submit(2)
    runner.close()


def test_a_batch_finishes_idle_rows_together_and_runs_the_others_jobs(
    runner: EmbeddedRunner, store: Store, settings: Settings
) -> None:
    idle = [deliver(store, f"idle-{n}") for n in range(30)]
    busy = deliver(store, "busy", ("tests.post_once", {"key": "batched"}))
    runner.submit_many([*idle, busy])
    wait_for(lambda: all(state(store, r) == DONE for r in [*idle, busy]), 10, "the batch")
    assert read_lines(settings.data_dir / GITHUB_LOG).count(marker("batched")) == 1
    runner.submit_many([*idle, busy])  # a repeated batch: nothing is claimable, nothing reruns
    time.sleep(0.5)
    assert read_lines(settings.data_dir / GITHUB_LOG).count(marker("batched")) == 1


def test_claim_many_wins_each_row_once_and_keeps_the_order(store: Store) -> None:
    inbox = Inbox(store)
    rows = [deliver(store, f"c-{n}") for n in range(5)]
    first = inbox.claim_many([rows[3], rows[1], rows[4]], 60)
    assert [r.id for r in first] == [rows[3], rows[1], rows[4]]
    assert all(r.attempts == 1 for r in first)
    second = inbox.claim_many(rows, 60)
    assert [r.id for r in second] == [rows[0], rows[2]]
    inbox.finish_many([r.id for r in first])
    assert [state(store, r) for r in rows] == ["running", "done", "running", "done", "done"]
    assert inbox.claim_many([], 60) == []


def test_claim_many_without_bodies_and_the_bodies_read_apart(store: Store) -> None:
    inbox = Inbox(store)
    rows = [deliver(store, f"b-{n}") for n in range(3)]
    claimed = inbox.claim_many(rows, 60, bodies=False)
    assert [r.id for r in claimed] == rows
    assert all(r.body == b"" and r.state == "running" for r in claimed)
    bodies = inbox.bodies_of([rows[2], rows[0], 10**9])
    assert sorted(bodies) == [rows[0], rows[2]]  # a missing row is simply absent
    assert bodies[rows[0]] == inbox.get(rows[0]).body != b""
    assert inbox.bodies_of([]) == {}


def test_rows_with_nothing_to_do_are_finished_unless_someone_else_holds_them(
    store: Store,
) -> None:
    inbox = Inbox(store)
    rows = [deliver(store, f"u-{n}") for n in range(3)]
    [taken] = inbox.claim_many([rows[1]], 60)  # another processor's live lease
    assert [r.id for r in inbox.claimable_heads(rows)] == [rows[0], rows[2]]
    assert inbox.finish_unclaimed(rows) == [rows[0], rows[2]]
    assert [state(store, r) for r in rows] == [DONE, "running", DONE]
    assert inbox.finish_unclaimed(rows) == []  # done rows are not finished twice
    assert taken.id == rows[1]


class RecordingRouter:
    """Routes nothing; remembers each payload it saw and how many rows were done by then."""

    def __init__(self, store: Store, watched: list[int]) -> None:
        self.store = store
        self.watched = watched
        self.payloads: dict[str, Mapping[str, Any]] = {}
        self.done_at_each_route: list[int] = []

    def route(
        self, event: str, action: str, payload: Mapping[str, Any], *, delivery_id: str
    ) -> list[Job]:
        self.done_at_each_route.append(sum(state(self.store, row) == DONE for row in self.watched))
        self.payloads[delivery_id] = payload
        return []


def test_payloads_parsed_by_the_receiver_are_routed_without_parsing_again(
    settings: Settings, store: Store
) -> None:
    rows = [deliver(store, "parsed"), deliver(store, "unparsed")]
    router = RecordingRouter(store, rows)
    runner = EmbeddedRunner(settings, store, lambda _: router)
    runner.start()
    try:
        given = {"jobs": [], "parsed": "by the receiver"}
        runner.submit_parsed(
            [
                (rows[0], Delivery("parsed", "issues", "opened", 5, b"{}", payload=given)),
                (rows[1], Delivery("unparsed", "issues", "opened", 5, b"{}")),
            ]
        )
        wait_for(lambda: all(state(store, r) == DONE for r in rows), 10, "both rows done")
    finally:
        runner.stop()
    assert router.payloads["parsed"] is given
    assert router.payloads["unparsed"] == {"jobs": []}  # parsed from the stored body


def test_a_parsed_row_finished_elsewhere_meanwhile_is_left_as_it_is(
    settings: Settings, store: Store
) -> None:
    """Parsed rows are routed without reading the inbox first; finishing then skips a row
    that is no longer claimable, so a sweeper or worker that got there first keeps it."""
    inbox = Inbox(store)
    done_elsewhere, fresh = deliver(store, "elsewhere"), deliver(store, "fresh")
    claimed = inbox.claim(done_elsewhere, lease_s=60)
    assert claimed is not None
    inbox.finish(done_elsewhere)
    router = RecordingRouter(store, [done_elsewhere, fresh])
    runner = EmbeddedRunner(settings, store, lambda _: router)
    runner.start()
    try:
        runner.submit_parsed(
            [
                (row_id, Delivery(guid, "issues", "opened", 5, b"{}", payload={"jobs": []}))
                for row_id, guid in [(done_elsewhere, "elsewhere"), (fresh, "fresh")]
            ]
        )
        wait_for(lambda: state(store, fresh) == DONE, 10, "the fresh row done")
    finally:
        runner.stop()
    assert set(router.payloads) >= {"elsewhere", "fresh"}
    rows = {row_id: inbox.get(row_id) for row_id in (done_elsewhere, fresh)}
    assert {row_id: (row.state, row.attempts) for row_id, row in rows.items() if row} == {
        done_elsewhere: (DONE, 1),  # its one claim, not a second attempt
        fresh: (DONE, 1),
    }


def test_rows_arriving_in_a_burst_are_processed_as_one_batch(tmp_path: Path, store: Store) -> None:
    settings = embedded_settings(tmp_path, sweep_interval_s=60, sweep_after_s=60)
    rows = [deliver(store, f"burst-{n}") for n in range(8)]
    router = RecordingRouter(store, rows)
    runner = EmbeddedRunner(settings, store, lambda _: router)
    runner.start()
    try:
        time.sleep(0.3)  # past the start-up sweep
        for row in rows:  # closer together than ROW_QUIET_S
            runner.submit(row)
            time.sleep(0.005)
        wait_for(lambda: all(state(store, r) == DONE for r in rows), 10, "the burst done")
    finally:
        runner.stop()
    # One batch: every row routed before any was finished (one finishing statement for all).
    assert router.done_at_each_route == [0] * len(rows)


def test_a_steady_stream_does_not_defer_processing_past_the_maximum(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No sweep during the stream: a due timer also ends a batch, and would hide the maximum.
    settings = embedded_settings(tmp_path, sweep_interval_s=60, sweep_after_s=60)
    monkeypatch.setattr("app.webhooks.embedded.ROW_QUIET_S", 0.2)  # no gap in the stream is a pause
    monkeypatch.setattr("app.webhooks.embedded.ROW_MAX_DEFER_S", 0.1)
    rows = [deliver(store, f"stream-{n}") for n in range(80)]
    runner = EmbeddedRunner(settings, store, lambda _: PayloadRouter())
    runner.start()
    first_done_while_streaming = False
    try:
        time.sleep(0.3)  # past the start-up sweep
        for row in rows:  # only the maximum can end a batch before the stream does
            runner.submit(row)
            time.sleep(0.005)
            first_done_while_streaming |= state(store, rows[0]) == DONE
        wait_for(lambda: all(state(store, r) == DONE for r in rows), 10, "the stream done")
    finally:
        runner.stop()
    assert first_done_while_streaming
