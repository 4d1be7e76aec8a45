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


# The cases below draw from their own generator, so the values of the ones above stay put.
_RNG2 = random.Random(20261201)


def rand2(length: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG2.choice(alphabet) for _ in range(length))


HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _pem_body() -> list[str]:
    return [rand2(64, B64) for _ in range(3)]


NEW_CREDENTIALS = {
    "PyPI token": "see " + "pypi-" + "AgEIcHlwaS5vcmc" + rand2(90, ALNUM + "-_"),
    "SendGrid API key": "key " + "SG" + "." + rand2(22) + "." + rand2(43),
    "Slack app-level token": "SLACK_APP=" + "xa" + "pp-1-A" + rand2(10, UPPER_DIGITS) + "-"
    + rand2(13, string.digits) + "-" + rand2(64, HEX),
    "Azure storage account key": "conn = 'DefaultEndpointsProtocol=https;AccountName=acct;"
    + "Account" + "Key=" + rand2(86, B64) + "==;EndpointSuffix=core.windows.net'",
    "Shopify token": "SHOP = '" + "sh" + "pat_" + rand2(32, HEX) + "'",
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(NEW_CREDENTIALS))
def test_the_rule_sets_provider_formats_are_found_anywhere(kind: str):
    assert scan(NEW_CREDENTIALS[kind], path="docs/notes.md") == [kind]


def test_a_token_deep_in_a_minified_line_is_found():
    token = "gh" + "p_" + rand2(36)
    line = "var a=1;" * 5000 + f'var t="{token}";' + "b()" * 1000
    assert scan(line, path="dist/app.min.js") == ["GitHub token"]
    assert scan("x=" + "ab" * 300_000, path="dist/app.min.js") == []


@pytest.mark.parametrize(
    "text",
    [
        # the exemption words as substrings of a secret-named key: "min", "count", "name"
        'ADMIN_PASSWORD = "' + rand2(24) + '"',
        'SERVICE_ACCOUNT_TOKEN = "' + rand2(32) + '"',
        'RENAMED_SECRET = "' + rand2(24) + '"',
        'LATEST_API_KEY = "' + rand2(32) + '"',
        # dotted values: random runs joined by dots, and a JWT
        'auth_token = "' + rand2(20) + "." + rand2(24) + "." + rand2(20) + '"',
    ],
)
def test_secret_named_keys_are_exempt_only_by_whole_segments(text: str):
    assert len(scan(text)) == 1


def _jwt() -> str:
    import base64
    import json

    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": rand2(12)}) + "." + rand2(43)


def test_a_jwt_assigned_to_a_secret_named_key_is_found():
    assert len(scan(f'ACCESS_TOKEN = "{_jwt()}"')) == 1
    assert len(scan(f"session_token: {_jwt()}")) == 1


@pytest.mark.parametrize(
    "text",
    [
        'PASSWORD_MIN_LENGTH = "' + rand2(24) + '"',
        'TOKEN_COUNT = "' + rand2(24) + '"',
        'apiKeyName = "' + rand2(24) + '"',
        'tokenExpiresAt = "' + rand2(24) + '"',
        "token = self.config.auth_token",
        "api_key = settings.openai.api_key",
        'stripe.api_key = "' + "sk_" + "test_" + rand2(24) + '"',
        "token: ${{ secrets.DEPLOY_TOKEN }}",
        f"jwt_example = {_jwt()}",  # not a secret-named key
    ],
)
def test_near_misses_of_the_segment_rule_pass(text: str):
    assert scan(text) == []


def test_gnupg_and_putty_private_keys_are_found():
    gpg = ["-----BEGIN PGP " + "PRIVATE KEY BLOCK-----", "Version: GnuPG v2", "", *_pem_body()]
    assert scan(*gpg, path="keys/deploy.asc") == ["private key"]
    putty = [
        "PuTTY-User-Key-File-3: ssh-ed25519",
        "Encryption: none",
        "Comment: deploy",
        "Public-Lines: 2",
        *_pem_body()[:2],
        "Private-Lines: 1",
        rand2(64, B64),
    ]
    assert scan(*putty, path="keys/deploy.ppk") == ["private key"]
    # a mention of either header is no key
    mention = ["-----BEGIN PGP " + "PRIVATE KEY BLOCK-----", "", "is the header GnuPG writes."]
    assert scan(*mention, path="docs/keys.md") == []
    assert scan("PuTTY-User-Key-File-3: is the first line", path="docs/keys.md") == []


