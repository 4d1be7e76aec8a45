"""app.webhooks.recovery: the inbox sweeper and the redelivery of failed webhook deliveries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert

from app.jobs.context import JobContext, effect_done, record_effect
from app.settings import Settings
from app.store import Store
from app.store.schema import halts
from app.webhooks.inbox import Delivery, Inbox
from app.webhooks.recovery import (
    MAX_REDELIVERIES,
    PAGE_SIZE,
    REDELIVERY_WINDOW,
    RedeliveryReport,
    redeliver_failed,
    sweep_overdue,
)
from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink

DELIVERIES = "/app/hook/deliveries"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_sweep_submits_only_rows_left_unfinished(sqlite_store: Store) -> None:
    inbox = Inbox(sqlite_store)
    stale = inbox.record(Delivery("old", "ping", "", None, b"{}"))
    done = inbox.record(Delivery("done", "ping", "", None, b"{}"))
    assert stale is not None and done is not None
    inbox.finish(done)
    submitted: list[int] = []
    assert sweep_overdue(sqlite_store, submitted.append, older_than_s=3600) == []
    assert sweep_overdue(sqlite_store, submitted.append, older_than_s=0) == [stale]
    assert submitted == [stale]


def app_context(sandbox: SandboxHandle, store: Store, tmp_path: Path) -> JobContext:
    settings = Settings(
        data_dir=tmp_path,
        database_url=None,
        app_id=sandbox.app.id,
        private_key=sandbox.app.private_key_pem,
        github_api_url=sandbox.url,
    )
    return JobContext.from_settings(settings, store=store)


def open_issues(sandbox: SandboxHandle, repo: SeededRepo, *titles: str) -> dict[str, Attempt]:
    """Open one issue per title; the first attempt of each `issues.opened`, by title."""
    owner = sandbox.github_user(repo.owner)  # keep the client alive while its namespace is used
    for title in titles:
        owner.rest.issues.create(repo.owner, repo.name, title=title)
    assert sandbox.control.wait_idle()
    return {
        a["payload"]["issue"]["title"]: Attempt(a["id"], a["guid"])
        for a in sandbox.control.deliveries()
        if a["event"] == "issues" and not a["redelivery"]
    }


@dataclass(frozen=True)
class Attempt:
    id: int
    guid: str


def redeliver(sandbox: SandboxHandle, attempt: Attempt, times: int) -> None:
    """Ask for `times` more attempts of `attempt`'s delivery, as a person (or a run) might."""
    app = sandbox.github_app()
    for _ in range(times):
        app.rest.apps.redeliver_webhook_delivery(attempt.id)
    assert sandbox.control.wait_idle()


def asks(sandbox: SandboxHandle, since: int) -> list[dict[str, Any]]:
    """The redelivery requests served after the first `since` log entries."""
    return [
        entry
        for entry in sandbox.control.stats()["log"][since:]
        if entry["method"] == "POST" and entry["route"] == f"{DELIVERIES}/{{delivery_id}}/attempts"
    ]


def listings(sandbox: SandboxHandle, since: int) -> int:
    log = sandbox.control.stats()["log"][since:]
    return sum(1 for entry in log if (entry["method"], entry["path"]) == ("GET", DELIVERIES))


