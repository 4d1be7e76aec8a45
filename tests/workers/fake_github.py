"""A scriptable stand-in for the GitHub REST API on 127.0.0.1, speaking real HTTP.

`script(method, path, *responses)` queues answers for a route (the last one repeats);
unscripted routes answer 404. Every request is recorded with its arrival time.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: Any = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Request:
    at: float
    method: str
    path: str  # without the query
    query: str
    headers: dict[str, str]


class FakeGitHub:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[tuple[str, str], list[Answer]] = {}
        self.requests: list[Request] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, method: str, path: str, *answers: Answer) -> None:
        with self._lock:
            self._scripts[(method, path)] = list(answers)

    def calls(self, method: str, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.method == method and r.path == path]

    def _answer(self, method: str, target: str, headers: dict[str, str]) -> Answer:
        parts = urlsplit(target)
        with self._lock:
            self.requests.append(
                Request(time.monotonic(), method, parts.path, parts.query, headers)
            )
            queue = self._scripts.get((method, parts.path))
            if not queue:
                return Answer(404, {"message": "Not Found"})
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                answer = fake._answer(self.command, self.path, dict(self.headers.items()))
                payload = json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
