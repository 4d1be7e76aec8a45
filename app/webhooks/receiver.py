"""The webhook receiver: an ASGI app that verifies, records, and acknowledges GitHub deliveries.

Order of checks, cheapest and least trusting first: a declared body over the cap (413); a
missing or malformed X-Hub-Signature-256 (401, SHA-1 alone is refused); the body, read up to
the cap (413); the signature compared in constant time (401). Only then is anything parsed:
GitHub's headers and a JSON object body (400 otherwise).

A valid delivery goes to a `Recorder` and is answered once it is committed to the durable
inbox; concurrent deliveries share one commit. Right after the commit, and before the answer,
the inline hook runs (the /panic path, which must act before anything is queued); after it,
the new row goes to the dispatcher. Neither can fail the request: the row is durable and the
sweeper re-submits what stays pending, so a slow or absent broker delays neither the 202 nor
the next delivery. `ourobot serve` records in its inbox process (`inbox_process`); tests and
embedders can record in this process (`InProcessRecorder`).

Every event except `ping` is recorded (202); the router decides which events matter, so an
event the receiver has never heard of is kept for it rather than dropped here. `ping` is
answered 200 and not stored. A duplicate (same delivery id, event and action) is answered 202
and neither hooked nor dispatched again. An inbox that cannot be written is the one 5xx (503):
GitHub then marks the delivery failed and the redelivery job asks for it again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio.to_thread
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from app.errors import ConfigError
from app.settings import Settings
from app.webhooks.body import (
    MAX_BODY_BYTES,
    BadContentLength,
    BodyTooLarge,
    check_declared_length,
    read_capped,
)
from app.webhooks.delivery import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    BadDelivery,
    Received,
    parse_body,
    parse_headers,
)
from app.webhooks.dispatch import Dispatcher
from app.webhooks.handoff import (
    DispatchQueue,
    InlineHook,
    describe,
    guarded_inline,
    log_delivery,
)
from app.webhooks.health import HealthCheck, redis_for_health
from app.webhooks.inbox import Inbox
from app.webhooks.recorder import BatchingRecorder
from app.webhooks.signature import SIGNATURE_HEADER, parse_signature
from app.webhooks.signature import matches as signature_matches

log = logging.getLogger("app.webhooks")

WEBHOOK_PATH = "/api/github/webhooks"
HEALTH_PATH = "/healthz"
PING_EVENT = "ping"
_SHA1_HEADER = "X-Hub-Signature"


class Recorder(Protocol):
    """Makes a verified delivery durable; what the receiver awaits before it answers."""

    async def record(self, received: Received) -> int | None:
        """The new row id, or None for a duplicate; BadDelivery for a body that is not a
        usable delivery (400); any other exception when the inbox cannot be written (503)."""
        ...

    def close(self) -> None:
        """Finish what is queued, then stop."""
        ...

    def alive(self) -> bool:
        """Whether deliveries can be recorded now (for the health check)."""
        ...


class InProcessRecorder:
    """The inbox writer, the inline hook and the dispatcher in this process, on threads."""

    def __init__(
        self, inbox: Inbox, dispatcher: Dispatcher, inline: InlineHook | None = None
    ) -> None:
        self._dispatch = DispatchQueue(dispatcher)
        self._batching = BatchingRecorder(
            inbox, on_recorded=guarded_inline(inline), on_answered=self._dispatch.submit
        )

    async def record(self, received: Received) -> int | None:
        return await self._batching.record(received)

    def close(self) -> None:
        self._batching.close()
        self._dispatch.close()

    def alive(self) -> bool:
        return True


def create_receiver_app(
    settings: Settings,
    *,
    inbox: Inbox,
    dispatcher: Dispatcher | None = None,
    inline: InlineHook | None = None,
    recorder: Recorder | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> FastAPI:
    """The receiver as a FastAPI app: POST /api/github/webhooks and GET /healthz.

    Deliveries go to `recorder` (`ourobot serve` passes its inbox process), or else to an
    `InProcessRecorder` over `inbox`, `dispatcher` and `inline`. `inbox` also answers the
    health check. Refuses (ConfigError) to build without a webhook secret: an unsigned
    endpoint would let anyone inject events.
    """
    if recorder is None:
        if dispatcher is None:
            raise ValueError("create_receiver_app needs a dispatcher or a recorder")
        recorder = InProcessRecorder(inbox, dispatcher, inline)
    receiver = _Receiver(
        secret=_webhook_secret(settings), recorder=recorder, max_body_bytes=max_body_bytes
    )
    mode = "embedded" if settings.embedded else "redis"

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(receiver.close)

    app = _ReceiverApp(
        receiver,
        title="ourobot webhook receiver",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )

    health = HealthCheck(
        inbox,
        mode,
        recorder.alive,
        redis_for_health(settings.redis_url) if settings.redis_url else None,
    )

    async def healthz(_: Request) -> Response:
        answer = await anyio.to_thread.run_sync(health.run)
        return JSONResponse(answer.body, status_code=answer.status_code)

    # The receiver is a plain ASGI app (Starlette calls a non-function endpoint as one). The
    # route gives other methods their 405; POSTs skip the router entirely (`_ReceiverApp`).
    app.router.routes.append(Route(WEBHOOK_PATH, receiver, methods=["POST"]))
    app.add_route(HEALTH_PATH, healthz, methods=["GET"])
    return app


def _webhook_secret(settings: Settings) -> bytes:
    secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else ""
    if not secret:
        raise ConfigError("OUROBOT_WEBHOOK_SECRET is not set: webhooks cannot be verified")
    return secret.encode()


class _ReceiverApp(FastAPI):
    """FastAPI for everything but the hot path: a webhook POST goes straight to the receiver.

    The middleware stack and the router cost more CPU per delivery than verifying it; the
    receiver needs neither (it answers every outcome itself and raises nothing it expects).
    """

    def __init__(self, receiver: _Receiver, **options: Any) -> None:
        super().__init__(**options)
        self._receiver = receiver

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] == WEBHOOK_PATH
            and not scope.get("root_path")
        ):
            await self._receiver(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


class _Headers:
    """The request headers the receiver reads, found in one pass over the raw ASGI list."""

    __slots__ = ("content_length", "github", "has_sha1", "signatures")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self.content_length: str | None = None
        self.signatures: list[str] = []
        self.has_sha1 = False
        # Keyed by GitHub's spelling, as `parse_delivery` and the log lines read them.
        self.github: dict[str, str] = {}
        for name, value in raw:
            key = _WANTED.get(name.lower())
            if key is None:
                continue
            text = value.decode("latin-1")
            if key == _CONTENT_LENGTH:
                if self.content_length is None:  # the first, as Starlette's `get` reads it
                    self.content_length = text
            elif key == SIGNATURE_HEADER:
                self.signatures.append(text)
            elif key == _SHA1_HEADER:
                self.has_sha1 = True
            else:
                self.github.setdefault(key, text)

    def get(self, name: str) -> str | None:
        return self.github.get(name)


class _Answer:
    """A JSON answer whose body is already bytes: nothing to render per delivery."""

    __slots__ = ("body", "start")

    def __init__(self, status: int, body: bytes) -> None:
        self.body: Message = {"type": "http.response.body", "body": body}
        self.start: Message = {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }

    @classmethod
    def of(cls, status: int, content: dict[str, Any]) -> _Answer:
        return cls(status, json.dumps(content, separators=(",", ":")).encode())

    async def send(self, send: Send) -> None:
        await send(self.start)
        await send(self.body)


_CONTENT_LENGTH = "content-length"
_WANTED = {
    name.lower().encode(): name
    for name in (_CONTENT_LENGTH, SIGNATURE_HEADER, _SHA1_HEADER, EVENT_HEADER, DELIVERY_HEADER)
}
_PONG = _Answer.of(200, {"status": "pong"})
_DUPLICATE = _Answer.of(202, {"status": "duplicate"})
_UNAVAILABLE = _Answer.of(
    503, {"status": "unavailable", "reason": "the inbox cannot be written; retry later"}
)


async def _body_chunks(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


class _Receiver:
    def __init__(self, *, secret: bytes, recorder: Recorder, max_body_bytes: int) -> None:
        self._secret = secret
        self._recorder = recorder
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """POST /api/github/webhooks as a plain ASGI app: no Request object, no routing."""
        answer = await self._handle(_Headers(scope["headers"]), receive)
        await answer.send(send)

    async def _handle(self, headers: _Headers, receive: Receive) -> _Answer:
        try:
            check_declared_length(headers.content_length, self._max_body_bytes)
        except BodyTooLarge:
            return _reject(headers, 413, "body larger than 25 MB")
        except BadContentLength:
            return _reject(headers, 400, "malformed Content-Length")
        signatures = headers.signatures
        claimed = parse_signature(signatures[0]) if len(signatures) == 1 else None
        if claimed is None:
            return _reject(headers, 401, _why_unsigned(headers, signatures))
        try:
            body = await read_capped(_body_chunks(receive), self._max_body_bytes)
        except BodyTooLarge:
            return _reject(headers, 413, "body larger than 25 MB")
        except ClientDisconnect:
            return _reject(headers, 400, "client disconnected before the body ended")
        # One-shot over the whole body: streaming through `hmac.HMAC` costs more Python per
        # delivery than the hashing itself, and the body is kept in memory anyway.
        if not signature_matches(self._secret, body, claimed):
            return _reject(headers, 401, f"{SIGNATURE_HEADER} does not match the body")
        try:
            received = parse_headers(headers.github, body)
        except BadDelivery as problem:
            return _reject(headers, 400, str(problem))
        try:
            if received.event == PING_EVENT:
                parse_body(received)  # a ping is answered here: its body is checked here
                _log_outcome(received, "pong")
                return _PONG
            # Durable (and past the inline hook) when this returns. The recorder parses the
            # body (400 when unusable), logs each stored delivery and dispatches new rows.
            row_id = await self._recorder.record(received)
        except BadDelivery as problem:
            return _reject(headers, 400, str(problem))
        except Exception as error:
            _log_outcome(received, f"inbox unavailable: {describe(error)}", level=logging.ERROR)
            return _UNAVAILABLE
        if row_id is None:
            return _DUPLICATE
        return _Answer(202, b'{"status":"accepted","id":%d}' % row_id)

    def close(self) -> None:
        """Finish queued inbox writes and submissions."""
        self._recorder.close()


def _why_unsigned(headers: _Headers, signatures: list[str]) -> str:
    if len(signatures) > 1:
        return f"more than one {SIGNATURE_HEADER} header"
    if signatures:
        return f"malformed {SIGNATURE_HEADER} header"
    if headers.has_sha1:
        return f"{_SHA1_HEADER} (SHA-1) is not accepted; {SIGNATURE_HEADER} is required"
    return f"missing {SIGNATURE_HEADER} header"


def _reject(headers: _Headers, status: int, reason: str) -> _Answer:
    log.info(
        "webhook delivery=%s event=%s action=- outcome=rejected %d: %s",
        _loggable(headers.get(DELIVERY_HEADER)),
        _loggable(headers.get(EVENT_HEADER)),
        status,
        reason,
    )
    return _Answer.of(status, {"status": "rejected", "reason": reason})


def _log_outcome(received: Received, outcome: str, *, level: int = logging.INFO) -> None:
    log_delivery(received.delivery_id, received.event, "", outcome, level=level)


def _loggable(value: str | None) -> str:
    # Unverified header values: bounded and escaped, so they cannot forge log lines.
    return "-" if value is None else repr(value[:100])
