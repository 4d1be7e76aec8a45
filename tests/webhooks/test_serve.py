"""`ourobot serve` as a real process on 127.0.0.1: GitHub's example payloads, signatures, the body
cap, de-duplication, health, startup refusals and a clean stop.

Every response is checked for its exact status, so no 5xx can slip through; at the end the
server's log is checked for tracebacks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app.settings import Settings
from app.store import Store, latest_version
from app.store.schema import webhook_bodies, webhook_inbox
from app.webhooks.body_encoding import decode
from app.webhooks.receiver import WEBHOOK_PATH
from app.webhooks.signature import sign
from tests.webhooks.deliveries import (
    EXAMPLES,
    SECRET,
    fixture_body,
    fresh_delivery_id,
    signed_headers,
)
from tests.webhooks.serve_process import ServeProcess, run_ourobot, serve_env

pytestmark = pytest.mark.slow

MB = 1024 * 1024


@pytest.fixture(scope="module")
def client(served: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.url, timeout=60) as opened:
        yield opened


def _inbox_rows(served: ServeProcess, *delivery_ids: str) -> list[tuple[str, str, str, bytes]]:
    """(delivery id, event, action, body) of the server's inbox rows for these deliveries."""
    store = Store.open(Settings(data_dir=served.data_dir, database_url=None))
    columns = webhook_inbox.c
    try:
        with store.engine.connect() as connection:
            rows = connection.execute(
                select(
                    columns.delivery_id,
                    columns.event,
                    columns.action,
                    webhook_bodies.c.body,
                    webhook_bodies.c.encoding,
                )
                .join(webhook_bodies, webhook_bodies.c.inbox_id == columns.id)
                .where(columns.delivery_id.in_(delivery_ids))
                .order_by(columns.id)
            ).all()
    finally:
        store.close()
    return [
        (row.delivery_id, row.event, row.action, decode(bytes(row.body), row.encoding))
        for row in rows
    ]


def _post(client: httpx.Client, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return client.post(WEBHOOK_PATH, content=body, headers=headers)


def test_every_github_example_payload_is_accepted(
    client: httpx.Client, served: ServeProcess
) -> None:
    if not EXAMPLES.is_dir():
        pytest.skip(f"GitHub's webhook examples are not at {EXAMPLES} (a clone without ../shared)")
    examples = sorted(EXAMPLES.glob("*/*.json"))
    assert len(examples) > 200  # the whole octokit set, not a stray file
    refused, expected_rows = [], []
    for path in examples:
        event, body = path.parent.name, path.read_bytes()
        delivery_id = fresh_delivery_id()
        response = _post(client, body, signed_headers(body, event, delivery_id=delivery_id))
        if event == "ping":
            ok = (response.status_code, response.json()) == (200, {"status": "pong"})
        else:
            ok = response.status_code == 202 and response.json()["status"] == "accepted"
            action = json.loads(body).get("action") or ""
            expected_rows.append((delivery_id, event, action, body))
        if not ok:
            refused.append(f"{event}/{path.name}: {response.status_code} {response.text[:200]}")
    assert refused == []
    recorded = _inbox_rows(served, *(row[0] for row in expected_rows))
    assert recorded == expected_rows


@pytest.mark.parametrize(
    ("case", "headers"),
    [
        ("wrong secret", {"X-Hub-Signature-256": sign("not-the-secret", b"{}")}),
        ("missing", {}),
        ("sha1 only", {"X-Hub-Signature": "sha1=" + hashlib.sha1(b"x").hexdigest()}),  # noqa: S324
        ("sha1 in the sha256 header", {"X-Hub-Signature-256": "sha1=" + "0" * 40}),
        ("not hex", {"X-Hub-Signature-256": "sha256=" + "z" * 64}),
        ("truncated", {"X-Hub-Signature-256": sign(SECRET, b"{}")[:-2]}),
        ("empty", {"X-Hub-Signature-256": ""}),
    ],
)
def test_bad_missing_and_sha1_signatures_are_401(
    client: httpx.Client, served: ServeProcess, case: str, headers: dict[str, str]
) -> None:
    body = fixture_body("issues.opened")
    delivery_id = fresh_delivery_id()
    sent = {"X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery_id, **headers}
    response = _post(client, body, sent)
    assert response.status_code == 401, case
    assert response.json()["status"] == "rejected"
    assert _inbox_rows(served, delivery_id) == []


def test_signature_over_other_bytes_is_401(client: httpx.Client, served: ServeProcess) -> None:
    body = fixture_body("issues.opened")
    headers = signed_headers(body, "issues")
    tampered = body.replace(b'"opened"', b'"closed"', 1)
    assert tampered != body
    assert _post(client, tampered, headers).status_code == 401
    assert _inbox_rows(served, headers["X-GitHub-Delivery"]) == []


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"", b"[1, 2]", b'"a string"', b"\xff\xfe{}"],
    ids=["broken", "empty", "array", "string", "not utf-8"],
)
def test_malformed_bodies_are_400(client: httpx.Client, body: bytes) -> None:
    response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 400
    assert response.json()["status"] == "rejected"


