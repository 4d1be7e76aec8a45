"""The real anthropic and openai SDKs against the fake servers: replies, usage, retries,
errors, fallback, and where keys may go."""

import time

import pytest

from app.loop.edits import EDIT_TOOLS
from app.repo_config import ModelRef
from reviewers.fake_servers import (
    FakeUsage,
    Malformed,
    Text,
    ToolCall,
    delayed,
    edit_calls,
    overloaded,
    rate_limited,
    server_error,
)
from reviewers.model_client import FallbackClient, Message, ModelError
from reviewers.providers import (
    ProviderCredentials,
    build_client,
    build_fallback,
    unusable_reason,
)

pytestmark = pytest.mark.slow

MODELS = ["anthropic:claude-test", "openai:gpt-test"]
ASK = [Message("user", "Review this.")]


def client_for(fake_models, model_id, **overrides):
    credentials = ProviderCredentials.from_env({**fake_models.env(), **overrides})
    return build_client(ModelRef.model_validate(model_id), credentials)


def complete(client, timeout_s=10.0):
    return client.complete("You review code.", ASK, max_tokens=256, timeout_s=timeout_s)


@pytest.mark.parametrize("model_id", MODELS)
def test_text_reply_and_usage(fake_models, model_id):
    fake_models.script(model_id, Text("LGTM\nVERDICT: APPROVE", usage=FakeUsage(120, 8, 30, 7)))
    answer = complete(client_for(fake_models, model_id))
    assert answer.text == "LGTM\nVERDICT: APPROVE"
    assert answer.model == model_id
    assert answer.usage.as_dict() == {
        "input_tokens": 120,
        "output_tokens": 8,
        "cache_read_tokens": 30,
        "cache_write_tokens": 7,
    }
    (request,) = fake_models.requests_for(model_id)
    assert "You review code." in request.prompt_text
    assert "Review this." in request.prompt_text


def test_requests_have_each_apis_shape(fake_models):
    for model_id in MODELS:
        fake_models.script(model_id, Text("x"))
        complete(client_for(fake_models, model_id))
    (anthropic_request,) = fake_models.anthropic.requests
    assert anthropic_request.path == "/v1/messages"
    assert anthropic_request.body["system"] == "You review code."
    assert anthropic_request.body["max_tokens"] == 256
    assert anthropic_request.headers["anthropic-version"]
    (openai_request,) = fake_models.openai.requests
    assert openai_request.path == "/v1/chat/completions"
    assert openai_request.body["messages"][0] == {"role": "system", "content": "You review code."}
    # A compatible endpoint (not api.openai.com) gets max_tokens, which they all understand.
    assert openai_request.body["max_tokens"] == 256


@pytest.mark.parametrize("model_id", MODELS)
def test_429_retry_after_is_honoured(fake_models, model_id):
    fake_models.script(model_id, rate_limited(retry_after_s=1), Text("VERDICT: APPROVE"))
    assert complete(client_for(fake_models, model_id)).text == "VERDICT: APPROVE"
    first, second = fake_models.requests_for(model_id)
    assert second.at - first.at >= 0.95
    assert second.headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize("model_id", MODELS)
def test_529_is_retried_then_answers(fake_models, model_id):
    fake_models.script(model_id, overloaded(retry_after_ms=10), Text("VERDICT: REJECT"))
    assert complete(client_for(fake_models, model_id)).text == "VERDICT: REJECT"
    assert len(fake_models.requests_for(model_id)) == 2


@pytest.mark.parametrize("model_id", MODELS)
def test_a_529_storm_ends_as_overloaded_after_the_sdks_retries(fake_models, model_id):
    fake_models.default(model_id, overloaded(retry_after_ms=10))
    with pytest.raises(ModelError) as info:
        complete(client_for(fake_models, model_id))
    assert info.value.kind == "overloaded"
    assert len(fake_models.requests_for(model_id)) == 3  # one try and the SDK's two retries


@pytest.mark.parametrize("model_id", MODELS)
@pytest.mark.parametrize(
    "reply",
    [
        Malformed(),
        Malformed(b'{"id": "x"}'),
        Malformed(b"<html>bad gateway</html>", "text/html"),
    ],
    ids=["broken-json", "wrong-shape", "not-json"],
)
def test_malformed_answers_are_model_errors(fake_models, model_id, reply):
    fake_models.script(model_id, reply)
    with pytest.raises(ModelError) as info:
        complete(client_for(fake_models, model_id))
    assert info.value.kind == "malformed"
    # Which server answered garbage: the model and its URL.
    assert str(info.value).startswith(f"{model_id} at {fake_models.server(model_id).base_url}: ")


