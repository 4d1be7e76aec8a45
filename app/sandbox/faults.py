"""Fault injection and request accounting for the sandbox's REST API.

A fault matches a request by method, a regex searched in the path, and optionally the exact
token; it fires a number of times (`times`, one-shot by default) or with a probability (`rate`,
drawn from a seeded generator so runs repeat). Kinds mirror what GitHub actually answers:

- `502`: a bare 502 with GitHub's "Server Error" body;
- `secondary`: 403 with `retry-after` and the secondary-rate-limit message;
- `429`: 429 with `retry-after`;
- `primary`: 403 with `x-ratelimit-remaining: 0` and `x-ratelimit-reset`;
- `latency`: the request is served normally after `delay_s`.

Accounting counts every REST request per (method, route template), per identity, and every git
smart-HTTP round trip (`git`: ref advertisement, upload-pack, receive-pack), and keeps a
bounded log with timestamps so tests can check how a client paced its retries. The primary rate
limit is also real: 5,000 requests an hour per identity (60 for anonymous callers).
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = ("502", "secondary", "429", "primary", "latency")
LOG_LIMIT = 5000
HOUR_S = 3600
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID."
)
DOCS_SECONDARY = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
DOCS_PRIMARY = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"


@dataclass
class Fault:
    id: int
    kind: str
    method: str
    path: re.Pattern[str]
    token: str | None
    times: int | None
    rate: float | None
    retry_after_s: int
    delay_s: float
    reset_in_s: int
    fired: int = 0

    def matches(self, method: str, path: str, token: str | None) -> bool:
        if self.method not in ("*", method):
            return False
        if self.token is not None and self.token != token:
            return False
        return self.path.search(path) is not None

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "method": self.method,
            "path": self.path.pattern,
            "times_left": self.times,
            "rate": self.rate,
            "fired": self.fired,
        }


@dataclass(frozen=True)
class FaultReply:
    status: int
    body: dict[str, Any] | None
    headers: dict[str, str]
    delay_s: float


@dataclass
class _Window:
    start: float
    used: int = 0


@dataclass
class FaultBook:
    """Faults and counters. Not locked itself: callers hold the sandbox state's lock."""

    seed: int = 0
    faults: list[Fault] = field(default_factory=list)
    routes: Counter[str] = field(default_factory=Counter)
    identities: Counter[str] = field(default_factory=Counter)
    git: Counter[str] = field(default_factory=Counter)  # git smart-HTTP round trips
    log: list[dict[str, Any]] = field(default_factory=list)
    windows: dict[str, _Window] = field(default_factory=dict)
    _next_id: int = 0

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)  # noqa: S311 - reproducible test faults, not crypto

    def reset(self) -> None:
        self.faults.clear()
        self.routes.clear()
        self.identities.clear()
        self.git.clear()
        self.log.clear()
        self.windows.clear()
        self._random = random.Random(self.seed)  # noqa: S311 - as above

    # ----- faults -------------------------------------------------------------------------------
    def add(
        self,
        kind: str,
        *,
        method: str = "*",
        path: str = "",
        token: str | None = None,
        times: int | None = 1,
        rate: float | None = None,
        retry_after_s: int = 1,
        delay_s: float = 0.0,
        reset_in_s: int = 2,
    ) -> Fault:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise ValueError("rate must be between 0 and 1")
        self._next_id += 1
        fault = Fault(
            id=self._next_id,
            kind=kind,
            method=method.upper(),
            path=re.compile(path),
            token=token,
            times=None if rate is not None else times,
            rate=rate,
            retry_after_s=retry_after_s,
            delay_s=delay_s,
            reset_in_s=reset_in_s,
        )
        self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        self.faults.clear()

    def pick(self, method: str, path: str, token: str | None) -> Fault | None:
        """The first fault that fires for this request, consuming one of its shots."""
        for fault in self.faults:
            if not fault.matches(method, path, token):
                continue
            if fault.rate is not None:
                if self._random.random() >= fault.rate:
                    continue
            elif fault.times is not None:
                if fault.times <= 0:
                    continue
                fault.times -= 1
            fault.fired += 1
            return fault
        return None

    @staticmethod
    def reply(fault: Fault, identity_key: str, limit: int) -> FaultReply:
        now = int(time.time())
        if fault.kind == "latency":
            return FaultReply(0, None, {}, fault.delay_s)
        if fault.kind == "502":
            body = {"message": "Server Error"}
            return FaultReply(502, body, {}, fault.delay_s)
        if fault.kind == "429":
            body = {"message": "Too Many Requests", "documentation_url": DOCS_SECONDARY}
            return FaultReply(429, body, {"retry-after": str(fault.retry_after_s)}, fault.delay_s)
        if fault.kind == "secondary":
            body = {"message": SECONDARY_MESSAGE, "documentation_url": DOCS_SECONDARY}
            return FaultReply(403, body, {"retry-after": str(fault.retry_after_s)}, fault.delay_s)
        body = {
            "message": f"API rate limit exceeded for {identity_key}.",
            "documentation_url": DOCS_PRIMARY,
        }
        headers = {
            "x-ratelimit-limit": str(limit),
            "x-ratelimit-remaining": "0",
            "x-ratelimit-used": str(limit),
            "x-ratelimit-reset": str(now + fault.reset_in_s),
            "x-ratelimit-resource": "core",
        }
        return FaultReply(403, body, headers, fault.delay_s)

    # ----- accounting and the primary rate limit ------------------------------------------------
    def count(self, method: str, template: str, identity_key: str) -> None:
        self.routes[f"{method} {template}"] += 1
        self.identities[identity_key] += 1

    def spend(self, identity_key: str) -> _Window:
        """Charge one request to the identity's hourly window and return the window."""
        now = time.time()
        window = self.windows.get(identity_key)
        if window is None or now - window.start >= HOUR_S:
            window = _Window(start=now)
            self.windows[identity_key] = window
        window.used += 1
        return window

    @staticmethod
    def rate_headers(window: _Window, limit: int) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(limit),
            "x-ratelimit-remaining": str(max(0, limit - window.used)),
            "x-ratelimit-used": str(min(window.used, limit)),
            "x-ratelimit-reset": str(int(window.start + HOUR_S)),
            "x-ratelimit-resource": "core",
        }

    def record(self, entry: dict[str, Any]) -> None:
        self.log.append(entry)
        if len(self.log) > LOG_LIMIT:
            del self.log[: len(self.log) - LOG_LIMIT]

    def snapshot(self) -> dict[str, Any]:
        return {
            "total": sum(self.routes.values()),
            "routes": dict(self.routes),
            "identities": dict(self.identities),
            "git": dict(self.git),
            "faults": [f.describe() for f in self.faults],
            "log": list(self.log),
        }