@pytest.mark.parametrize("missing", ["X-GitHub-Event", "X-GitHub-Delivery"])
def test_missing_github_headers_are_400(client: httpx.Client, missing: str) -> None:
    body = fixture_body("issues.opened")
    headers = signed_headers(body, "issues")
    del headers[missing]
    response = _post(client, body, headers)
    assert response.status_code == 400
    assert missing in response.json()["reason"]


def _big_body(size: int) -> bytes:
    return b'{"padding": "' + b"x" * (size - 16) + b'"}'


def test_26_mb_body_is_413(client: httpx.Client) -> None:
    body = _big_body(26 * MB)
    response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 413


def test_26_mb_chunked_body_is_413(client: httpx.Client) -> None:
    """Without a Content-Length the server reads up to the cap, then refuses."""
    body = _big_body(26 * MB)
    headers = signed_headers(body, "issues")

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(body), MB):
            yield body[start : start + MB]

    response = client.post(WEBHOOK_PATH, content=chunks(), headers=headers)
    assert response.status_code == 413
    assert client.get("/healthz").status_code == 200


def test_body_just_under_the_cap_is_accepted(client: httpx.Client) -> None:
    body = _big_body(25 * MB - 1024)
    response = _post(client, body, signed_headers(body, "issues"))
    assert response.status_code == 202


def test_same_delivery_twice_makes_one_inbox_row(
    client: httpx.Client, served: ServeProcess
) -> None:
    body = fixture_body("issue_comment.created.with-installation")
    headers = signed_headers(body, "issue_comment")
    first = _post(client, body, headers)
    again = _post(client, body, headers)
    assert first.status_code == 202
    assert first.json() == {"status": "accepted", "id": first.json()["id"]}
    assert again.status_code == 202
    assert again.json() == {"status": "duplicate"}
    delivery_id = headers["X-GitHub-Delivery"]
    assert _inbox_rows(served, delivery_id) == [(delivery_id, "issue_comment", "created", body)]


def test_healthz_reports_mode_and_schema_without_secrets(client: httpx.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "mode": "embedded",
        "schema_version": latest_version(),
        "schema_current": True,
        "checks": {"inbox_process": "ok", "store": "ok"},
    }
    assert SECRET not in response.text


def test_log_has_one_line_per_delivery_and_no_traceback_or_body(
    client: httpx.Client, served: ServeProcess
) -> None:
    marker = "body-marker-" + fresh_delivery_id()
    body = json.dumps({"action": "opened", "note": marker}).encode()
    headers = signed_headers(body, "issues")
    assert _post(client, body, headers).status_code == 202
    log = served.log_once_it_has(headers["X-GitHub-Delivery"])
    lines = [line for line in log.splitlines() if headers["X-GitHub-Delivery"] in line]
    assert len(lines) == 1
    assert "event=issues action=opened outcome=accepted" in lines[0]
    assert marker not in log
    assert "Traceback" not in log
    assert SECRET not in log


# ---- startup and shutdown (their own processes) ----


def test_serve_without_a_secret_exits_2_with_one_line(tmp_path: Path) -> None:
    result = run_ourobot(["serve", "--port", "0"], serve_env(tmp_path / "data"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "OUROBOT_WEBHOOK_SECRET" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_on_a_taken_port_exits_2_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = serve_env(tmp_path / "data", OUROBOT_WEBHOOK_SECRET=SECRET)
        result = run_ourobot(["serve", "--port", str(port)], env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"127.0.0.1:{port}" in result.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_the_server_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    env = serve_env(tmp_path / "data", OUROBOT_WEBHOOK_SECRET=SECRET)
    server = ServeProcess(env, tmp_path / "serve.log").start()
    body = fixture_body("push.with-installation")
    response = httpx.post(
        server.url + WEBHOOK_PATH, content=body, headers=signed_headers(body, "push")
    )
    assert response.status_code == 202
    assert server.stop(sig) == 0
    log = server.log()
    assert "ourobot serve: stopped" in log
    assert "Traceback" not in log
    assert "warning: OUROBOT_APP_ID" in log  # started without App credentials, said so


def _children(pid: int) -> list[int]:
    listed = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in listed.read_text().split()] if listed.exists() else []


def _gone(pids: list[int], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() for pid in pids):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_inbox_process_outlives_serve(tmp_path: Path, sig: signal.Signals) -> None:
    env = serve_env(tmp_path / "data", OUROBOT_WEBHOOK_SECRET=SECRET)
    server = ServeProcess(env, tmp_path / "serve.log").start()
    children = _children(server.process.pid)
    assert children, "serve records in a child process"
    body = fixture_body("push.with-installation")
    response = httpx.post(
        server.url + WEBHOOK_PATH, content=body, headers=signed_headers(body, "push")
    )
    assert response.status_code == 202
    server.stop(sig)
    # Killed outright, serve cannot stop its child: the child sees the socket close and ends.
    assert _gone(children, within_s=15), f"left running: {children}"


def test_hmac_of_the_example_matches_githubs_documented_value() -> None:
    """GitHub's documented test vector for X-Hub-Signature-256."""
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == expected
    assert hmac.compare_digest(expected, sign(b"It's a Secret to Everybody", b"Hello, World!"))