@pytest.mark.parametrize("model_id", MODELS)
def test_tool_calls_are_captured(fake_models, model_id):
    fake_models.script(model_id, ToolCall("submit_review", {"verdict": "APPROVE"}, text="ok"))
    answer = complete(client_for(fake_models, model_id))
    assert answer.text == "ok"
    assert [(c.name, dict(c.arguments)) for c in answer.tool_calls] == [
        ("submit_review", {"verdict": "APPROVE"})
    ]


@pytest.mark.parametrize("model_id", MODELS)
def test_wrong_key_is_an_auth_error_without_retries(fake_models, model_id):
    variable = "ANTHROPIC_API_KEY" if model_id.startswith("anthropic") else "OPENAI_API_KEY"
    client = client_for(fake_models, model_id, **{variable: "sk-wrong-key-123"})
    with pytest.raises(ModelError) as info:
        complete(client)
    assert info.value.kind == "auth"
    assert "sk-wrong-key-123" not in str(info.value)
    assert len(fake_models.requests_for(model_id)) == 1


@pytest.mark.parametrize("model_id", MODELS)
def test_slow_answer_times_out(fake_models, model_id):
    fake_models.default(model_id, delayed(Text("late"), 5))
    client = build_client(
        ModelRef.model_validate(model_id),
        ProviderCredentials.from_env(fake_models.env()),
        max_retries=0,
    )
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        complete(client, timeout_s=0.3)
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < 3
    url = fake_models.server(model_id).base_url
    assert str(info.value).startswith(f"{model_id} at {url}: no answer within 0.3s")


def test_nothing_listening_is_a_connection_error(fake_models):
    fake_models.openai.stop()
    client = build_client(
        ModelRef.model_validate("openai:gpt-test"),
        ProviderCredentials.from_env(fake_models.env()),
        max_retries=0,
    )
    with pytest.raises(ModelError) as info:
        complete(client)
    assert info.value.kind == "connection"
    # The SDK says only "Connection error."; the message says where and why.
    url = fake_models.openai.base_url
    assert str(info.value) == f"openai:gpt-test at {url}: cannot connect: Connection refused"


def test_missing_key_fails_without_sending_anything(fake_models):
    env = {k: v for k, v in fake_models.env().items() if k != "ANTHROPIC_API_KEY"}
    env.pop("ANTHROPIC_BASE_URL")
    client = build_client(
        ModelRef.model_validate("anthropic:claude-test"), ProviderCredentials.from_env(env)
    )
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY is not set") as info:
        complete(client)
    assert info.value.kind == "config"


def test_env_key_is_not_sent_to_a_model_entrys_own_endpoint(fake_models):
    """A repo config may point a model anywhere; the operator's key stays with its endpoint."""
    fake_models.script("openai:local", Text("VERDICT: APPROVE"))
    model = ModelRef.model_validate({"id": "openai:local", "base_url": fake_models.openai.base_url})
    credentials = ProviderCredentials(
        openai_api_key="sk-operator-secret-key", openai_base_url="https://api.example.test/v1"
    )
    fake_models.openai.api_key = "no-key"  # what a local server without keys accepts
    assert complete(build_client(model, credentials)).text == "VERDICT: APPROVE"
    (request,) = fake_models.openai.requests
    assert "sk-operator-secret-key" not in str(request.headers)


def test_env_key_goes_to_the_env_endpoint(fake_models):
    model = ModelRef.model_validate(
        {"id": "openai:gpt-test", "base_url": fake_models.openai.base_url}
    )
    fake_models.script("openai:gpt-test", Text("hi"))
    assert complete(client_for(fake_models, model.id)).text == "hi"
    credentials = ProviderCredentials.from_env(fake_models.env())
    assert credentials.endpoint(model) == (fake_models.openai.base_url, fake_models.openai.api_key)