def test_a_base64_encoded_pem_key_in_a_kubernetes_secret_is_found():
    import base64

    pem = "\n".join([KEY_HEADER, *_pem_body(), "-----END RSA PRIVATE KEY-----"]) + "\n"
    encoded = base64.b64encode(pem.encode()).decode()
    manifest = ["kind: Secret", "data:", f"  tls.key: {encoded}"]
    assert scan(*manifest, path="k8s/secret.yaml") == ["base64-encoded private key"]
    cert = (
        "-----BEGIN CERTIFICATE-----\n" + "\n".join(_pem_body()) + "\n-----END CERTIFICATE-----\n"
    )
    encoded_cert = base64.b64encode(cert.encode()).decode()
    assert scan(f"  tls.crt: {encoded_cert}", path="k8s/secret.yaml") == []


def test_a_token_as_a_file_name_or_a_symlink_target_is_found(repo: GitRepo):
    repo.write("README.md", "x\n")
    base = repo.commit("base")
    token = "gh" + "p_" + rand2(36)
    repo.write(f"notes/{token}.txt", "nothing here\n")
    repo.symlink("config/current", f"../notes/{token}.txt")
    result = repo.check(base, repo.commit("leak"))
    found = by_rule(result, "secret")
    assert sorted(message for _, _, message in found) == [
        "possible GitHub token as a symlink target added (value not shown); if it is real, "
        "revoke it",
        "possible GitHub token in the file name added (value not shown); if it is real, revoke it",
    ]
    assert [path for path, _, _ in found if path is not None] == ["config/current"]
    assert token not in str(by_rule(result, "secret"))


def test_a_binary_file_is_scanned_for_credentials_even_where_binaries_are_allowed(
    repo: GitRepo,
):
    from app.repo_config import load_repo_config

    repo.write("README.md", "x\n")
    repo.write("assets/old.bin", b"\x00\x01 nothing-of-note \x00")
    base = repo.commit("base")
    token = "gh" + "p_" + rand2(36)
    repo.write("assets/blob.bin", b"\x00\x89PNG\x00" + token.encode() + b"\x00\xff")
    repo.write("assets/old.bin", b"\x00\x01 nothing-of-note \x00 changed-a-little \x00")
    allowed = load_repo_config("version: 1\nguards:\n  allow_binary: true\n")
    result = repo.check(base, repo.commit("binary"), allowed)
    assert by_rule(result, "secret") == [
        (
            "assets/blob.bin",
            None,
            "possible GitHub token in a binary file added (value not shown); if it is real, "
            "revoke it",
        )
    ]
    assert "binary" not in {v.rule for v in result.violations}


def test_a_package_named_secrets_is_no_secret(repo: GitRepo):
    repo.write("README.md", "x\n")
    base = repo.commit("base")
    repo.write("src/secrets/__init__.py", '"""Reading secrets from the vault."""\n')
    repo.write("src/secrets/vault.py", "def token(name: str) -> str:\n    return VAULT[name]\n")
    assert by_rule(repo.check(base, repo.commit("pkg")), "secret") == []


def test_output_a_model_reads_has_provider_tokens_and_private_keys_redacted():
    from app.guards.secrets_scan import redact_credentials

    token = "ghp_" + "Zq8xT3vN1mW7yR5kP2sL9dF4hJ6gB0cA2eX1"
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"
    text = f"GITHUB_TOKEN = {token!r}\n{key}\nassert add(2, 3) == 5\n"
    shown = redact_credentials(text, "[redacted]")
    assert token not in shown and "MIIEow" not in shown
    assert shown == "GITHUB_TOKEN = '[redacted]'\n[redacted]\nassert add(2, 3) == 5\n"
    # A placeholder is not a credential, and a key cut off by a tail is still hidden.
    assert redact_credentials("ghp_EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE1", "R").startswith("ghp_")
    assert redact_credentials("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "R") == "R"