@pytest.mark.slow
def test_redelivers_failed_deliveries_the_inbox_lacks_once(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, sqlite_store: Store, tmp_path: Path
) -> None:
    repo = sandbox.create_repo()
    assert sandbox.control.wait_idle()  # the set-up's own events are delivered fine
    webhook_sink.status = 502  # the receiver is down
    opened = open_issues(sandbox, repo, "lost", "in-inbox", "asked-before", "hopeless", "recovered")
    lost = opened["lost"]
    redeliver(sandbox, opened["hopeless"], MAX_REDELIVERIES)  # MAX_REDELIVERIES + 1 failures
    # Enough failed attempts of one delivery that the others are on the second page, then one
    # that succeeds: that delivery is recovered, however often it failed before.
    redeliver(sandbox, opened["recovered"], PAGE_SIZE)
    webhook_sink.status = 202
    redeliver(sandbox, opened["recovered"], 1)
    webhook_sink.status = 502  # down again: what ourobot asks for now fails too
    Inbox(sqlite_store).record(Delivery(opened["in-inbox"].guid, "issues", "opened", 9, b"{}"))
    ctx = app_context(sandbox, sqlite_store, tmp_path)
    record_effect(ctx, f"redeliver:{opened['asked-before'].guid}:1")  # an earlier run asked

    # Deliveries older than GitHub's redelivery window are not listed further, nor asked for.
    mark = len(sandbox.control.stats()["log"])
    later = datetime.now(UTC) + REDELIVERY_WINDOW + timedelta(hours=1)
    assert redeliver_failed(ctx, now=later) == RedeliveryReport("ok", ())
    assert (listings(sandbox, mark), asks(sandbox, mark)) == (1, [])

    mark = len(sandbox.control.stats()["log"])
    report = redeliver_failed(ctx)

    assert (report.execution, report.redelivered) == ("ok", (lost.id,))
    assert listings(sandbox, mark) == 2  # both pages
    [ask] = asks(sandbox, mark)
    assert ask["path"] == f"{DELIVERIES}/{lost.id}/attempts"
    assert ask["identity"] == f"app:{sandbox.app.id}"  # the App's JWT
    assert effect_done(ctx, f"redeliver:{lost.guid}:1")

    # The redelivery failed too (the receiver is still down): one more ask, for the new one.
    assert sandbox.control.wait_idle()
    webhook_sink.status = 202
    mark = len(sandbox.control.stats()["log"])
    (again,) = redeliver_failed(ctx).redelivered
    assert again > lost.id
    assert [a["path"] for a in asks(sandbox, mark)] == [f"{DELIVERIES}/{again}/attempts"]

    # That one got through: nothing is left to ask for, however often this runs.
    assert sandbox.control.wait_idle()
    mark = len(sandbox.control.stats()["log"])
    assert redeliver_failed(ctx).redelivered == ()
    assert redeliver_failed(ctx).redelivered == ()
    assert asks(sandbox, mark) == []


@pytest.mark.slow
def test_redelivery_skips_a_halted_installation(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, sqlite_store: Store, tmp_path: Path
) -> None:
    repo = sandbox.create_repo()
    assert sandbox.control.wait_idle()
    webhook_sink.status = 502
    open_issues(sandbox, repo, "lost")
    with sqlite_store.session() as session:
        session.execute(
            insert(halts).values(
                scope=f"installation:{repo.installation_id}", reason="test", set_by="op", set_at=NOW
            )
        )
    ctx = app_context(sandbox, sqlite_store, tmp_path)
    mark = len(sandbox.control.stats()["log"])
    assert redeliver_failed(ctx).redelivered == ()
    assert listings(sandbox, mark) == 1
    assert asks(sandbox, mark) == []


def test_redelivery_without_app_credentials_is_an_infra_skip(
    sandbox: SandboxHandle, sqlite_store: Store, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=None, github_api_url=sandbox.url)
    report = redeliver_failed(JobContext.from_settings(settings, store=sqlite_store))
    assert report.execution == "infra"
    assert "credentials" in report.reason
    assert sandbox.control.stats()["total"] == 0


@pytest.mark.slow
def test_redelivery_against_the_sandbox_recovers_a_delivery_the_receiver_missed(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, sqlite_store: Store, tmp_path: Path
) -> None:
    repo = sandbox.create_repo()
    assert sandbox.control.wait_idle()  # the set-up's own events are delivered fine
    webhook_sink.status = 502  # the receiver is down
    owner = sandbox.github_user(repo.owner)  # keep the client alive while its namespace is used
    owner.rest.issues.create(repo.owner, repo.name, title="missed")
    (missed,) = webhook_sink.wait_for("issues", "opened")
    assert sandbox.control.wait_idle()
    webhook_sink.status = 202  # back up; GitHub will not retry on its own
    settings = Settings(
        data_dir=tmp_path,
        database_url=None,
        app_id=sandbox.app.id,
        private_key=sandbox.app.private_key_pem,
        github_api_url=sandbox.url,
    )
    ctx = JobContext.from_settings(settings, store=sqlite_store)

    first = redeliver_failed(ctx)
    assert first.execution == "ok" and len(first.redelivered) == 1
    missed_again, redelivered = webhook_sink.wait_for("issues", "opened", count=2)
    assert missed_again is missed
    assert (redelivered.guid, redelivered.body) == (missed.guid, missed.body)
    assert sandbox.control.wait_idle()

    assert redeliver_failed(ctx).redelivered == ()  # it succeeded: nothing more to ask
    assert len(webhook_sink.of("issues", "opened")) == 2
