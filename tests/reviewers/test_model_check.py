"""Whether a role's models can be called, asked of real HTTP servers before a run: the fake
model servers' model lists, a port nothing listens on, a server that is not a model server,
and one that never answers."""

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.errors import UserError
from app.repo_config import ModelRef
from reviewers.fake_servers import FakeModelServer, Text
from reviewers.model_check import Role, check_roles
from reviewers.providers import NO_KEY, ProviderCredentials


def ref(entry) -> ModelRef:
    return ModelRef.model_validate(entry)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def local_server() -> Iterator[FakeModelServer]:
    """An OpenAI-compatible server as Ollama runs one: no key wanted, a placeholder accepted."""
    with FakeModelServer("openai", api_key=NO_KEY) as server:
        server.default("qwen2.5-coder:7b", Text("hello"))
        yield server


def test_a_listed_model_at_a_local_url_passes_without_a_key(local_server):
    model = ref({"id": "openai:qwen2.5-coder:7b", "base_url": local_server.base_url})
    assert check_roles([Role("the implementer", (model,))], ProviderCredentials()) == []
    (asked,) = local_server.listings
    assert asked.path == "/v1/models" and asked.headers["authorization"] == f"Bearer {NO_KEY}"


def test_the_operators_key_goes_only_to_its_own_endpoint(fake_models):
    fake_models.default("anthropic:claude-x", Text("hi"))
    credentials = ProviderCredentials.from_env(fake_models.env())
    assert check_roles([Role("the implementer", (ref("anthropic:claude-x"),))], credentials) == []
    (asked,) = fake_models.anthropic.listings
    assert asked.headers["x-api-key"] == fake_models.anthropic.api_key
    assert asked.headers["anthropic-version"]


def test_a_missing_key_names_the_variable_and_asks_nothing(fake_models):
    with pytest.raises(UserError) as info:
        check_roles([Role("the implementer", (ref("anthropic:claude-x"),))], ProviderCredentials())
    assert str(info.value) == "anthropic:claude-x: ANTHROPIC_API_KEY is not set"
    assert fake_models.anthropic.listings == []


def test_a_dead_url_is_named_with_what_it_answered():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    model = ref({"id": "openai:qwen2.5-coder:7b", "base_url": url})
    started = time.monotonic()
    with pytest.raises(UserError) as info:
        check_roles([Role("the implementer", (model,))], ProviderCredentials())
    assert str(info.value) == (
        f"openai:qwen2.5-coder:7b: cannot connect to {url}: Connection refused"
    )
    assert time.monotonic() - started < 1


def test_a_url_without_v1_is_not_an_openai_compatible_server(local_server):
    root = local_server.base_url.removesuffix("/v1")
    model = ref({"id": "openai:qwen2.5-coder:7b", "base_url": root})
    with pytest.raises(UserError) as info:
        check_roles([Role("the implementer", (model,))], ProviderCredentials())
    assert str(info.value) == (
        f"openai:qwen2.5-coder:7b: {root} answered HTTP 404 to GET /models: not an "
        "OpenAI-compatible server (an OpenAI-compatible URL usually ends in /v1)"
    )


def test_a_refused_key_names_its_variable_and_never_shows_it(fake_models):
    env = {**fake_models.env(), "OPENAI_API_KEY": "sk-wrong-key-12345"}
    with pytest.raises(UserError) as info:
        check_roles(
            [Role("the implementer", (ref("openai:gpt-x"),))], ProviderCredentials.from_env(env)
        )
    said = str(info.value)
    assert said == (
        f"openai:gpt-x: {fake_models.openai.base_url} refused the key in OPENAI_API_KEY (HTTP 401)"
    )
    assert "sk-wrong" not in said


class _WebPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html>it works</html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return


def test_a_web_server_that_is_not_a_model_server_is_said_to_be_so():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        with pytest.raises(UserError) as info:
            check_roles(
                [Role("the implementer", (ref({"id": "openai:m", "base_url": url}),))],
                ProviderCredentials(),
            )
    finally:
        server.shutdown()
        server.server_close()
    assert str(info.value) == (
        f"openai:m: {url} answered GET /models without a model list: not an OpenAI-compatible "
        "server"
    )


def test_a_server_that_never_answers_is_named_after_the_timeout():
    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        model = ref({"id": "openai:m", "base_url": url})
        started = time.monotonic()
        with pytest.raises(UserError) as info:
            check_roles([Role("the implementer", (model,))], ProviderCredentials(), timeout_s=0.5)
    assert str(info.value) == f"openai:m: {url} did not answer within 0.5s"
    assert time.monotonic() - started < 3


def test_a_chain_with_one_callable_model_warns_about_the_other(local_server):
    dead = ref({"id": "openai:first", "base_url": f"http://127.0.0.1:{closed_port()}/v1"})
    local = ref({"id": "openai:qwen2.5-coder:7b", "base_url": local_server.base_url})
    warnings = check_roles([Role("the implementer", (dead, local))], ProviderCredentials())
    assert len(warnings) == 1
    assert warnings[0].startswith("the implementer: openai:first: cannot connect to http://")


def test_a_chain_with_no_callable_model_names_every_reason():
    models = (ref("anthropic:a"), ref("openai:b"))
    with pytest.raises(UserError) as info:
        check_roles([Role("the implementer", models)], ProviderCredentials())
    assert str(info.value) == (
        "the implementer can call none of its models: anthropic:a: ANTHROPIC_API_KEY is not "
        "set; openai:b: OPENAI_API_KEY is not set"
    )


def test_a_panel_short_of_its_quorum_is_an_error(local_server):
    local = ref({"id": "openai:qwen2.5-coder:7b", "base_url": local_server.base_url})
    panel = Role("the review panel", (local, ref("anthropic:a")), needed=2)
    with pytest.raises(UserError, match="the review panel needs 2 models it can call, has 1: "):
        check_roles([panel], ProviderCredentials())


def test_a_model_the_server_does_not_list_is_a_warning(local_server):
    model = ref({"id": "openai:llama3", "base_url": local_server.base_url})
    warnings = check_roles([Role("the implementer", (model,))], ProviderCredentials())
    assert warnings == [
        f"openai:llama3: {local_server.base_url} does not list llama3 (it lists qwen2.5-coder:7b)"
    ]


def test_each_endpoint_is_asked_once(local_server):
    model = ref({"id": "openai:qwen2.5-coder:7b", "base_url": local_server.base_url})
    roles = [Role("the implementer", (model,)), Role("the planner", (model,))]
    assert check_roles(roles, ProviderCredentials()) == []
    assert len(local_server.listings) == 1
