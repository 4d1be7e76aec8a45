"""Fake model servers: real HTTP on 127.0.0.1 speaking the Anthropic Messages API and OpenAI
chat completions, driven by scripts and recording every request.

The real `anthropic` and `openai` SDKs talk to them through `base_url`, so their retries,
backoff, `retry-after` handling and response parsing run for real. Tests, `make demo` and
`python -m reviewers.fake_servers` use the same code. Standard library only; nothing here is
imported by the panel itself.

A script is a queue of replies per model name (the name after `provider:`):

    models.script("anthropic:claude-x", RateLimited(retry_after_s=1), Text("VERDICT: APPROVE"))

Each request to that model takes the next reply. An exhausted queue answers with the model's
default reply (`models.default(...)`), else a 500 that tells the SDK not to retry and is
counted in `unscripted`, so a test that sent more requests than it meant to can see it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

Api = Literal["anthropic", "openai"]

FAKE_ANTHROPIC_KEY = "sk-ant-fake-key-for-tests"
FAKE_OPENAI_KEY = "sk-fake-openai-key-for-tests"
ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"  # the model list, in either API's shape
MAX_BODY_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class FakeUsage:
    """Usage to report; None = estimated from the request and reply (about 4 chars a token)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Text:
    """A normal answer with this text."""

    text: str
    usage: FakeUsage = FakeUsage()
    delay_s: float = 0.0
    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class ToolCall:
    """An answer that calls a tool (`tool_use` / `tool_calls`), with optional text before it."""

    name: str
    arguments: Mapping[str, Any]
    text: str = ""
    usage: FakeUsage = FakeUsage()
    delay_s: float = 0.0


@dataclass(frozen=True)
class ToolCalls:
    """An answer that calls several tools at once, in order, with optional text before them."""

    calls: tuple[tuple[str, Mapping[str, Any]], ...]
    text: str = ""
    usage: FakeUsage = FakeUsage()
    delay_s: float = 0.0


@dataclass(frozen=True)
class HttpError:
    """An error status with the provider's error body and optional retry hints."""

    status: int
    error_type: str
    message: str
    retry_after_s: float | None = None
    retry_after_ms: int | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class Malformed:
    """A 200 whose body is not what the API promises (default: broken JSON)."""

    body: bytes = b'{"id": "msg_broken", "content": [ '
    content_type: str = "application/json"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Reactive:
    """An answer written when the request arrives, from the last message the model was sent
    (as a model reads the observation of its last action): `respond(last_message_text)`."""

    respond: Callable[[str], Text | ToolCall | ToolCalls]
    delay_s: float = 0.0


Reply = Text | ToolCall | ToolCalls | HttpError | Malformed | Reactive
Answer = Text | ToolCall | ToolCalls


# ---- an implementer's edits, as a model writes them ------------------------------------------
# Written here independently of ourobot's parser (app.loop.edits): the fake is a model, and a
# model that formats blocks its own way is what the parser must survive.

_FENCE = "```"


def file_block(path: str, content: str) -> str:
    """`### FILE:` with the whole new content."""
    return f"### FILE: {path}\n{_FENCE}\n{_ending(content)}{_FENCE}\n"


def append_block(path: str, content: str) -> str:
    return f"### APPEND: {path}\n{_FENCE}\n{_ending(content)}{_FENCE}\n"


def replace_block(path: str, *hunks: tuple[str, str]) -> str:
    """`### REPLACE:` with one SEARCH/REPLACE hunk per (old, new) pair."""
    body = "".join(
        f"<<<<<<< SEARCH\n{_ending(old)}=======\n{_ending(new) if new else ''}>>>>>>> REPLACE\n"
        for old, new in hunks
    )
    return f"### REPLACE: {path}\n{_FENCE}\n{body}{_FENCE}\n"


def delete_block(path: str) -> str:
    return f"### DELETE: {path}\n"


def edits_reply(*blocks: str, prose: str = "Here is the change.") -> Text:
    """A text answer holding edit blocks (from the functions above) after a line of prose."""
    return Text("\n".join([prose, "", *blocks]))


