"""The `secret` rule: credential formats and secret-named high-entropy values are caught; hashes,
UUIDs, commit ids, lockfile digests and ordinary code are not; the value is never repeated.

Credentials are assembled at run time from pieces and seeded random characters, so this file
holds nothing a secret scanner (ours or GitHub's push protection) would mistake for one.
"""

from __future__ import annotations

import random
import string

import pytest

from app.guards.changes import Line
from app.guards.secrets_scan import scan_lines, scan_path, shannon_entropy
from tests.guards.conftest import GitRepo, by_rule, diff_result

_RNG = random.Random(20240601)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits


def rand(length: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(length))


def scan(*texts: str, path: str = "app/settings.py") -> list[str]:
    lines = [Line(number, text, number) for number, text in enumerate(texts, start=1)]
    return [finding.kind for finding in scan_lines(path, lines)]


KEY_HEADER = "-----BEGIN " + "RSA PRIVATE KEY-----"
CREDENTIALS = {
    "AWS access key id": "aws_access_key_id = " + "AK" + "IA" + rand(16, UPPER_DIGITS),
    "GitHub token": "token: " + "gh" + "p_" + rand(36),
    "GitHub fine-grained token": "github" + "_pat_" + rand(22) + "_" + rand(59),
    "Slack token": "SLACK=" + "xo" + "xb-" + rand(12, string.digits) + "-" + rand(24),
    "Slack webhook URL": "url = 'https://hooks.slack.com/services/T"
    + rand(8, UPPER_DIGITS)
    + "/B"
    + rand(8, UPPER_DIGITS)
    + "/"
    + rand(24)
    + "'",
    "npm token": "//registry.npmjs.org/:_authToken=" + "np" + "m_" + rand(36),
    "Anthropic API key": 'client = Anthropic(api_key="' + "sk-" + "ant-api03-" + rand(93) + '")',
    "OpenAI API key": "OPENAI_API_KEY=" + "sk-" + "proj-" + rand(64),
    "Google API key": "key=" + "AI" + "za" + rand(35),
    "Stripe secret key": "stripe.api_key = '" + "sk_" + "live_" + rand(24) + "'",
}


@pytest.mark.parametrize("kind", sorted(CREDENTIALS))
def test_provider_token_formats_are_found(kind: str):
    assert scan(CREDENTIALS[kind]) == [kind]


def test_a_private_key_is_found_with_its_body_but_not_a_mere_mention():
    body = rand(64, string.ascii_letters + string.digits + "+/")
    assert scan(KEY_HEADER, body, "-----END RSA PRIVATE KEY-----") == ["private key"]
    inline = '"private_key": "' + KEY_HEADER + "\\n" + body + '\\n"'
    assert scan(inline, path="sa.json") == ["private key"]
    assert scan(f"if text.startswith('{KEY_HEADER}'):", "    return True") == []


@pytest.mark.parametrize(
    "text",
    [
        'API_KEY = "' + rand(32) + '"',
        "password: " + rand(20),
        'db_password := "' + rand(18) + '"',
        '"client_secret": "' + rand(40) + '",',
        "export AUTH_TOKEN=" + rand(40),
        'self.secret_key = "' + rand(24) + '"',
        'token: str = "' + rand(30) + '"',
        'webhook_secret = "' + rand(40, "0123456789abcdef") + '"',
        # joined like words, but each part is a random run
        'auth_token = "' + rand(12) + "-" + rand(12) + '"',
        'api_key = "k3jd9f-x8qz2p-7w4mnb"',
        # made of words, but naming no kind of secret: a passphrase
        'password = "winter-garden-2023"',
        'db_password = "correct-horse-battery-staple-42"',
        'api_key = "sunset-river-mango-4821"',
    ],
)
def test_high_entropy_values_for_secret_named_keys_are_found(text: str):
    assert len(scan(text)) == 1


