"""Fake model servers for every test that talks to a model.

Two real HTTP servers on 127.0.0.1 (Anthropic Messages API, OpenAI chat completions) that the
real `anthropic` and `openai` SDKs reach through `base_url`. Script replies per model id and
read back every request (see `reviewers.fake_servers` for the reply types):

    def test_x(fake_models):
        fake_models.script("anthropic:claude-x", rate_limited(1), Text("VERDICT: APPROVE"))
        env = fake_models.env()      # ANTHROPIC_/OPENAI_ API keys and base URLs
        ...
        assert "secret" not in fake_models.requests_for("anthropic:claude-x")[0].prompt_text

Fixtures:
  fake_models      a started `FakeModels` (both servers), stopped after the test
  fake_models_env  the same, with its variables set in this process's environment
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reviewers.fake_servers import FakeModels, Text, running_fake_models

# The implementer model id the loop and job tests script (tests/loop, tests/jobs/loop).
IMPLEMENTER_UNDER_TEST = "anthropic:claude-impl"


@pytest.fixture
def fake_models() -> Iterator[FakeModels]:
    with running_fake_models() as models:
        # Told its submission is green, the tests' scripted implementer says it is done (a test
        # that scripts more turns gets those first).
        models.default(IMPLEMENTER_UNDER_TEST, Text("The acceptance criteria are met.\n\nDONE"))
        yield models


@pytest.fixture
def fake_models_env(fake_models: FakeModels, monkeypatch: pytest.MonkeyPatch) -> FakeModels:
    for name, value in fake_models.env().items():
        monkeypatch.setenv(name, value)
    return fake_models