def _ending(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def edit_calls(*calls: tuple[str, Mapping[str, Any]], text: str = "") -> ToolCalls:
    """A tool-calling answer: ("write_file", {"path": ..., "content": ...}), ..."""
    return ToolCalls(tuple(calls), text=text)


def rate_limited(retry_after_s: float = 1.0) -> HttpError:
    return HttpError(429, "rate_limit_error", "rate limited", retry_after_s=retry_after_s)


def overloaded(retry_after_ms: int | None = None) -> HttpError:
    return HttpError(529, "overloaded_error", "Overloaded", retry_after_ms=retry_after_ms)


def server_error() -> HttpError:
    return HttpError(500, "api_error", "internal server error")


def delayed(reply: Reply, seconds: float) -> Reply:
    """The same reply, sent after `seconds` (interrupted when the server stops)."""
    return replace(reply, delay_s=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    """One request exactly as it arrived."""

    api: Api
    path: str
    headers: Mapping[str, str]
    raw: bytes
    body: Any
    at: float

    @property
    def model(self) -> str:
        return str(self.body.get("model", "")) if isinstance(self.body, dict) else ""

    @property
    def prompt_text(self) -> str:
        """Every text the model was shown (system and messages), joined: for assertions."""
        return (
            self.raw.decode("utf-8", "replace")
            if not isinstance(self.body, dict)
            else (_texts(self.body.get("system")) + "\n" + _texts(self.body.get("messages")))
        )

    @property
    def tool_names(self) -> list[str]:
        """The tools the request offered, by name, in either wire format."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        names = []
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict):
                function = tool.get("function")
                entry = function if isinstance(function, dict) else tool
                names.append(str(entry.get("name", "")))
        return names


def last_message(body: Mapping[str, Any]) -> str:
    """The text of the last message of a request, in either wire format."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ""
    return _texts(messages[-1])


def _texts(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_texts(item) for item in value)
    if isinstance(value, dict):
        return "\n".join(_texts(value.get(key)) for key in ("text", "content") if key in value)
    return ""


@dataclass
class _Script:
    queues: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    defaults: dict[str, Reply] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, model: str) -> Reply | None:
        with self.lock:
            queue = self.queues.get(model)
            if queue:
                return queue.popleft()
            return self.defaults.get(model, self.defaults.get("*"))


class FakeModelServer:
    """One API (`anthropic` or `openai`) on 127.0.0.1:<free port>, in a background thread."""

    def __init__(self, api: Api, *, api_key: str | None = None) -> None:
        self.api: Api = api
        self.api_key = api_key or (FAKE_ANTHROPIC_KEY if api == "anthropic" else FAKE_OPENAI_KEY)
        self.requests: list[RecordedRequest] = []
        # GET /v1/models (what a client asks before its first call); apart from `requests`,
        # which are the model calls.
        self.listings: list[RecordedRequest] = []
        self.unscripted = 0
        self._script = _Script()
        self._stopping = threading.Event()
        self._record_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What the SDK's `base_url` should be (the OpenAI SDK expects the `/v1` in it)."""
        root = f"http://127.0.0.1:{self.port}"
        return root if self.api == "anthropic" else f"{root}/v1"

    def start(self) -> FakeModelServer:
        # A short poll interval: stopping a server (every test's teardown) waits for one poll.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"fake-{self.api}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases any reply still sleeping on a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def script(self, model: str, *replies: Reply) -> None:
        """Queue replies for `model` (a bare name, as sent in the request body)."""
        with self._script.lock:
            self._script.queues[model].extend(replies)

    def default(self, model: str, reply: Reply) -> None:
        """The reply once `model`'s queue is empty; model "*" = any model."""
        with self._script.lock:
            self._script.defaults[model] = reply

    def requests_for(self, model: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.model == model]

    def model_names(self) -> list[str]:
        """The models this server answers for: every scripted or defaulted name."""
        with self._script.lock:
            names = {*self._script.queues, *self._script.defaults} - {"*"}
        return sorted(names)

    def pending(self, model: str) -> int:
        with self._script.lock:
            return len(self._script.queues.get(model, ()))

    # The handler calls these.
    def _record(self, request: RecordedRequest) -> None:
        with self._record_lock:
            self.requests.append(request)

    def _next_reply(self, model: str) -> Reply | None:
        reply = self._script.next(model)
        if reply is None:
            with self._record_lock:
                self.unscripted += 1
        return reply

    def _next_id(self) -> int:
        return next(self._ids)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def _handler_for(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_ApiHandler):
        fake = server

    return Handler


class _ApiHandler(BaseHTTPRequestHandler):
    fake: FakeModelServer
    protocol_version = "HTTP/1.1"
    server_version = "ourobot-fake-models/1"
    timeout = 30  # an idle keep-alive connection does not hold a thread for ever
    # Headers and body leave in one write (flushed after each request), with Nagle off:
    # split writes on a keep-alive connection would wait ~40 ms on delayed ACKs each time.
    wbufsize = -1
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return  # tests read the recordings, not stderr

    def do_GET(self) -> None:
        if self.path.split("?")[0] != MODELS_PATH:
            self._send_json(404, self._error_body("not_found_error", f"no route GET {self.path}"))
            return
        request = RecordedRequest(
            api=self.fake.api,
            path=self.path,
            headers={key.lower(): value for key, value in self.headers.items()},
            raw=b"",
            body=None,
            at=time.monotonic(),
        )
        with self.fake._record_lock:
            self.fake.listings.append(request)
        if self._sent_key() != self.fake.api_key:
            self._send_json(401, self._error_body("authentication_error", "invalid x-api-key"))
            return
        self._send_json(200, self._model_list(self.fake.model_names()))

    def _model_list(self, names: list[str]) -> Any:
        if self.fake.api == "anthropic":
            return {
                "data": [
                    {"type": "model", "id": name, "display_name": name,
                     "created_at": "2025-01-01T00:00:00Z"}
                    for name in names
                ],
                "has_more": False,
                "first_id": names[0] if names else None,
                "last_id": names[-1] if names else None,
            }  # fmt: skip
        return {
            "object": "list",
            "data": [{"id": name, "object": "model", "created": 0, "owned_by": "fake"}
                     for name in names],
        }  # fmt: skip

    def _sent_key(self) -> str | None:
        """The key as the API reads it: Anthropic's `x-api-key` (or a bearer token), OpenAI's
        bearer token."""
        bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ") or None
        if self.fake.api == "anthropic":
            return self.headers.get("x-api-key") or bearer
        return bearer

    def do_POST(self) -> None:
        expected = ANTHROPIC_PATH if self.fake.api == "anthropic" else OPENAI_PATH
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            self._send_json(413, self._error_body("request_too_large", "request too large"))
            return
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        self.fake._record(
            RecordedRequest(
                api=self.fake.api,
                path=self.path,
                headers={key.lower(): value for key, value in self.headers.items()},
                raw=raw,
                body=body,
                at=time.monotonic(),
            )
        )
        if self.path.split("?")[0] != expected:
            self._send_json(404, self._error_body("not_found_error", f"no route {self.path}"))
            return
        refusal = self._refuse(body)
        if refusal is not None:
            status, kind, message = refusal
            self._send_json(status, self._error_body(kind, message))
            return
        assert isinstance(body, dict)
        reply = self.fake._next_reply(str(body["model"]))
        if reply is None:
            # Final: an SDK retrying it would only hide that the test sent one request too many.
            message = f"no scripted reply for model {body['model']!r}"
            final = {"x-should-retry": "false"}
            self._send_json(500, self._error_body("api_error", message), final)
            return
        self.fake._sleep(reply.delay_s)
        self._send_reply(reply, body)

    def _refuse(self, body: Any) -> tuple[int, str, str] | None:
        """What the real API would refuse: a missing or wrong key, a body without the basics."""
        if self.fake.api == "anthropic" and not self.headers.get("anthropic-version"):
            return 400, "invalid_request_error", "anthropic-version header is required"
        if self._sent_key() != self.fake.api_key:
            return 401, "authentication_error", "invalid x-api-key"
        if not isinstance(body, dict):
            return 400, "invalid_request_error", "body is not a JSON object"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return 400, "invalid_request_error", "model: field required"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, "invalid_request_error", "messages: at least one message is required"
        if body.get("stream"):
            return 400, "invalid_request_error", "streaming is not supported by the fake"
        if self.fake.api == "anthropic" and not isinstance(body.get("max_tokens"), int):
            return 400, "invalid_request_error", "max_tokens: field required"
        return None

    def _send_reply(self, reply: Reply, request: dict[str, Any]) -> None:
        if isinstance(reply, Reactive):
            reply = reply.respond(last_message(request))
        if isinstance(reply, HttpError):
            headers: dict[str, str] = {}
            if reply.retry_after_s is not None:
                headers["retry-after"] = _number(reply.retry_after_s)
            if reply.retry_after_ms is not None:
                headers["retry-after-ms"] = str(reply.retry_after_ms)
            body = self._error_body(reply.error_type, reply.message)
            self._send_json(reply.status, body, headers)
        elif isinstance(reply, Malformed):
            self._send(200, reply.body, reply.content_type)
        elif self.fake.api == "anthropic":
            self._send_json(200, self._anthropic_message(reply, request))
        else:
            self._send_json(200, self._openai_completion(reply, request))

    def _anthropic_message(self, reply: Answer, request: dict[str, Any]) -> Any:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        stop_reason = reply.stop_reason if isinstance(reply, Text) else "tool_use"
        for name, arguments in _calls(reply):
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{self.fake._next_id():08d}",
                    "name": name,
                    "input": dict(arguments),
                }
            )
        usage = _usage_numbers(reply, request)
        return {
            "id": f"msg_{self.fake._next_id():08d}",
            "type": "message",
            "role": "assistant",
            "model": request["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage[0],
                "output_tokens": usage[1],
                "cache_read_input_tokens": usage[2],
                "cache_creation_input_tokens": usage[3],
            },
        }

    def _openai_completion(self, reply: Answer, request: dict[str, Any]) -> Any:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        finish = "stop" if isinstance(reply, Text) else "tool_calls"
        if isinstance(reply, Text) and reply.stop_reason == "max_tokens":
            finish = "length"
        if not isinstance(reply, Text):
            message["tool_calls"] = [
                {
                    "id": f"call_{self.fake._next_id():08d}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for name, arguments in _calls(reply)
            ]
        usage = _usage_numbers(reply, request)
        return {
            "id": f"chatcmpl-{self.fake._next_id():08d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": usage[0] + usage[2],
                "completion_tokens": usage[1],
                "total_tokens": usage[0] + usage[2] + usage[1],
                "prompt_tokens_details": {
                    "cached_tokens": usage[2],
                    "cache_write_tokens": usage[3],
                },
            },
        }

    def _error_body(self, kind: str, message: str) -> Any:
        if self.fake.api == "anthropic":
            return {"type": "error", "error": {"type": kind, "message": message}}
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}

    def _send_json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(body).encode(), "application/json", headers)

    def _send(
        self,
        status: int,
        payload: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status, _reason(status))
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); nothing to tell it


