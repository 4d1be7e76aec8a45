"""A tap on every HTTP exchange the sandbox takes part in, for `ourobot demo --record` and the
suite's check against GitHub's OpenAPI description: each request it receives (REST, git smart
HTTP, control) with its answer (method, path, query, headers, body; status, response headers
and body), handed to a sink once the answer has been sent, and each webhook delivery it makes
(`DeliverySink`). The sandbox says what it saw; what is kept, and what is scrubbed from it, is
the sink's business."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_TEXT_BODY = 256 * 1024

RequestSink = Callable[[dict[str, Any]], None]
DeliverySink = Callable[[dict[str, Any]], None]


class RequestTap:
    def __init__(self, app: ASGIApp, sink: RequestSink) -> None:
        self.app = app
        self.sink = sink

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        status: list[int] = []
        answer: list[bytes] = []
        answer_headers: list[tuple[bytes, bytes]] = []

        async def tapped_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        async def tapped_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
                answer_headers.extend(message.get("headers", []))
            elif message["type"] == "http.response.body":
                answer.append(message.get("body", b""))
            await send(message)

        started = time.time()
        try:
            await self.app(scope, tapped_receive, tapped_send)
        finally:
            entry = _entry(scope, b"".join(chunks), status[0] if status else None, started)
            entry["response_headers"] = _headers(answer_headers)
            entry["response_body"] = _body(b"".join(answer))
            self.sink(entry)


def _headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]


def _entry(scope: Scope, body: bytes, status: int | None, started: float) -> dict[str, Any]:
    return {
        "t": round(started, 3),
        "method": scope["method"],
        "path": scope["path"],
        "query": scope.get("query_string", b"").decode("latin-1"),
        "headers": _headers(scope.get("headers", [])),
        "body": _body(body),
        "status": status,
    }


def _body(body: bytes) -> Any:
    """Text when it is UTF-8 and not too long; else its size and digest (git packs)."""
    if not body:
        return None
    if len(body) <= MAX_TEXT_BODY:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}
