"""The one small interface every role talks to a model through, and the ordered fallback.

Plain data and a Protocol: no model SDK is imported here, so the panel, its decisions and
their tests run without any vendor library. The SDK-backed clients live in `providers`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant"]

# Why a call failed, after the SDK's own retries. Stable words: the ledger and summaries use them.
ErrorKind = Literal[
    "timeout",  # the request (with its retries) ran out of time
    "rate_limited",  # 429 after every retry
    "overloaded",  # 529 / 503 after every retry
    "server",  # another 5xx after every retry
    "connection",  # nothing answered
    "auth",  # 401/403: the key is missing or wrong
    "request",  # the provider refused the request (4xx)
    "malformed",  # an answer that is not the API's shape
    "config",  # nothing was sent: no key, bad base URL
]


class ModelError(Exception):
    """A model call failed; `kind` says how. The message never carries a key."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class Usage:
    """Tokens one response reports. Cache fields are 0 where the provider reports none."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class ToolCall:
    """A structured call the model asked for; `arguments` is the decoded JSON object."""

    name: str
    arguments: Mapping[str, Any]

    @classmethod
    def from_json(cls, name: str, raw: str) -> ToolCall:
        try:
            decoded = json.loads(raw or "{}")
        except json.JSONDecodeError:
            raise ModelError("malformed", f"tool call {name!r}: arguments are not JSON") from None
        if not isinstance(decoded, dict):
            raise ModelError("malformed", f"tool call {name!r}: arguments are not a JSON object")
        return cls(name=name, arguments=decoded)


@dataclass(frozen=True)
class ToolSpec:
    """A tool a model may call: a name, what it does, and its arguments as a JSON Schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class Completion:
    """One model answer: its text (text blocks joined), tool calls, usage and who answered."""

    text: str
    usage: Usage
    model: str = ""
    stop_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    # Earlier models in a fallback chain that failed before this one answered: (model, error).
    fallbacks: tuple[tuple[str, str], ...] = field(default=())


class ModelClient(Protocol):
    """What a role needs from a model. Implementations raise `ModelError`, nothing else."""

    @property
    def model_id(self) -> str:
        """`provider:name`, as the config spells it."""
        ...

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        """One answer. With `tools`, the model may answer with calls to them (`tool_calls`)
        as well as, or instead of, text."""
        ...


class FallbackClient:
    """Models tried in order: the first answer wins; a failure moves on to the next model.

    Meant for roles with a list such as `[local, cloud]`. Every failure before the answer is
    kept on the completion (`fallbacks`) so a summary can say the local model was down.
    """

    def __init__(self, clients: Sequence[ModelClient]) -> None:
        if not clients:
            raise ValueError("a fallback chain needs at least one model")
        self._clients = tuple(clients)

    @property
    def model_id(self) -> str:
        return " > ".join(client.model_id for client in self._clients)

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        failures: list[tuple[str, str]] = []
        last: ModelError | None = None
        for client in self._clients:
            try:
                # Tools only when asked for: a client that offers none need not take the argument.
                extra = {"tools": tools} if tools else {}
                answer = client.complete(
                    system, messages, max_tokens=max_tokens, timeout_s=timeout_s, **extra
                )
            except ModelError as exc:
                failures.append((client.model_id, f"{exc.kind}: {exc}"))
                last = exc
                continue
            return Completion(
                text=answer.text,
                usage=answer.usage,
                model=answer.model or client.model_id,
                stop_reason=answer.stop_reason,
                tool_calls=answer.tool_calls,
                fallbacks=(*failures, *answer.fallbacks),
            )
        assert last is not None
        tried = "; ".join(f"{model}: {error}" for model, error in failures)
        raise ModelError(last.kind, f"every model failed ({tried})")
