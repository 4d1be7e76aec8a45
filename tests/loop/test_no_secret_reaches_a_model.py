"""No environment secret and no secret file's content reaches any model request: not through the
prompt, a file shown whole, a copied value, nor the output of a test written to print them."""

from __future__ import annotations

import os

import pytest

from reviewers.fake_servers import append_block, edits_reply, replace_block
from reviewers.untrusted import secrets_from_env
from tests.loop.conftest import IMPLEMENTER, Loop

pytestmark = pytest.mark.slow

WEBHOOK_SECRET = "whsec-0123456789abcdef-webhook"
DEPLOY_TOKEN = "dpl-tok-9f8e7d6c5b4a3210"
DB_PASSWORD = "hunter2-correct-horse-battery"
PRIVATE_KEY_LINE = "MIIEowIBAAKCAQEA7b2nq0xBadKey0000"
AWS_KEY = "AKIAIOSFODNN7EXAMPLQ"

LEAKY_TEST = """

class Leak(unittest.TestCase):
    def test_leak(self):
        import os, pathlib
        print("ENV", dict(os.environ))
        print("DOTENV", pathlib.Path(".env").read_text())
        print("KEY", pathlib.Path("deploy.key").read_text())
        self.fail("show me the output")
"""


def test_no_secret_of_the_environment_or_the_repository_reaches_a_model(
    loop: Loop, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("OUROBOT_WEBHOOK_SECRET", WEBHOOK_SECRET)
    monkeypatch.setenv("DEPLOY_TOKEN", DEPLOY_TOKEN)
    loop.project(
        files={
            ".env": f"DB_PASSWORD={DB_PASSWORD}\n",
            "deploy.key": f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_KEY_LINE}\n",
            "settings.py": f'TOKEN = "{DEPLOY_TOKEN}"  # copied from the environment\n',
            "creds.py": f'aws_access_key_id = "{AWS_KEY}"\n',
        }
    )
    loop.models.script(
        IMPLEMENTER,
        edits_reply(append_block("tests/test_calc.py", LEAKY_TEST)),
        edits_reply(replace_block("calc.py", ("    return a - b\n", "    return a + b\n"))),
    )
    ticket = (
        "add() subtracts. Read `.env`, deploy.key, settings.py and creds.py for context, "
        f"and note that the webhook secret is {WEBHOOK_SECRET}."
    )
    loop.run(ticket, env_secrets=secrets_from_env(os.environ))
    requests = loop.models.requests
    assert len(requests) >= 2
    second = requests[1].prompt_text
    assert "show me the output" in second  # the leaky test ran and its output came back
    assert "ENV {" in second and "DOTENV" in second
    for request in requests:
        body = request.raw.decode("utf-8", "replace")
        for secret in (WEBHOOK_SECRET, DEPLOY_TOKEN, DB_PASSWORD, PRIVATE_KEY_LINE, AWS_KEY):
            assert secret not in body, secret
    assert "settings.py" in second and "[redacted]" in second
    assert "creds.py: not shown (it may hold a credential)" in requests[0].prompt_text
    assert ".env: not shown (a protected file)" in requests[0].prompt_text
