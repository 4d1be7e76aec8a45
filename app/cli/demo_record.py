"""`ourobot demo --record DIR`: every HTTP request the sandbox and the model servers received,
as JSONL (`sandbox.jsonl` with each answer, `anthropic.jsonl`, `openai.jsonl`), and every
webhook the sandbox delivered (`webhooks.jsonl`), with secrets scrubbed out.

Scrubbing is by rule, not by hope: credential headers are replaced whole; every secret the demo
handed out (the webhook secret, the App's private key and each of its lines, the model keys,
the people's tokens) is replaced wherever it appears; and anything shaped like a GitHub or
sandbox token or a PEM private key is replaced even when the demo never saw it (installation
tokens the sandbox minted, for instance). A record is written only after it is scrubbed.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "cookie", "set-cookie", "proxy-authorization"}
)
_SHAPES = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}"),
    re.compile(r"\bsbx_[0-9a-f]{16,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    # git over HTTP with a token in the URL: never how ourobot sends one, scrubbed all the same
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
)
MIN_SECRET_CHARS = 8  # shorter "secrets" would scrub ordinary words
_HEADERS = ("headers", "response_headers")


class Scrubber:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._known: set[str] = set()
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        for secret in secrets:
            for part in (secret, *secret.splitlines()):
                part = part.strip()
                if len(part) >= MIN_SECRET_CHARS and not part.startswith("-----"):
                    self._known.add(part)

    def text(self, value: str) -> str:
        for shape in _SHAPES:
            value = shape.sub(REDACTED, value)
        # Longest first: a secret that contains another is replaced whole.
        for secret in sorted(self._known, key=len, reverse=True):
            value = value.replace(secret, REDACTED)
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        return value

    def headers(self, headers: Iterable[tuple[str, str]]) -> list[list[str]]:
        return [
            [name, REDACTED if name.lower() in SECRET_HEADERS else self.text(value)]
            for name, value in headers
        ]

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        clean = {key: self.value(value) for key, value in entry.items() if key not in _HEADERS}
        for key in _HEADERS:
            if key in entry or key == "headers":
                clean[key] = self.headers(entry.get(key, ()))
        return clean


class RequestRecord:
    """JSONL files under `directory`, one per source, each line one scrubbed request."""

    def __init__(self, directory: Path, scrubber: Scrubber) -> None:
        self.directory = directory
        self.scrubber = scrubber
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.jsonl"):
            stale.unlink()

    def write(self, source: str, entry: dict[str, Any]) -> None:
        line = json.dumps(self.scrubber.entry(entry), sort_keys=True)
        with self._lock:
            with (self.directory / f"{source}.jsonl").open("a") as out:
                out.write(line + "\n")
            self.counts[source] = self.counts.get(source, 0) + 1

    def sandbox_sink(self, entry: dict[str, Any]) -> None:
        self.write("sandbox", entry)

    def webhook_sink(self, entry: dict[str, Any]) -> None:
        self.write("webhooks", entry)

    def model_requests(self, source: str, requests: Iterable[Any]) -> None:
        """The fake model servers' recorded requests (`RecordedRequest`), oldest first."""
        for request in requests:
            body = (
                request.body if request.body is not None else request.raw.decode("utf-8", "replace")
            )
            self.write(
                source,
                {"t_monotonic": request.at, "method": "POST", "path": request.path,
                 "headers": list(request.headers.items()), "body": body},
            )  # fmt: skip