def test_a_password_in_a_url_is_found_but_not_a_placeholder():
    assert scan("DATABASE_URL=postgres://app:" + rand(16) + "@db.internal/app") == [
        "password in a URL"
    ]
    assert scan("url = 'postgres://user:password@localhost/db'") == []
    assert scan("redis://:${REDIS_PASSWORD}@cache:6379") == []
    assert scan('url = "https://user:password123@db.internal/"') == []
    assert scan('"https://tom%40example.org:abc123%40%20%@example.org"') == []
    assert scan("amqp://app:" + rand(16) + "@localhost:5672") == []
    # a passphrase of words is a password all the same
    assert scan("DATABASE_URL=postgres://app:winter-garden-2023@db.internal/app") == [
        "password in a URL"
    ]


SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
NEAR_MISSES = [
    "import secrets",
    "token = secrets.token_hex(32)",
    "password = os.environ['DB_PASSWORD']",
    "api_key = settings.openai_api_key",
    "API_KEY = os.getenv('API_KEY')",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'password: "{{ vault_db_password }}"',
    f'commit = "{SHA}"',
    f"git checkout {SHA}",
    f'token_sha = "{SHA}"',
    'request_id = "123e4567-e89b-12d3-a456-426614174000"',
    'api_key = "123e4567-e89b-12d3-a456-426614174000"',
    'sha256 = "' + "ab" * 32 + '"',
    'password_hash = "$2b$12$' + rand(53) + '"',
    'secret_name = "production/database/credentials"',
    'token_url = "https://oauth2.googleapis.com/token"',
    'API_KEY = "your-api-key-here"',
    'OPENAI_API_KEY = "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"',
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    'password = "correct horse battery staple"',
    "def get_token(self) -> str:",
    "Store the token in `.env` and never commit it.",
    "max_token_length = 4096",
    "SECRET_KEY = get_random_secret_key()",
    "newToken: 'refreshed-token-123'",
    'session_key = "my_session_key_2024"',
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_ordinary_lines_are_not_secrets(text: str):
    assert scan(text) == []


def test_lockfile_integrity_digests_are_not_secrets():
    lock = [
        '      "integrity": "sha512-' + rand(86, ALNUM + "+/") + '==",',
        '      "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",',
        "  integrity sha1-" + rand(27, ALNUM + "+/") + "=",
        'checksum = "' + rand(64, "0123456789abcdef") + '"',
        "github.com/pkg/errors v0.9.1 h1:" + rand(43, ALNUM + "+/") + "=",
    ]
    for path in ("package-lock.json", "yarn.lock", "Cargo.lock", "go.sum", "src/deps.json"):
        assert scan(*lock, path=path) == [], path


def test_key_file_names_are_reported():
    assert scan_path("deploy/id_rsa") is not None
    assert scan_path("deploy/id_rsa.pub") is None
    assert scan_path("certs/client.p12") is not None


def test_entropy_orders_random_above_words():
    assert shannon_entropy(rand(40)) > 4.5
    assert shannon_entropy("aaaaaaaaaaaaaaaa") == 0.0


def test_the_violation_names_the_kind_and_line_never_the_value(repo: GitRepo):
    repo.write("README.md", "x\n")
    base = repo.commit("base")
    token = "gh" + "p_" + rand(36)
    repo.write("app/config.py", f"# settings\nGITHUB = '{token}'\n")
    result = repo.check(base, repo.commit("leak"))
    found = by_rule(result, "secret")
    assert found == [
        (
            "app/config.py",
            2,
            "possible GitHub token added (value not shown); if it is real, revoke it",
        )
    ]
    rendered = str(result.to_dict()) + result.summary_markdown() + str(result.annotations())
    assert token not in rendered
    assert token[:12] not in rendered


def test_secrets_are_looked_for_only_in_added_lines():
    token = "gh" + "p_" + rand(36)
    text = f"--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,1 @@\n-T = '{token}'\n keep\n"
    assert by_rule(diff_result(text), "secret") == []
