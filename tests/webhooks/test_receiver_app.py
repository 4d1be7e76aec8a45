"""The receiver app in process (no network): ordering of checks, the body cap measured in
chunks read, inline hook and dispatcher failures, duplicates under concurrency, the inbox
being unwritable, health and logging."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.errors import ConfigError
from app.settings import Settings
from app.store import Store, latest_version
from app.webhooks.dispatch import RecordingDispatcher
from app.webhooks.inbox import Delivery, Inbox
from app.webhooks.receiver import HEALTH_PATH, WEBHOOK_PATH, create_receiver_app
from app.webhooks.recorder import BatchingRecorder
from app.webhooks.signature import sign
from tests.webhooks.deliveries import SECRET, fixture_body, fresh_delivery_id, signed_headers


class FailingDispatcher:
    """A dispatcher whose broker is down (and which breaks its contract by raising)."""

    def __init__(self) -> None:
        self.calls = 0

    def submit(self, row_id: int) -> None:
        self.calls += 1
        raise ConnectionError("broker unreachable at 127.0.0.1:1")


@pytest.fixture
def dispatcher() -> RecordingDispatcher:
    return RecordingDispatcher()


@pytest.fixture
def inline_calls() -> list[Delivery]:
    return []


@pytest.fixture
def app(
    receiver_settings: Settings,
    sqlite_inbox: Inbox,
    dispatcher: RecordingDispatcher,
    inline_calls: list[Delivery],
) -> FastAPI:
    return create_receiver_app(
        receiver_settings, inbox=sqlite_inbox, dispatcher=dispatcher, inline=inline_calls.append
    )


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=True) as opened:
        yield opened


def _post(client: TestClient, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return client.post(WEBHOOK_PATH, content=body, headers=headers)


def _rows(inbox: Inbox) -> int:
    with inbox.store.engine.connect() as connection:
        count: int = connection.exec_driver_sql("SELECT count(*) FROM webhook_inbox").scalar_one()
    return count


# ---- a valid delivery ----


def test_valid_delivery_is_recorded_hooked_and_dispatched(
    app: FastAPI,
    sqlite_inbox: Inbox,
    dispatcher: RecordingDispatcher,
    inline_calls: list[Delivery],
) -> None:
    body = fixture_body("issue_comment.created.with-installation")
    headers = signed_headers(body, "issue_comment")
    with TestClient(app) as client:
        response = _post(client, body, headers)
        assert response.status_code == 202
        row_id = response.json()["id"]
        assert response.json() == {"status": "accepted", "id": row_id}
        # The inline hook ran before the answer, with the verified delivery.
        assert inline_calls == [
            Delivery(headers["X-GitHub-Delivery"], "issue_comment", "created", 1, body)
        ]
    # Leaving the client runs shutdown, which drains the dispatch queue.
    assert dispatcher.submitted == [row_id]
    row = sqlite_inbox.get(row_id)
    assert row is not None
    assert (row.event, row.action, row.installation_id, row.body) == (
        "issue_comment",
        "created",
        1,
        body,
    )


def test_inline_hook_sees_the_row_already_recorded(
    receiver_settings: Settings, sqlite_inbox: Inbox
) -> None:
    seen: list[int] = []

    def hook(delivery: Delivery) -> None:
        with sqlite_inbox.store.read_session() as session:
            seen.append(
                session.connection()
                .exec_driver_sql(
                    "SELECT count(*) FROM webhook_inbox WHERE delivery_id = ?",
                    (delivery.delivery_id,),
                )
                .scalar_one()
            )

    app = create_receiver_app(
        receiver_settings, inbox=sqlite_inbox, dispatcher=RecordingDispatcher(), inline=hook
    )
    body = fixture_body("issues.opened")
    with TestClient(app) as client:
        assert _post(client, body, signed_headers(body, "issues")).status_code == 202
    assert seen == [1]


def test_duplicate_is_acknowledged_but_not_hooked_or_dispatched_again(
    app: FastAPI,
    sqlite_inbox: Inbox,
    dispatcher: RecordingDispatcher,
    inline_calls: list[Delivery],
) -> None:
    body = fixture_body("issues.opened")
    headers = signed_headers(body, "issues")
    with TestClient(app) as client:
        first = _post(client, body, headers)
        again = _post(client, body, headers)
    assert first.status_code == again.status_code == 202
    assert again.json() == {"status": "duplicate"}
    assert dispatcher.submitted == [first.json()["id"]]
    assert len(inline_calls) == 1
    assert _rows(sqlite_inbox) == 1


def test_same_delivery_id_for_another_event_is_its_own_row(
    client: TestClient, sqlite_inbox: Inbox
) -> None:
    delivery_id = fresh_delivery_id()
    opened = fixture_body("issues.opened")
    comment = fixture_body("issue_comment.created.with-installation")
    for body, event in ((opened, "issues"), (comment, "issue_comment")):
        response = _post(client, body, signed_headers(body, event, delivery_id=delivery_id))
        assert response.json()["status"] == "accepted"
    assert _rows(sqlite_inbox) == 2


def test_ping_is_answered_200_and_not_recorded(
    app: FastAPI, sqlite_inbox: Inbox, dispatcher: RecordingDispatcher
) -> None:
    body = fixture_body("ping")
    with TestClient(app) as client:
        response = _post(client, body, signed_headers(body, "ping"))
    assert (response.status_code, response.json()) == (200, {"status": "pong"})
    assert _rows(sqlite_inbox) == 0
    assert dispatcher.submitted == []


def test_unknown_event_is_recorded_for_the_router_to_ignore(
    client: TestClient, sqlite_inbox: Inbox
) -> None:
    body = b'{"action": "sparkled", "installation": {"id": 9}}'
    response = _post(client, body, signed_headers(body, "event_from_the_future"))
    assert response.status_code == 202
    row = sqlite_inbox.get(response.json()["id"])
    assert row is not None
    assert (row.event, row.action, row.installation_id) == ("event_from_the_future", "sparkled", 9)


def test_payload_without_action_or_installation(client: TestClient, sqlite_inbox: Inbox) -> None:
    body = fixture_body("push.with-installation")
    response = _post(client, body, signed_headers(body, "push"))
    row = sqlite_inbox.get(response.json()["id"])
    assert row is not None and (row.action, row.installation_id) == ("", 1)
    odd = b'{"action": null, "installation": {"id": true}}'
    response = _post(client, odd, signed_headers(odd, "issues"))
    row = sqlite_inbox.get(response.json()["id"])
    assert row is not None and (row.action, row.installation_id) == ("", None)


# ---- failures after recording never fail the request ----


def test_a_failing_inline_hook_is_logged_and_the_delivery_still_dispatched(
    receiver_settings: Settings,
    sqlite_inbox: Inbox,
    dispatcher: RecordingDispatcher,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def hook(delivery: Delivery) -> None:
        raise RuntimeError("panic handler broke")

    app = create_receiver_app(
        receiver_settings, inbox=sqlite_inbox, dispatcher=dispatcher, inline=hook
    )
    body = fixture_body("issues.opened")
    with TestClient(app) as client:
        response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 202
    assert dispatcher.submitted == [response.json()["id"]]
    assert "inline hook failed" in caplog.text
    assert "panic handler broke" not in response.text


def test_a_failing_dispatcher_still_answers_202_and_leaves_the_row_pending(
    receiver_settings: Settings, sqlite_inbox: Inbox, caplog: pytest.LogCaptureFixture
) -> None:
    broken = FailingDispatcher()
    app = create_receiver_app(receiver_settings, inbox=sqlite_inbox, dispatcher=broken)
    body = fixture_body("issues.opened")
    with TestClient(app) as client:
        response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 202
    assert broken.calls == 1
    row = sqlite_inbox.get(response.json()["id"])
    assert row is not None and row.state == "pending"
    assert sqlite_inbox.overdue(older_than_s=0) == [row.id]  # the sweeper will find it
    assert "the sweeper will retry" in caplog.text


def test_an_unwritable_inbox_is_503_without_internals(
    client: TestClient, sqlite_inbox: Inbox, caplog: pytest.LogCaptureFixture
) -> None:
    with sqlite_inbox.store.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE webhook_inbox")
    body = fixture_body("issues.opened")
    response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert "webhook_inbox" not in response.text and "Traceback" not in response.text
    assert "inbox unavailable: OperationalError" in caplog.text
    assert body.decode()[:200] not in caplog.text  # statement parameters are not logged


# ---- refusals ----


@pytest.mark.parametrize(
    ("signature_headers", "reason"),
    [
        ([], "missing X-Hub-Signature-256"),
        ([("X-Hub-Signature", "sha1=" + "0" * 40)], "SHA-1"),
        ([("X-Hub-Signature-256", "SHA256=" + "0" * 64)], "malformed"),
        ([("X-Hub-Signature-256", "sha256=" + "0" * 63)], "malformed"),
        ([("X-Hub-Signature-256", "sha256=" + "0" * 64)], "does not match"),
        ([("X-Hub-Signature-256", "sha256=" + "0" * 64)] * 2, "more than one"),
    ],
)
def test_unsigned_requests_are_401_and_change_nothing(
    client: TestClient,
    sqlite_inbox: Inbox,
    signature_headers: list[tuple[str, str]],
    reason: str,
) -> None:
    body = fixture_body("issues.opened")
    headers = [
        ("X-GitHub-Event", "issues"),
        ("X-GitHub-Delivery", fresh_delivery_id()),
        *signature_headers,
    ]
    response = client.post(WEBHOOK_PATH, content=body, headers=headers)
    assert response.status_code == 401
    assert reason in response.json()["reason"]
    assert _rows(sqlite_inbox) == 0


def test_signature_is_checked_before_the_body_is_parsed(client: TestClient) -> None:
    """Unsigned garbage is 401 (not 400): nothing about it is looked at."""
    response = client.post(
        WEBHOOK_PATH, content=b"{broken", headers={"X-Hub-Signature-256": "sha256=" + "0" * 64}
    )
    assert response.status_code == 401


def test_a_signature_with_uppercase_hex_is_the_same_digest(client: TestClient) -> None:
    body = fixture_body("issues.opened")
    headers = signed_headers(body, "issues")
    headers["X-Hub-Signature-256"] = "sha256=" + headers["X-Hub-Signature-256"][7:].upper()
    assert _post(client, body, headers).status_code == 202


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
        (b"\xff{}", "not valid JSON"),
        (b"[]", "not a JSON object"),
        (b"null", "not a JSON object"),
        (b'{"action": 5}', "action is not a string"),
        (b'{"action": "open\\u0000ed"}', "action is malformed"),
        (b'{"action": "' + b"a" * 201 + b'"}', "action is malformed"),
    ],
    ids=["broken", "deep", "bad utf-8", "array", "null", "int action", "nul", "long action"],
)
def test_signed_but_unusable_bodies_are_400(
    client: TestClient, sqlite_inbox: Inbox, body: bytes, reason: str
) -> None:
    response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 400
    assert reason in response.json()["reason"]
    assert _rows(sqlite_inbox) == 0


def test_json_the_fast_parser_refuses_is_still_accepted(
    client: TestClient, sqlite_inbox: Inbox
) -> None:
    # orjson refuses integers past 64 bits; the standard library takes them, as did the receiver.
    body = b'{"action": "opened", "big": 123456789012345678901234567890}'
    assert _post(client, body, signed_headers(body, "issues")).status_code == 202
    assert _rows(sqlite_inbox) == 1


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("X-GitHub-Event", None),
        ("X-GitHub-Delivery", None),
        ("X-GitHub-Event", "issues opened"),
        ("X-GitHub-Event", "x" * 101),
        ("X-GitHub-Delivery", "id with spaces"),
        ("X-GitHub-Delivery", ""),
    ],
)
def test_missing_or_malformed_github_headers_are_400(
    client: TestClient, header: str, value: str | None
) -> None:
    body = fixture_body("issues.opened")
    headers = signed_headers(body, "issues")
    if value is None:
        del headers[header]
    else:
        headers[header] = value
    response = _post(client, body, headers)
    assert response.status_code == 400
    assert header in response.json()["reason"]


# ---- the body cap, measured at the ASGI boundary ----


async def _call_raw(
    app: FastAPI, headers: list[tuple[bytes, bytes]], chunks: list[bytes], *, disconnect: bool
) -> tuple[int, int]:
    """Drive the app with a body in chunks; the status and how many chunks it pulled."""
    pulled = 0
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if pulled < len(chunks):
            pulled += 1
            return {"type": "http.request", "body": chunks[pulled - 1], "more_body": True}
        if disconnect:
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": WEBHOOK_PATH,
        "raw_path": WEBHOOK_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 3000),
    }
    await app(scope, receive, send)
    return status[0], pulled


def _raw_headers(body_signature: str, **extra: str) -> list[tuple[bytes, bytes]]:
    headers = {
        "x-github-event": "issues",
        "x-github-delivery": fresh_delivery_id(),
        "x-hub-signature-256": body_signature,
        **extra,
    }
    return [(name.encode(), value.encode()) for name, value in headers.items()]


def test_an_endless_body_is_413_after_reading_just_past_the_cap(
    receiver_settings: Settings, sqlite_inbox: Inbox
) -> None:
    app = create_receiver_app(
        receiver_settings,
        inbox=sqlite_inbox,
        dispatcher=RecordingDispatcher(),
        max_body_bytes=10_000,
    )
    chunks = [b"x" * 1000] * 1000  # 1 MB offered, 10 kB allowed
    status, pulled = asyncio.run(
        _call_raw(app, _raw_headers("sha256=" + "0" * 64), chunks, disconnect=False)
    )
    assert status == 413
    assert pulled == 11  # ten chunks fit, the eleventh crosses the cap; nothing after it


def test_a_declared_length_over_the_cap_is_413_before_reading(
    receiver_settings: Settings, sqlite_inbox: Inbox
) -> None:
    app = create_receiver_app(
        receiver_settings, inbox=sqlite_inbox, dispatcher=RecordingDispatcher(), max_body_bytes=10
    )
    headers = _raw_headers("sha256=" + "0" * 64, **{"content-length": "11"})
    status, pulled = asyncio.run(_call_raw(app, headers, [b"x" * 11], disconnect=False))
    assert (status, pulled) == (413, 0)


@pytest.mark.parametrize("value", ["abc", "-1", "1e3", "١٢"])
def test_a_malformed_content_length_is_400(app: FastAPI, value: str) -> None:
    headers = _raw_headers("sha256=" + "0" * 64, **{"content-length": value})
    status, _ = asyncio.run(_call_raw(app, headers, [b"{}"], disconnect=False))
    assert status == 400


def test_a_client_that_disconnects_mid_body_gets_400_and_no_row(
    app: FastAPI, sqlite_inbox: Inbox
) -> None:
    body = fixture_body("issues.opened")
    half = len(body) // 2
    status, _ = asyncio.run(
        _call_raw(app, _raw_headers(sign(SECRET, body)), [body[:half]], disconnect=True)
    )
    assert status == 400
    assert _rows(sqlite_inbox) == 0


# ---- concurrency and group commit ----


def test_concurrent_deliveries_and_repeats_make_one_row_each(
    app: FastAPI, sqlite_inbox: Inbox, dispatcher: RecordingDispatcher
) -> None:
    body = fixture_body("issues.opened")
    repeated = signed_headers(body, "issues")
    requests = [signed_headers(body, "issues") for _ in range(30)] + [repeated] * 10
    with TestClient(app) as client, ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(lambda headers: _post(client, body, headers), requests))
    assert {response.status_code for response in responses} == {202}
    statuses = [response.json()["status"] for response in responses]
    assert statuses[:30] == ["accepted"] * 30
    assert sorted(statuses[30:]) == ["accepted"] + ["duplicate"] * 9
    accepted = [response.json()["id"] for response in responses if "id" in response.json()]
    assert len(set(accepted)) == 31
    assert sorted(dispatcher.submitted) == sorted(accepted)
    assert _rows(sqlite_inbox) == 31


def test_one_bad_row_does_not_fail_the_deliveries_batched_with_it(
    sqlite_inbox: Inbox, caplog: pytest.LogCaptureFixture
) -> None:
    """A row the database refuses fails alone; the others in its batch are still recorded."""
    path = sqlite_inbox.store.engine.url.database
    assert path is not None
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON webhook_inbox "
            "WHEN NEW.delivery_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
        )
    recorder = BatchingRecorder(sqlite_inbox)

    async def record_all() -> list[Any]:
        # Hold the write lock so all three queue up and reach the writer as one batch.
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        tasks = [
            asyncio.ensure_future(recorder.record(Delivery(name, "issues", "", None, b"{}")))
            for name in ("first", "poison", "last")
        ]
        await asyncio.sleep(0.3)
        blocker.execute("COMMIT")
        blocker.close()
        return await asyncio.gather(*tasks, return_exceptions=True)

    try:
        first, poison, last = asyncio.run(record_all())
    finally:
        recorder.close()
    assert isinstance(first, int) and isinstance(last, int)
    assert isinstance(poison, Exception) and "poisoned row" in str(poison)
    assert _rows(sqlite_inbox) == 2
    assert "failed; recording them one by one" in caplog.text  # the batch path was taken


# ---- health, configuration, logging ----


def test_healthz_reports_ok_mode_and_schema(client: TestClient) -> None:
    response = client.get(HEALTH_PATH)
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "mode": "embedded",
        "schema_version": latest_version(),
        "schema_current": True,
        "checks": {"inbox_process": "ok", "store": "ok"},
    }


def test_healthz_says_redis_mode_and_503_when_the_database_is_down(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        webhook_secret=SECRET,
        redis_url="redis://127.0.0.1:1/0",
        database_url="postgresql://nobody@127.0.0.1:1/nothing",
    )
    store = Store.open(settings)
    app = create_receiver_app(settings, inbox=Inbox(store), dispatcher=RecordingDispatcher())
    try:
        with TestClient(app) as client:
            response = client.get(HEALTH_PATH)
    finally:
        store.close()
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "mode": "redis",
        "checks": {"inbox_process": "ok", "store": "unavailable", "redis": "unavailable"},
    }


@pytest.mark.parametrize("secret", [None, ""])
def test_no_receiver_without_a_webhook_secret(
    tmp_path: Path, sqlite_inbox: Inbox, secret: str | None
) -> None:
    settings = Settings(data_dir=tmp_path, webhook_secret=secret)
    with pytest.raises(ConfigError, match="OUROBOT_WEBHOOK_SECRET"):
        create_receiver_app(settings, inbox=sqlite_inbox, dispatcher=RecordingDispatcher())


def test_one_log_line_per_delivery_without_the_body(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="app.webhooks")
    body = json.dumps({"action": "opened", "secret_note": "do-not-log-me"}).encode()
    headers = signed_headers(body, "issues")
    _post(client, body, headers)
    _post(client, body, headers)
    _post(client, body, {**headers, "X-Hub-Signature-256": sign("wrong", body)})
    lines = [r.getMessage() for r in caplog.records if r.name == "app.webhooks"]
    delivery_id = headers["X-GitHub-Delivery"]
    assert lines == [
        f"webhook delivery={delivery_id} event=issues action=opened outcome=accepted id=1",
        f"webhook delivery={delivery_id} event=issues action=opened outcome=duplicate",
        f"webhook delivery='{delivery_id}' event='issues' action=- outcome=rejected 401: "
        "X-Hub-Signature-256 does not match the body",
    ]
    assert "do-not-log-me" not in caplog.text


class ParsedRecorder:
    """An in-memory dispatcher: called on the writer thread with the parsed payloads."""

    in_memory = True

    def __init__(self) -> None:
        self.rows: list[tuple[int, Delivery]] = []
        self.threads: set[str] = set()

    def submit(self, row_id: int) -> None:
        raise AssertionError("an in-memory dispatcher gets submit_parsed")

    def submit_parsed(self, rows: list[tuple[int, Delivery]]) -> None:
        self.threads.add(threading.current_thread().name)
        self.rows.extend(rows)


def test_in_memory_dispatcher_gets_the_parsed_payload_from_the_writer_thread(
    receiver_settings: Settings, sqlite_inbox: Inbox
) -> None:
    dispatcher = ParsedRecorder()
    app = create_receiver_app(receiver_settings, inbox=sqlite_inbox, dispatcher=dispatcher)
    body = fixture_body("issues.opened")
    headers = signed_headers(body, "issues")
    with TestClient(app) as client:
        first = _post(client, body, headers)
        assert _post(client, body, headers).json() == {"status": "duplicate"}
    assert [(row_id, d.payload) for row_id, d in dispatcher.rows] == [
        (first.json()["id"], json.loads(body))
    ]
    [(_, delivery)] = dispatcher.rows
    assert (delivery.event, delivery.action, delivery.delivery_id) == (
        "issues",
        "opened",
        headers["X-GitHub-Delivery"],
    )
    assert dispatcher.threads == {"inbox-writer"}