def _reason(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _calls(reply: Answer) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    if isinstance(reply, ToolCall):
        return ((reply.name, reply.arguments),)
    if isinstance(reply, ToolCalls):
        return reply.calls
    return ()


def _usage_numbers(reply: Answer, request: dict[str, Any]) -> tuple[int, int, int, int]:
    usage = reply.usage
    shown = len(_texts(request.get("system"))) + len(_texts(request.get("messages")))
    inputs = usage.input_tokens if usage.input_tokens is not None else max(1, shown // 4)
    outputs = (
        usage.output_tokens if usage.output_tokens is not None else max(1, len(reply.text) // 4)
    )
    return inputs, outputs, usage.cache_read_tokens, usage.cache_write_tokens


class FakeModels:
    """Both fake APIs, addressed by model id (`anthropic:<name>` / `openai:<name>`)."""

    def __init__(self) -> None:
        self.anthropic = FakeModelServer("anthropic")
        self.openai = FakeModelServer("openai")

    def server(self, model_id: str) -> FakeModelServer:
        provider, _, _ = model_id.partition(":")
        if provider == "anthropic":
            return self.anthropic
        if provider == "openai":
            return self.openai
        raise ValueError(f"expected 'anthropic:<name>' or 'openai:<name>', got {model_id!r}")

    def script(self, model_id: str, *replies: Reply) -> None:
        self.server(model_id).script(model_id.partition(":")[2], *replies)

    def default(self, model_id: str, reply: Reply) -> None:
        self.server(model_id).default(model_id.partition(":")[2], reply)

    def requests_for(self, model_id: str) -> list[RecordedRequest]:
        return self.server(model_id).requests_for(model_id.partition(":")[2])

    @property
    def requests(self) -> list[RecordedRequest]:
        return sorted([*self.anthropic.requests, *self.openai.requests], key=lambda r: r.at)

    @property
    def unscripted(self) -> int:
        return self.anthropic.unscripted + self.openai.unscripted

    def env(self) -> dict[str, str]:
        """The variables that point the CLI (and both SDKs) at these servers."""
        return {
            "ANTHROPIC_API_KEY": self.anthropic.api_key,
            "ANTHROPIC_BASE_URL": self.anthropic.base_url,
            "OPENAI_API_KEY": self.openai.api_key,
            "OPENAI_BASE_URL": self.openai.base_url,
        }

    def start(self) -> FakeModels:
        self.anthropic.start()
        self.openai.start()
        return self

    def stop(self) -> None:
        self.anthropic.stop()
        self.openai.stop()


@contextmanager
def running_fake_models() -> Iterator[FakeModels]:
    models = FakeModels().start()
    try:
        yield models
    finally:
        models.stop()


def reply_from_json(entry: Mapping[str, Any]) -> Reply:
    """A script entry from JSON: {"text": ...} | {"tool": name, "arguments": {...}} |
    {"tools": [{"tool": name, "arguments": {...}}, ...], "text": ...} |
    {"status": 429, "retry_after_s": 1} | {"malformed": true}; any may add "delay_s"."""
    delay = float(entry.get("delay_s", 0.0))
    if "tools" in entry:
        calls = tuple(
            (str(call["tool"]), dict(call.get("arguments", {}))) for call in entry["tools"]
        )
        return ToolCalls(calls, text=str(entry.get("text", "")), delay_s=delay)
    if "text" in entry:
        return Text(str(entry["text"]), delay_s=delay)
    if "tool" in entry:
        return ToolCall(str(entry["tool"]), dict(entry.get("arguments", {})), delay_s=delay)
    if "status" in entry:
        status = int(entry["status"])
        kinds = {429: "rate_limit_error", 529: "overloaded_error"}
        return HttpError(
            status,
            kinds.get(status, "api_error"),
            str(entry.get("message", "scripted error")),
            retry_after_s=entry.get("retry_after_s"),
            delay_s=delay,
        )
    if entry.get("malformed"):
        return Malformed(delay_s=delay)
    raise ValueError(f"unknown script entry {dict(entry)!r}")


def load_script(models: FakeModels, script: Mapping[str, Any]) -> None:
    """{"<provider>:<model>": [entry, ...] | entry, ...}; a single entry becomes the default."""
    for model_id, entries in script.items():
        if isinstance(entries, list):
            models.script(model_id, *(reply_from_json(entry) for entry in entries))
        else:
            models.default(model_id, reply_from_json(entries))


def main(argv: Sequence[str] | None = None) -> int:
    """Serve both fakes until interrupted; print the environment that points at them."""
    parser = argparse.ArgumentParser(prog="python -m reviewers.fake_servers")
    parser.add_argument("--script", help="JSON file: {model_id: [reply, ...] or reply}")
    parser.add_argument(
        "--approve", action="store_true", help="every model answers 'VERDICT: APPROVE'"
    )
    args = parser.parse_args(argv)
    with running_fake_models() as models:
        if args.approve:
            models.anthropic.default("*", Text("VERDICT: APPROVE"))
            models.openai.default("*", Text("VERDICT: APPROVE"))
        if args.script:
            with open(args.script, encoding="utf-8") as handle:
                load_script(models, json.load(handle))
        for name, value in models.env().items():
            print(f"export {name}={value}")
        sys.stdout.flush()
        with suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
