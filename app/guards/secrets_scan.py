"""Credential-shaped text in added lines: provider token formats, private keys, credentials in
URLs, and high-entropy values assigned to secret-named keys.

Two kinds of evidence. A provider's token format (`ghp_...`, `AKIA...`, `sk-ant-...`) is
specific enough to report anywhere. A generic assignment is reported only when the key is named
like a secret *and* the value looks random (long, mixed characters, high Shannon entropy) *and*
it is not something that merely looks random: hashes and digests (by key name), UUIDs, lockfile
integrity fields, placeholders, template or environment references.

A finding carries the kind of credential, never the value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.changes import Line

# (kind, pattern); the secret part is group "s" when present, else the whole match.
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        (
            "AWS access key id",
            r"(?<![A-Z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Z0-9])",
        ),
        ("GitHub token", r"(?<![A-Za-z0-9_])(?P<s>gh[pousr]_[A-Za-z0-9]{36,255})(?![A-Za-z0-9_])"),
        ("GitHub fine-grained token", r"(?<![A-Za-z0-9_])(?P<s>github_pat_[A-Za-z0-9_]{40,255})"),
        ("GitLab token", r"(?<![A-Za-z0-9_])(?P<s>glpat-[A-Za-z0-9_\-]{20,})"),
        ("Slack token", r"(?<![A-Za-z0-9])(?P<s>xox[abposr]-[A-Za-z0-9-]{10,})"),
        (
            "Slack webhook URL",
            r"hooks\.slack\.com/services/(?P<s>T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,})",
        ),
        ("npm token", r"(?<![A-Za-z0-9_])(?P<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])"),
        ("Anthropic API key", r"(?<![A-Za-z0-9])(?P<s>sk-ant-[a-z0-9]+-[A-Za-z0-9_\-]{20,})"),
        (
            "OpenAI API key",
            r"(?<![A-Za-z0-9])(?P<s>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,})",
        ),
        ("OpenAI API key", r"(?<![A-Za-z0-9])(?P<s>sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})"),
        ("OpenAI API key", r"(?<![A-Za-z0-9\-])(?P<s>sk-[A-Za-z0-9]{48})(?![A-Za-z0-9])"),
        ("Google API key", r"(?<![A-Za-z0-9_])(?P<s>AIza[0-9A-Za-z_\-]{35})(?![A-Za-z0-9_\-])"),
        ("Stripe secret key", r"(?<![A-Za-z0-9])(?P<s>(?:sk|rk)_live_[0-9A-Za-z]{20,})"),
        ("Hugging Face token", r"(?<![A-Za-z0-9_])(?P<s>hf_[A-Za-z]{34,})(?![A-Za-z0-9])"),
    )
)
# Cheap first pass: a line without any of these cannot match a token pattern above.
_TOKEN_HINT = re.compile(
    r"AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|npm_|sk-"
    r"|AIza|_live_|hf_"
)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_BASE64_BODY = re.compile(r"^[\s\"'`]*[A-Za-z0-9+/]{40,}={0,2}[\s\"',`\\n]*$")
_INLINE_KEY_BODY = re.compile(r"PRIVATE KEY(?: BLOCK)?-----(?:\\r)?\\n[A-Za-z0-9+/]{20,}")
_URL_CREDENTIALS = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]+:(?P<s>[^\s/@'\"]+)@(?P<host>[^\s/:'\"?#]*)"
)
# Hosts reserved for documentation and tests (RFC 2606/6761), and this machine.
_EXAMPLE_HOST = re.compile(
    r"(^|\.)(example\.(com|org|net)|example|test|invalid|localhost)$|^127\.|^\[?::1\]?$",
    re.IGNORECASE,
)
_URL_PLACEHOLDER = re.compile(r"pass|word|secret|user|admin|root|demo|guest|123", re.IGNORECASE)

# key = value, key: value, key := value, key => value; quoted or bare value.
_ASSIGNMENT = re.compile(
    r"""(?P<key>[A-Za-z_$][\w.\-$]*)["'\]]?(?:\s*:\s*[A-Za-z_][\w\[\].,| ]*?)?\s*(?::=|=>|=|:)\s*(?:
        (?P<q>["'`])(?P<quoted>[^"'`\s]{8,}?)(?P=q)
        |(?P<bare>[A-Za-z0-9+/=_\-.~]{16,})\s*(?:[#;].*)?$
    )""",
    re.VERBOSE,
)
_SECRET_KEY = re.compile(
    r"(secret|token|passw(?:or)?d|passwd|pwd|api_?key|apikey|access_?key|private_?key"
    r"|client_?secret|credential|auth_?key|signing_?key|encryption_?key|session_?key)",
    re.IGNORECASE,
)
_NOT_SECRET_KEY = re.compile(
    r"(hash|digest|checksum|sha\d*|md5|integrity|nonce|salt|uuid|_id$|^id$|length|count|max"
    r"|min|type|name|file|path|url|uri|endpoint|prefix|suffix|format|pattern|regex|header"
    r"|field|env|var|placeholder|example|sample|test|fake|dummy|mock|policy|expir|ttl|scope)",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"(example|placeholder|changeme|change_me|dummy|redacted|your|xxxx|\*\*\*|<|>|\$\{|\{\{"
    r"|%\(|\$\(|fake|sample|test|mock|replace|insert|todo|fixme|secret_here|not_?a_?real)",
    re.IGNORECASE,
)
# A lowercase word (with a vowel, as generated tokens rarely are throughout) or a short number:
# `refreshed-token-123` is made of these, `a8f3kd92jf83k2l` is not.
_WORD_OR_NUMBER = re.compile(r"^(?:[a-z]*[aeiouy][a-z]*|\d{1,4})$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_DOTTED_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$")
_DIGEST_PREFIX = re.compile(r"^(sha\d+|md5|blake2b?|h1|sha)[-:]", re.IGNORECASE)
_LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "cargo.lock",
        "go.sum",
        "gemfile.lock",
        "composer.lock",
        "packages.lock.json",
        "flake.lock",
        "mix.lock",
        "pubspec.lock",
    }
)
_KEY_FILE_NAMES = frozenset({"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk"})
_KEY_FILE_SUFFIXES = (".p12", ".pfx", ".keystore", ".jks")


@dataclass(frozen=True)
class Finding:
    line: int | None
    kind: str


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def scan_path(path: str) -> Finding | None:
    """A file whose name says it holds a private key or a certificate bundle."""
    name = path.rsplit("/", 1)[-1].casefold()
    if name in _KEY_FILE_NAMES:
        return Finding(None, "private key file")
    if name.endswith(_KEY_FILE_SUFFIXES):
        return Finding(None, "key store file")
    return None


def scan_lines(path: str, lines: Sequence[Line]) -> list[Finding]:
    """Credential-shaped text among the added lines of one file, one finding per line."""
    name = path.rsplit("/", 1)[-1].casefold()
    generic = name not in _LOCKFILES
    if not _worth_scanning("\n".join(line.text for line in lines), generic):
        return []
    findings: list[Finding] = []
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else None
        if following is not None and following.number != line.number + 1:
            following = None
        kind = _scan_line(line.text, following.text if following else None, generic)
        if kind is not None:
            findings.append(Finding(line.number, kind))
    return findings


def _worth_scanning(text: str, generic: bool) -> bool:
    """One pass over a whole file's added text: most files hold no hint of a credential."""
    return bool(
        _TOKEN_HINT.search(text)
        or "PRIVATE KEY" in text
        or "://" in text
        or (generic and _SECRET_KEY.search(text))
    )


def _scan_line(text: str, following: str | None, generic: bool) -> str | None:
    if len(text) > 20_000:
        text = text[:20_000]
    if _TOKEN_HINT.search(text):
        for kind, pattern in _TOKEN_PATTERNS:
            for match in pattern.finditer(text):
                if _plausible_token(match.group("s")):
                    return kind
    if (
        "PRIVATE KEY" in text
        and _PRIVATE_KEY.search(text)
        and (_INLINE_KEY_BODY.search(text) or (following is not None and _key_body(following)))
    ):
        return "private key"
    if "://" in text:
        for match in _URL_CREDENTIALS.finditer(text):
            if _url_password(match.group("s"), match.group("host")):
                return "password in a URL"
    if generic and _SECRET_KEY.search(text):
        return _assignment(text)
    return None


def _url_password(password: str, host: str) -> bool:
    if _EXAMPLE_HOST.search(host) or _URL_PLACEHOLDER.search(password):
        return False
    return _random_enough(password, minimum=8)


def _key_body(line: str) -> bool:
    return bool(_BASE64_BODY.match(line)) or line.startswith("Proc-Type:")


def _plausible_token(secret: str) -> bool:
    if "EXAMPLE" in secret.upper() or _PLACEHOLDER.search(secret):
        return False
    return shannon_entropy(secret) >= 3.0


def _assignment(text: str) -> str | None:
    for match in _ASSIGNMENT.finditer(text):
        key = match.group("key")
        last = re.split(r"[.\-$]", key)[-1] or key
        if not _SECRET_KEY.search(last) or _NOT_SECRET_KEY.search(last):
            continue
        value = match.group("quoted") or match.group("bare") or ""
        if _looks_like_secret(value):
            return f"high-entropy value assigned to {_key_kind(last)}"
    return None


def _made_of_words(value: str) -> bool:
    """Several lowercase words and short numbers joined by `-`, `_` or `.`, one of them naming
    the kind of secret, as labels and test values are written (`refreshed-token-123`,
    `my_session_key_2024`); a generated token is one random run. Words alone are no label: a
    passphrase (`winter-garden-2023`) is made of words too."""
    parts = re.split(r"[-_.]", value)
    return (
        len(parts) >= 2
        and all(_WORD_OR_NUMBER.match(part) for part in parts)
        and _SECRET_KEY.search(value) is not None
    )


def _key_kind(key: str) -> str:
    found = _SECRET_KEY.search(key)
    word = found.group(1).lower() if found else "secret"
    return f"a {word}-named key"


def _looks_like_secret(value: str) -> bool:
    if len(value) < 16 or len(value) > 1000:
        return False
    if _UUID.match(value) or _DOTTED_NAME.match(value) or _DIGEST_PREFIX.match(value):
        return False
    if value.startswith(("http:", "https:", "/", "./", "../", "~")) or "://" in value:
        return False
    if _HEX.match(value):
        return len(value) >= 32 and shannon_entropy(value) >= 3.0
    return _random_enough(value, minimum=16)


def _random_enough(value: str, *, minimum: int) -> bool:
    if len(value) < minimum or _PLACEHOLDER.search(value) or _made_of_words(value):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    if classes < 2 or (not any(c.isdigit() for c in value) and classes < 3):
        return False
    threshold = 3.0 if len(value) < 20 else 3.5
    return shannon_entropy(value) >= threshold
