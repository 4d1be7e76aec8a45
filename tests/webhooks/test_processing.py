"""app.webhooks.processing: claim a recorded delivery, route it, enqueue its jobs, finish it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from sqlalchemy import select

from app.jobs.context import JobContext
from app.jobs.registry import Job
from app.settings import Settings
from app.store import Store
from app.store.schema import webhook_inbox
from app.webhooks.inbox import DONE, FAILED, PENDING, Delivery, Inbox
from app.webhooks.processing import MAX_DELIVERY_ATTEMPTS, process_delivery


def context(store: Store) -> JobContext:
    return JobContext.from_settings(Settings(database_url=None), store=store)


class ScriptedRouter:
    """Stands in for app.handlers.router.Router: answers from a table, or raises."""

    def __init__(self, jobs: list[Job] | None = None, error: Exception | None = None) -> None:
        self.jobs = jobs or []
        self.error = error
        self.seen: list[tuple[str, str, str]] = []

    def route(
        self, event: str, action: str, payload: Mapping[str, Any], *, delivery_id: str
    ) -> list[Job]:
        self.seen.append((event, action, delivery_id))
        if self.error is not None:
            raise self.error
        return list(self.jobs)


def record(store: Store, delivery_id: str = "guid-1") -> int:
    body = json.dumps({"action": "opened", "installation": {"id": 7}}).encode()
    row_id = Inbox(store).record(Delivery(delivery_id, "issues", "opened", 7, body))
    assert row_id is not None
    return row_id


def row_state(store: Store, row_id: int) -> tuple[str, int, str | None]:
    with store.read_session() as session:
        found = session.execute(
            select(
                webhook_inbox.c.state, webhook_inbox.c.attempts, webhook_inbox.c.last_error
            ).where(webhook_inbox.c.id == row_id)
        ).one()
    return found.state, found.attempts, found.last_error


def test_process_delivery_routes_enqueues_and_finishes_once(store: Store) -> None:
    row_id = record(store)
    planned = [Job("tests.a", {"n": 1}), Job("tests.b", {"n": 2})]
    router, sent = ScriptedRouter(planned), []
    assert process_delivery(context(store), router, row_id, sent.append)
    assert sent == planned
    assert router.seen == [("issues", "opened", "guid-1")]
    assert row_state(store, row_id)[0] == DONE

    assert not process_delivery(context(store), router, row_id, sent.append)
    assert sent == planned  # a second submission of a done row enqueues nothing


def test_process_delivery_failure_leaves_the_row_for_the_sweeper(store: Store) -> None:
    row_id = record(store)
    router = ScriptedRouter(error=RuntimeError("router exploded"))
    with pytest.raises(RuntimeError):
        process_delivery(context(store), router, row_id, lambda job: None)
    state, attempts, error = row_state(store, row_id)
    assert (state, attempts) == (PENDING, 1)
    assert error is not None and "router exploded" in error
    assert Inbox(store).overdue(0.0) == [row_id]


def test_process_delivery_gives_up_after_max_attempts(store: Store) -> None:
    row_id = record(store)

    def broker_down(planned: Job) -> None:
        raise ConnectionError("broker down")

    router = ScriptedRouter([Job("tests.a", {})])
    for _ in range(MAX_DELIVERY_ATTEMPTS):
        with pytest.raises(ConnectionError):
            process_delivery(context(store), router, row_id, broker_down)
    assert row_state(store, row_id)[:2] == (FAILED, MAX_DELIVERY_ATTEMPTS)
    assert not process_delivery(context(store), router, row_id, broker_down)
