"""Model providers: `anthropic:<model>` through the anthropic SDK, `openai:<model>` through the
openai SDK for any OpenAI-compatible endpoint (OpenAI, OpenRouter, Ollama, vLLM).

Retries and backoff are the SDKs' own (429 honouring `retry-after`, 529/5xx, timeouts); what is
left after them becomes a `ModelError` with a stable kind, its message naming the model and its
URL. Usage (input, output, cache read and write tokens) is taken from every response.

Keys and endpoints: a model entry's `base_url`, else `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`,
else the vendor's. A key from the environment is sent only to its own endpoint (the one the
environment names, or the vendor's): a repository's config can point a model at any URL, and
that must not make the operator's key travel there. An endpoint without a key of its own
(a local Ollama or vLLM on 127.0.0.1, or a server the environment's base URL names) gets a
placeholder. `unusable_reason` says, without a request, why a model cannot be called.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, cast
from urllib.parse import urlsplit

from app.repo_config import ModelRef
from reviewers.model_client import (
    Completion,
    ErrorKind,
    FallbackClient,
    Message,
    ModelClient,
    ModelError,
    ToolCall,
    ToolSpec,
    Usage,
)

# The SDKs load when a client is made, not with this module: importing them takes a second or
# more, and `ourobot cycle` checks keys and endpoints (reviewers.model_check) before that.
if TYPE_CHECKING:
    from anthropic.types import MessageParam, TextBlockParam, ToolParam
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
# Sent where no key belongs (a local server); OpenAI-compatible servers ignore it.
NO_KEY = "no-key"
# Where each provider's key comes from.
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
DEFAULT_MAX_RETRIES = 2

__all__ = [
    "ANTHROPIC_DEFAULT_URL",
    "KEY_VARIABLES",
    "NO_KEY",
    "OPENAI_DEFAULT_URL",
    "AnthropicClient",
    "Completion",
    "FallbackClient",
    "Message",
    "ModelClient",
    "ModelError",
    "OpenAIClient",
    "ProviderCredentials",
    "Usage",
    "build_client",
    "build_fallback",
    "root_cause",
    "shown_url",
    "unusable_reason",
]


@dataclass(frozen=True)
class ProviderCredentials:
    """Keys and endpoints from the environment (or the server's settings). Keys never print."""

    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ProviderCredentials:
        def value(name: str) -> str | None:
            return env.get(name, "").strip() or None  # a blank variable is an unset one

        return cls(
            anthropic_api_key=value("ANTHROPIC_API_KEY"),
            anthropic_base_url=value("ANTHROPIC_BASE_URL"),
            openai_api_key=value("OPENAI_API_KEY"),
            openai_base_url=value("OPENAI_BASE_URL"),
        )

    def secrets(self) -> tuple[str, ...]:
        """The key values, for redaction from anything that reaches a model."""
        return tuple(key for key in (self.anthropic_api_key, self.openai_api_key) if key)

    def names_endpoint(self, url: str, provider: str) -> bool:
        """Whether the environment itself names `url` as `provider`'s endpoint: the
        operator's own server, where no key is needed unless it says so (a placeholder is
        sent)."""
        home = self.anthropic_base_url if provider == "anthropic" else self.openai_base_url
        return home is not None and _origin(url) == _origin(home)

    def endpoint(self, model: ModelRef) -> tuple[str, str | None]:
        """(base_url, key) for `model`; the key is None when nothing may be sent to that URL."""
        if model.provider == "anthropic":
            home, key = self.anthropic_base_url, self.anthropic_api_key
            default = ANTHROPIC_DEFAULT_URL
        else:
            home, key = self.openai_base_url, self.openai_api_key
            default = OPENAI_DEFAULT_URL
        home = home or default
        url = model.base_url or home
        if _origin(url) not in {_origin(home), _origin(default)}:
            return url, None
        return url, key


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in {"localhost", "::1"} or host.startswith("127.")


def build_client(
    model: ModelRef,
    credentials: ProviderCredentials,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    cache_prompt: bool = False,
) -> ModelClient:
    """The client for one config entry. A key that is missing where one is required does not
    raise here: the first call fails with `ModelError("config")`, so one model without a key
    makes its reviewer incomplete, not the whole run an error. `cache_prompt` asks Anthropic
    to cache the prompt (see `AnthropicClient`); other providers cache on their own."""
    unusable = unusable_reason(model, credentials)
    if unusable is not None:
        return _Unconfigured(model.id, unusable)
    url, key = credentials.endpoint(model)
    if model.provider == "anthropic":
        return AnthropicClient(
            model.name,
            base_url=url,
            api_key=key,
            max_retries=max_retries,
            cache_prompt=cache_prompt,
        )
    return OpenAIClient(model.name, base_url=url, api_key=key, max_retries=max_retries)


def unusable_reason(model: ModelRef, credentials: ProviderCredentials) -> str | None:
    """Why `model` cannot be called with these credentials (no request made), else None."""
    url, key = credentials.endpoint(model)
    if key is not None or _is_loopback(url) or credentials.names_endpoint(url, model.provider):
        return None
    if model.base_url is None:
        return _missing_key_message(model)
    return (
        f"no key may be sent to {shown_url(url)} (the environment's key belongs to "
        f"{'ANTHROPIC' if model.provider == 'anthropic' else 'OPENAI'}_BASE_URL); point "
        "that variable at this endpoint or use a local (127.0.0.1) server"
    )


def shown_url(url: str) -> str:
    """An endpoint as a message names it: scheme, host, port and path, never credentials
    or a query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


def build_fallback(
    models: Sequence[ModelRef],
    credentials: ProviderCredentials,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    cache_prompt: bool = False,
) -> ModelClient:
    """A role's model list as one client: the first that answers wins."""
    clients = [
        build_client(model, credentials, max_retries=max_retries, cache_prompt=cache_prompt)
        for model in models
    ]
    return clients[0] if len(clients) == 1 else FallbackClient(clients)


def _missing_key_message(model: ModelRef) -> str:
    variable = KEY_VARIABLES[model.provider]
    # The model is named by whoever shows this (a verdict row, a fallback chain's list).
    return f"{variable} is not set"


class _Unconfigured:
    """A model that cannot be called; says why on every call instead of at construction."""

    def __init__(self, model_id: str, reason: str) -> None:
        self._model_id = model_id
        self._reason = reason

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        raise ModelError("config", self._reason)


class _StatusError(Protocol):
    status_code: int
    message: str


@dataclass(frozen=True)
class _SdkErrors:
    """What one SDK raises once its own retries are spent. Both SDKs are generated from one
    template, so the same four kinds exist in each; only the classes differ."""

    timeout: type[Exception]
    connection: type[Exception]  # a timeout is one too: caught first
    status: type[Exception]  # an HTTP answer that is not 2xx (a `_StatusError`)
    other: type[Exception]  # the SDK's base error: anything else it could not make sense of


@cache
def _anthropic_errors() -> _SdkErrors:
    import anthropic

    return _SdkErrors(
        anthropic.APITimeoutError,
        anthropic.APIConnectionError,
        anthropic.APIStatusError,
        anthropic.APIError,
    )


@cache
def _openai_errors() -> _SdkErrors:
    import openai

    return _SdkErrors(
        openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError, openai.OpenAIError
    )


@contextmanager
def _model_errors(where: str, timeout_s: float, errors: _SdkErrors) -> Iterator[None]:
    """Turn what an SDK call raises into a `ModelError` of a stable kind. `where` names the
    model and its endpoint (`_where`): "cannot connect" alone does not say which server is down."""
    try:
        yield
    except errors.timeout:
        raise ModelError("timeout", _timed_out(where, timeout_s)) from None
    except errors.connection as exc:
        raise ModelError("connection", f"{where}: cannot connect: {root_cause(exc)}") from None
    except errors.status as exc:
        answer = cast(_StatusError, exc)
        raise _status_error(where, answer.status_code, answer.message) from None
    except errors.other as exc:
        raise ModelError("malformed", f"{where}: bad response: {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        # The SDKs let a body that is not JSON (or not the API's shape) escape as these.
        raise ModelError("malformed", _bad_body(where, exc)) from None


def root_cause(exc: BaseException) -> str:
    """What a connection error comes down to ("Connection refused", "Name or service not
    known"): the SDKs say only "Connection error." and keep the socket's error underneath."""
    seen = {id(exc)}
    deepest: BaseException = exc
    while True:
        below = deepest.__cause__ or deepest.__context__
        if below is None or id(below) in seen:
            break
        seen.add(id(below))
        deepest = below
    text = (str(deepest).strip().splitlines() or [""])[0]
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", text)
    return text or str(exc) or type(deepest).__name__


def _where(client: AnthropicClient | OpenAIClient) -> str:
    return f"{client.model_id} at {shown_url(client.base_url)}"


def _timed_out(where: str, timeout_s: float) -> str:
    return f"{where}: no answer within {timeout_s:g}s (after the SDK's retries)"


def _status_error(where: str, status: int, message: str) -> ModelError:
    return ModelError(_status_kind(status), f"{where}: HTTP {status}: {message}")


def _status_kind(status: int) -> ErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if status >= 500:
        return "server"
    return "request"


class AnthropicClient:
    """The Messages API through the anthropic SDK (its own HTTP stack; `base_url` is honoured).

    With `cache_prompt`, the system prompt and the last message are sent as text blocks marked
    `cache_control: ephemeral`: the stable prefix (role, constitution, ticket and diff) is
    written to Anthropic's prompt cache once and read back by the next call with the same
    prefix (another panel member on this model, a rerun), at a tenth of the input price.
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        api_key: str | None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        cache_prompt: bool = False,
    ) -> None:
        self.name = name
        self.base_url = base_url
        self.cache_prompt = cache_prompt
        import anthropic

        # An explicit key (a placeholder where none belongs): the SDK then reads no credential
        # from the environment or the disk on its own.
        self._sdk = anthropic.Anthropic(
            api_key=api_key or NO_KEY, base_url=base_url, max_retries=max_retries
        )

    @property
    def model_id(self) -> str:
        return f"anthropic:{self.name}"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        turns: list[MessageParam] = [
            {"role": "user", "content": m.content}
            if m.role == "user"
            else {"role": "assistant", "content": m.content}
            for m in messages
        ]
        if self.cache_prompt and turns:
            turns[-1] = _cached_turn(turns[-1]["role"], messages[-1].content)
        import anthropic  # loaded by the constructor already

        with _model_errors(_where(self), timeout_s, _anthropic_errors()):
            response = self._sdk.messages.create(
                model=self.name,
                system=_cached_text(system) if self.cache_prompt else system,
                messages=turns,
                max_tokens=max_tokens,
                timeout=timeout_s,
                tools=[_anthropic_tool(tool) for tool in tools] if tools else anthropic.omit,
            )
        return _anthropic_completion(self.model_id, response, where=_where(self))


def _anthropic_tool(tool: ToolSpec) -> ToolParam:
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.parameters),
    }


def _cached_text(text: str) -> list[TextBlockParam]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]


def _cached_turn(role: str, text: str) -> MessageParam:
    if role == "user":
        return {"role": "user", "content": _cached_text(text)}
    return {"role": "assistant", "content": _cached_text(text)}


def _anthropic_completion(model_id: str, response: Any, *, where: str) -> Completion:
    content = getattr(response, "content", None)
    usage = getattr(response, "usage", None)
    if not isinstance(content, list) or usage is None:
        raise ModelError("malformed", f"{where}: the answer is not a Messages API response")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(str(getattr(block, "text", "")))
        elif kind == "tool_use":
            arguments = getattr(block, "input", None)
            if not isinstance(arguments, dict):
                raise ModelError("malformed", f"{where}: tool_use input is not an object")
            calls.append(ToolCall(name=str(getattr(block, "name", "")), arguments=arguments))
    return Completion(
        text="".join(texts),
        usage=Usage(
            input_tokens=_count(getattr(usage, "input_tokens", 0)),
            output_tokens=_count(getattr(usage, "output_tokens", 0)),
            cache_read_tokens=_count(getattr(usage, "cache_read_input_tokens", 0)),
            cache_write_tokens=_count(getattr(usage, "cache_creation_input_tokens", 0)),
        ),
        model=model_id,
        stop_reason=getattr(response, "stop_reason", None),
        tool_calls=tuple(calls),
    )


def _bad_body(where: str, exc: Exception) -> str:
    first = (str(exc).splitlines() or [""])[0][:200]
    return f"{where}: the answer is not valid ({type(exc).__name__}: {first})"


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


class OpenAIClient:
    """Chat completions through the openai SDK, at any OpenAI-compatible `base_url`."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        api_key: str | None,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        self.name = name
        self.base_url = base_url
        # OpenAI's own API wants `max_completion_tokens`; compatible servers (Ollama, vLLM,
        # OpenRouter) reliably understand `max_tokens`.
        self._official = _origin(base_url) == _origin(OPENAI_DEFAULT_URL)
        import openai

        self._sdk = openai.OpenAI(
            api_key=api_key or NO_KEY, base_url=base_url, max_retries=max_retries
        )

    @property
    def model_id(self) -> str:
        return f"openai:{self.name}"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        chat: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
        for m in messages:
            if m.role == "user":
                chat.append({"role": "user", "content": m.content})
            else:
                chat.append({"role": "assistant", "content": m.content})
        import openai  # loaded by the constructor already

        with _model_errors(_where(self), timeout_s, _openai_errors()):
            response = self._sdk.chat.completions.create(
                model=self.name,
                messages=chat,
                timeout=timeout_s,
                max_completion_tokens=max_tokens if self._official else openai.omit,
                max_tokens=openai.omit if self._official else max_tokens,
                tools=[_openai_tool(tool) for tool in tools] if tools else openai.omit,
            )
        return _openai_completion(self.model_id, response, where=_where(self))


def _openai_tool(tool: ToolSpec) -> ChatCompletionToolParam:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


def _openai_completion(model_id: str, response: Any, *, where: str) -> Completion:
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ModelError("malformed", f"{where}: the answer has no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise ModelError("malformed", f"{where}: the answer has no message")
    calls = []
    for call in getattr(message, "tool_calls", None) or ():
        function = getattr(call, "function", None)
        if function is None:
            continue
        calls.append(ToolCall.from_json(str(function.name), str(function.arguments)))
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = _count(getattr(details, "cached_tokens", 0))
    return Completion(
        text=str(getattr(message, "content", None) or ""),
        usage=Usage(
            # OpenAI counts cached tokens inside prompt_tokens; ours are disjoint, as Anthropic's.
            input_tokens=max(0, _count(getattr(usage, "prompt_tokens", 0)) - cached),
            output_tokens=_count(getattr(usage, "completion_tokens", 0)),
            cache_read_tokens=cached,
            cache_write_tokens=_count(getattr(details, "cache_write_tokens", 0)),
        ),
        model=model_id,
        stop_reason=getattr(choices[0], "finish_reason", None),
        tool_calls=tuple(calls),
    )
