"""The fake model servers refuse what the real APIs refuse and say when a test under-scripted."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from app.repo_config import ModelRef
from reviewers.fake_servers import (
    HttpError,
    Malformed,
    Text,
    ToolCall,
    reply_from_json,
)
from reviewers.model_client import Message, ModelError
from reviewers.providers import ProviderCredentials, build_client

pytestmark = pytest.mark.slow


def post(url: str, body: object, headers: dict[str, str]) -> tuple[int, dict]:
    response = httpx.post(url, json=body, headers=headers, timeout=5)
    return response.status_code, response.json()


def anthropic_url(fake_models) -> str:
    return fake_models.anthropic.base_url + "/v1/messages"


def test_anthropic_fake_validates_like_the_api(fake_models):
    url = anthropic_url(fake_models)
    key = {"x-api-key": fake_models.anthropic.api_key, "anthropic-version": "2023-06-01"}
    good = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    assert post(url, good, {"anthropic-version": "2023-06-01"})[0] == 401
    assert post(url, good, {"x-api-key": fake_models.anthropic.api_key})[0] == 400
    assert post(url, {**good, "max_tokens": None}, key)[0] == 400
    assert post(url, {**good, "messages": []}, key)[0] == 400
    assert post(url, {**good, "stream": True}, key)[0] == 400
    status, body = post(url, good, key)
    assert status == 500
    assert body["error"]["message"] == "no scripted reply for model 'm'"
    assert fake_models.unscripted == 1
    assert len(fake_models.anthropic.requests) == 6  # refused requests are recorded too


def test_openai_fake_wants_a_bearer_key(fake_models):
    url = fake_models.openai.base_url + "/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert post(url, body, {})[0] == 401
    fake_models.openai.default("*", Text("any model"))
    status, answer = post(url, body, {"authorization": f"Bearer {fake_models.openai.api_key}"})
    assert status == 200
    assert answer["choices"][0]["message"]["content"] == "any model"


def test_unscripted_calls_are_not_retried_by_the_sdk(fake_models):
    client = build_client(
        ModelRef.model_validate("anthropic:nobody"), ProviderCredentials.from_env(fake_models.env())
    )
    with pytest.raises(ModelError, match="no scripted reply"):
        client.complete("s", [Message("user", "u")], max_tokens=5, timeout_s=5)
    assert len(fake_models.anthropic.requests) == 1


def test_queue_then_default(fake_models):
    fake_models.script("openai:m", Text("first"))
    fake_models.default("openai:m", Text("then always"))
    client = build_client(
        ModelRef.model_validate("openai:m"), ProviderCredentials.from_env(fake_models.env())
    )
    texts = [
        client.complete("s", [Message("user", "u")], max_tokens=5, timeout_s=5).text
        for _ in range(3)
    ]
    assert texts == ["first", "then always", "then always"]
    assert fake_models.openai.pending("m") == 0


@pytest.mark.parametrize(
    ("entry", "reply"),
    [
        ({"text": "VERDICT: APPROVE"}, Text("VERDICT: APPROVE")),
        ({"tool": "t", "arguments": {"a": 1}}, ToolCall("t", {"a": 1})),
        ({"status": 429, "retry_after_s": 2}, HttpError(429, "rate_limit_error", "scripted error",
                                                        retry_after_s=2)),
        ({"malformed": True, "delay_s": 1}, Malformed(delay_s=1.0)),
    ],
)  # fmt: skip
def test_json_script_entries(entry, reply):
    assert reply_from_json(entry) == reply


def test_unknown_json_entry_is_refused():
    with pytest.raises(ValueError, match="unknown script entry"):
        reply_from_json({"txt": "typo"})


def test_runs_standalone_for_the_demo():
    """`python -m reviewers.fake_servers --approve` prints the variables, then serves."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewers.fake_servers", "--approve"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        exported = dict(
            proc.stdout.readline().removeprefix("export ").strip().split("=", 1) for _ in range(4)
        )
        client = build_client(
            ModelRef.model_validate("openai:any"), ProviderCredentials.from_env(exported)
        )
        answer = client.complete("s", [Message("user", "u")], max_tokens=5, timeout_s=5)
        assert answer.text == "VERDICT: APPROVE"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