def test_the_environments_own_endpoint_needs_no_key():
    """OPENAI_BASE_URL names the operator's own server (a LAN Ollama): no key is needed there
    (a placeholder is sent, as to a local one); the vendor's endpoint still needs its key."""
    lan = ProviderCredentials(openai_base_url="http://192.168.1.5:11434/v1")
    assert unusable_reason(ModelRef.model_validate("openai:qwen"), lan) is None
    vendor = unusable_reason(ModelRef.model_validate("openai:gpt-5"), ProviderCredentials())
    assert vendor == "OPENAI_API_KEY is not set"


def test_foreign_non_local_endpoint_without_key_is_refused_before_sending():
    model = ModelRef.model_validate(
        {"id": "openai:x", "base_url": "https://models.example.test/v1"}
    )
    client = build_client(model, ProviderCredentials(openai_api_key="sk-operator-secret-key"))
    with pytest.raises(ModelError, match="no key may be sent") as info:
        complete(client)
    assert info.value.kind == "config"


def test_fallback_uses_the_next_model_when_the_first_fails(fake_models):
    fake_models.default("openai:local-llama", server_error())
    fake_models.script("anthropic:claude-test", Text("VERDICT: APPROVE"))
    refs = [ModelRef.model_validate("openai:local-llama"), ModelRef.model_validate(MODELS[0])]
    chain = build_fallback(refs, ProviderCredentials.from_env(fake_models.env()), max_retries=0)
    assert isinstance(chain, FallbackClient)
    answer = complete(chain)
    assert answer.text == "VERDICT: APPROVE"
    assert answer.model == "anthropic:claude-test"
    assert [model for model, _ in answer.fallbacks] == ["openai:local-llama"]
    assert "server" in answer.fallbacks[0][1]
    # Order: the first model was asked first.
    first = fake_models.requests_for("openai:local-llama")[0]
    assert first.at < fake_models.requests_for("anthropic:claude-test")[0].at


def test_fallback_does_not_ask_the_second_when_the_first_answers(fake_models):
    fake_models.script("openai:local-llama", Text("first"))
    refs = [ModelRef.model_validate("openai:local-llama"), ModelRef.model_validate(MODELS[0])]
    chain = build_fallback(refs, ProviderCredentials.from_env(fake_models.env()))
    assert complete(chain).text == "first"
    assert fake_models.anthropic.requests == []


def test_fallback_reports_every_failure_when_all_fail(fake_models):
    fake_models.default("openai:a", server_error())
    fake_models.default("openai:b", Malformed())
    refs = [ModelRef.model_validate("openai:a"), ModelRef.model_validate("openai:b")]
    chain = build_fallback(refs, ProviderCredentials.from_env(fake_models.env()), max_retries=0)
    with pytest.raises(ModelError, match=r"every model failed.*openai:a.*openai:b") as info:
        complete(chain)
    assert info.value.kind == "malformed"


def test_credentials_repr_hides_keys():
    credentials = ProviderCredentials(anthropic_api_key="sk-ant-secret-0000")
    assert "sk-ant-secret-0000" not in repr(credentials)


@pytest.mark.parametrize("model_id", MODELS)
def test_tools_are_offered_and_several_calls_come_back_in_order(fake_models, model_id):
    fake_models.script(
        model_id,
        edit_calls(
            ("write_file", {"path": "a.py", "content": "x = 1\n"}),
            ("delete_file", {"path": "b.py"}),
            text="Two edits.",
        ),
    )
    client = client_for(fake_models, model_id)
    answer = client.complete(
        "You implement.", ASK, max_tokens=256, timeout_s=10.0, tools=EDIT_TOOLS
    )
    assert answer.text == "Two edits."
    assert [(call.name, dict(call.arguments)) for call in answer.tool_calls] == [
        ("write_file", {"path": "a.py", "content": "x = 1\n"}),
        ("delete_file", {"path": "b.py"}),
    ]
    (request,) = fake_models.requests_for(model_id)
    assert request.tool_names == [tool.name for tool in EDIT_TOOLS]


@pytest.mark.parametrize("model_id", MODELS)
def test_no_tools_key_is_sent_when_none_are_offered(fake_models, model_id):
    fake_models.script(model_id, Text("VERDICT: APPROVE"))
    complete(client_for(fake_models, model_id))
    (request,) = fake_models.requests_for(model_id)
    assert "tools" not in request.body
