"""Signed webhook delivery: a background thread POSTs each event to the App's webhook URL, in
the order the events happened, with GitHub's headers and signatures, and records every attempt
for the deliveries API. There is no automatic retry (GitHub has none either); a redelivery is a
new attempt with the same `X-GitHub-Delivery` and `redelivery: true`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any

import httpx

from app.sandbox.serial import SerialWorker
from app.sandbox.state import Attempt, SandboxState
from app.sandbox.tap import DeliverySink

USER_AGENT = "GitHub-Hookshot/sandbox"
DELIVERY_TIMEOUT_S = 10.0  # GitHub gives a receiver 10 s


def signatures(secret: str, body: bytes) -> dict[str, str]:
    """`X-Hub-Signature` (sha1) and `X-Hub-Signature-256`, HMAC over the exact body bytes."""
    key = secret.encode()
    return {
        "X-Hub-Signature": "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest(),
        "X-Hub-Signature-256": "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest(),
    }


def encode_payload(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


class WebhookDispatcher:
    """Queues attempts and delivers them from one thread, so order is preserved."""

    def __init__(self, state: SandboxState, sink: DeliverySink | None = None) -> None:
        self._state = state
        self._sink = sink  # told of every attempt once it was made
        self._worker = SerialWorker(
            "sandbox-webhooks", self._deliver, stop_timeout_s=DELIVERY_TIMEOUT_S + 5
        )
        self._client: httpx.Client | None = None

    # ----- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._client = httpx.Client(timeout=DELIVERY_TIMEOUT_S, trust_env=False)
        self._worker.start()

    def stop(self) -> None:
        self._worker.stop()
        if self._client is not None:
            self._client.close()
            self._client = None

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until every queued attempt has been tried; False on timeout."""
        return self._worker.wait_idle(timeout_s)

    # ----- producing ----------------------------------------------------------------------------
    def emit(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        installation_id: int | None,
        repository_id: int | None,
    ) -> Attempt | None:
        """Record and queue one event; nothing happens while no webhook URL is configured.

        Callers hold the state lock, so the order of `emit` calls is the order of delivery.
        """
        if not self._state.webhook.url:
            return None
        attempt = Attempt(
            id=self._state.next_id(),
            guid=str(uuid.uuid4()),
            event=event,
            action=payload.get("action"),
            installation_id=installation_id,
            repository_id=repository_id,
            body=encode_payload(payload),
            redelivery=False,
            created_at=time.time(),
        )
        self._enqueue(attempt)
        return attempt

    def redeliver(self, original: Attempt) -> Attempt:
        attempt = Attempt(
            id=self._state.next_id(),
            guid=original.guid,
            event=original.event,
            action=original.action,
            installation_id=original.installation_id,
            repository_id=original.repository_id,
            body=original.body,
            redelivery=True,
            created_at=time.time(),
        )
        self._enqueue(attempt)
        return attempt

    def _enqueue(self, attempt: Attempt) -> None:
        self._state.attempts.append(attempt)
        self._worker.put(attempt)

    # ----- delivering ---------------------------------------------------------------------------
    def _headers(self, attempt: Attempt) -> dict[str, str]:
        with self._state.lock:
            app = self._state.app
            secret = self._state.webhook.secret
        headers = {
            "Accept": "*/*",
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-GitHub-Event": attempt.event,
            "X-GitHub-Delivery": attempt.guid,
            "X-GitHub-Hook-ID": str(app.hook_id),
            "X-GitHub-Hook-Installation-Target-Type": "integration",
            "X-GitHub-Hook-Installation-Target-ID": str(app.id),
        }
        if secret:
            headers.update(signatures(secret, attempt.body))
        return headers

    def _deliver(self, attempt: Attempt) -> None:
        with self._state.lock:
            url = self._state.webhook.url
            current = any(a is attempt for a in self._state.attempts)
        if not url or self._client is None or not current:
            return  # the webhook was unset or the state reset while this waited
        headers = self._headers(attempt)
        started = time.monotonic()
        status_code, status, response_headers, response_body = 0, "", {}, ""
        try:
            response = self._client.post(url, content=attempt.body, headers=headers)
            status_code = response.status_code
            status = "OK" if response.is_success else f"Invalid HTTP Response: {status_code}"
            response_headers = dict(response.headers)
            response_body = response.text[:4096]
        except httpx.TimeoutException:
            status = "timed out"
        except httpx.HTTPError as exc:
            status = f"failed to connect to host: {type(exc).__name__}"
        with self._state.lock:
            attempt.duration_s = time.monotonic() - started
            attempt.delivered_at = time.time()
            attempt.status_code = status_code
            attempt.status = status
            attempt.request_headers = headers
            attempt.response_headers = response_headers
            attempt.response_body = response_body
        if self._sink is not None:
            self._sink(_entry(attempt, headers, url))


def _entry(attempt: Attempt, headers: dict[str, str], url: str) -> dict[str, Any]:
    return {
        "t": round(attempt.created_at, 3),
        "event": attempt.event,
        "action": attempt.action,
        "guid": attempt.guid,
        "redelivery": attempt.redelivery,
        "url": url,
        "headers": list(headers.items()),
        "body": attempt.body.decode("utf-8"),
        "status": attempt.status_code,
    }
