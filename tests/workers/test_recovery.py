"""app.webhooks.recovery: the inbox sweeper and the redelivery of failed webhook deliveries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import insert

from app.jobs.context import JobContext, effect_done
from app.settings import Settings
from app.store import Store
from app.store.schema import halts
from app.webhooks.inbox import Delivery, Inbox
from app.webhooks.recovery import MAX_REDELIVERIES, redeliver_failed, sweep_overdue
from tests.plugins.sandbox import SandboxHandle, WebhookSink
from tests.workers.fake_github import Answer, FakeGitHub

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


@pytest.fixture(scope="module")
def private_key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def app_context(store: Store, fake: FakeGitHub, tmp_path: Path, key: str) -> JobContext:
    settings = Settings(
        data_dir=tmp_path,
        database_url=None,
        app_id=42,
        private_key=key,
        github_api_url=fake.url,
    )
    return JobContext.from_settings(settings, store=store)


def item(ident: int, guid: str, status_code: int, *, age: timedelta, iid: int = 9) -> Any:
    return {
        "id": ident,
        "guid": guid,
        "delivered_at": (NOW - age).isoformat(),
        "redelivery": False,
        "duration": 0.5,
        "status": "OK" if status_code < 300 else "Invalid HTTP Response: 502",
        "status_code": status_code,
        "event": "issues",
        "action": "opened",
        "installation_id": iid,
        "repository_id": 1,
    }


def script_deliveries(fake: FakeGitHub, first: list[Any], second: list[Any]) -> None:
    # Two pages joined by a cursor in the Link header, as GitHub paginates deliveries.
    fake.script(
        "GET",
        DELIVERIES,
        Answer(200, first, (("link", f'<{fake.url}{DELIVERIES}?cursor=p2>; rel="next"'),)),
        Answer(200, second),
    )
    fake.script("POST", f"{DELIVERIES}/1/attempts", Answer(202, {}))
    fake.script("POST", f"{DELIVERIES}/8/attempts", Answer(202, {}))


def test_redelivers_failed_deliveries_the_inbox_lacks_once(
    sqlite_store: Store, fake_github: FakeGitHub, tmp_path: Path, private_key_pem: str
) -> None:
    Inbox(sqlite_store).record(Delivery("in-inbox", "issues", "opened", 9, b"{}"))
    first_page = [
        item(1, "lost", 502, age=timedelta(minutes=5)),
        item(2, "recovered", 200, age=timedelta(minutes=6)),
        item(3, "recovered", 500, age=timedelta(minutes=7)),
        item(4, "in-inbox", 504, age=timedelta(minutes=8)),
    ]
    second_page = [
        item(5 + n, "hopeless", 502, age=timedelta(hours=1, minutes=n))
        for n in range(MAX_REDELIVERIES + 1)
    ] + [item(20, "too-old", 502, age=timedelta(days=4))]
    script_deliveries(fake_github, first_page, second_page)
    ctx = app_context(sqlite_store, fake_github, tmp_path, private_key_pem)

    report = redeliver_failed(ctx, now=NOW)

    assert (report.execution, report.redelivered) == ("ok", (1,))
    assert [r.query for r in fake_github.calls("GET", DELIVERIES)] == [
        "per_page=100",
        "per_page=100&cursor=p2",
    ]
    assert len(fake_github.calls("POST", f"{DELIVERIES}/1/attempts")) == 1
    posts = [r for r in fake_github.requests if r.method == "POST"]
    assert [r.path for r in posts] == [f"{DELIVERIES}/1/attempts"]
    assert posts[0].headers["Authorization"].startswith("Bearer ")  # the App's JWT
    assert effect_done(ctx, "redeliver:lost:1")

    # Run again, as the periodic job does: nothing is asked twice.
    script_deliveries(fake_github, first_page, second_page)
    assert redeliver_failed(ctx, now=NOW).redelivered == ()
    assert len(fake_github.calls("POST", f"{DELIVERIES}/1/attempts")) == 1

    # The redelivery failed too (the receiver is still down): one more ask, for the new one.
    retried = [item(8, "lost", 502, age=timedelta(minutes=1)), *first_page]
    script_deliveries(fake_github, retried, [])
    assert redeliver_failed(ctx, now=NOW).redelivered == (8,)


def test_redelivery_skips_a_halted_installation(
    sqlite_store: Store, fake_github: FakeGitHub, tmp_path: Path, private_key_pem: str
) -> None:
    with sqlite_store.session() as session:
        session.execute(
            insert(halts).values(scope="installation:9", reason="test", set_by="op", set_at=NOW)
        )
    script_deliveries(fake_github, [item(1, "lost", 502, age=timedelta(minutes=5))], [])
    ctx = app_context(sqlite_store, fake_github, tmp_path, private_key_pem)
    assert redeliver_failed(ctx, now=NOW).redelivered == ()
    assert fake_github.calls("POST", f"{DELIVERIES}/1/attempts") == []


def test_redelivery_without_app_credentials_is_an_infra_skip(
    sqlite_store: Store, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=None, github_api_url=fake_github.url)
    report = redeliver_failed(JobContext.from_settings(settings, store=sqlite_store))
    assert report.execution == "infra"
    assert "credentials" in report.reason
    assert fake_github.requests == []


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
