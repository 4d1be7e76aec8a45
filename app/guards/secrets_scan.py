"""Credential-shaped text in added lines: provider token formats, private keys, credentials in
URLs, and high-entropy values assigned to secret-named keys.

Two kinds of evidence. A provider's token format (`ghp_...`, `AKIA...`, `sk-ant-...`) is
specific enough to report anywhere. A generic assignment is reported only when the key is named
like a secret *and* the value looks random (long, mixed characters, high Shannon entropy) *and*
it is not something that merely looks random: hashes and digests (by key name), UUIDs, lockfile
integrity fields, placeholders, template or environment references.

Provider formats come from two places. Where detect-secrets (Yelp's scanner, Apache-2.0, on
PyPI) keeps a format as a plain regex, its plugin's `denylist` is used as data (PyPI, SendGrid,
Azure storage account keys, and its list of private-key armour headers: GnuPG, PuTTY, SSH2): a
maintained list, fixed upstream when a provider changes its format. Formats it does not keep,
or keeps more loosely than ours (GitHub, Slack's app-level tokens, Shopify, ...), are written
here. gitleaks' rules cover more providers but ship as TOML inside a Go program, not as a
package this project can depend on.

A finding carries the kind of credential, never the value.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
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
        (
            "Slack app-level token",
            r"(?<![A-Za-z0-9])(?P<s>xapp-\d-[A-Z0-9]{8,}-\d{8,}-[a-f0-9]{32,})",
        ),
        (
            "Shopify token",
            r"(?<![A-Za-z0-9])(?P<s>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?![A-Za-z0-9])",
        ),
    )
)
# Cheap first pass: a line without any of these cannot match a token pattern.
_TOKEN_HINT = re.compile(
    r"AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hooks\.slack|npm_|sk-"
    r"|AIza|_live_|hf_|xapp-|shp(?:at|ca|pa|ss)_|pypi-|SG\.|AccountKey="
)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# base64 of "-----BEGIN": a PEM block encoded once more, as a Kubernetes secret's data holds it.
_BASE64_PEM = re.compile(r"LS0tLS1CRUdJT[A-Za-z0-9+/]{40,}={0,2}")
_PUTTY_KEY = re.compile(r"^PuTTY-User-Key-File-\d+:")
_ARMOUR_HEADER = re.compile(r"^[\s\"'`]*[A-Za-z][A-Za-z-]*: ")
# How many lines after a key header its body may start (GnuPG's and PuTTY's headers first).
_KEY_WINDOW = 12
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}")
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
    r"""(?P<key>[A-Za-z_$][\w.\-$]{0,100})["'\]]?
        (?:\s*:\s*[A-Za-z_][\w\[\].,| ]*?)?\s*(?::=|=>|=|:)\s*(?:
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
# A key named for what it is not (a hash, a length, a name, ...), matched against the key's
# whole name segments: `ADMIN_PASSWORD` has no "min" segment, `SERVICE_ACCOUNT_TOKEN` no
# "count" one.
_NOT_SECRET_SEGMENT = re.compile(
    r"(hash|digest|checksum|sha\d*(sum)?|md5(sum)?|integrity|nonce|salt|uuid|guid|id|ids|len"
    r"|length|count|max|min|type|name|file|filename|path|url|uri|endpoint|prefix|suffix|format"
    r"|pattern|regex|header|field|env|environment|var|placeholder|example|sample|test|testing"
    r"|fake|dummy|mock|policy|expir\w*|ttl|scope|label|description|hint|doc)s?"
)
_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@functools.cache
def _ruleset() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Provider formats detect-secrets keeps as plain regexes, read from its plugins (imported
    on first use: the package is loaded only when a line holds a hint of one)."""
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector

    found: list[tuple[str, re.Pattern[str]]] = []
    for kind, plugin in (
        ("PyPI token", PypiTokenDetector),
        ("SendGrid API key", SendGridDetector),
        ("Azure storage account key", AzureStorageKeyDetector),
    ):
        found.extend((kind, pattern) for pattern in plugin.denylist)
    return tuple(found)


@functools.cache
def _key_markers() -> tuple[re.Pattern[str], ...]:
    """detect-secrets' private key armour headers (GnuPG, PuTTY, SSH2, OpenSSH, PEM)."""
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    return tuple(PrivateKeyDetector.denylist)


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
    kind = token_kind(path)
    return Finding(None, f"{kind} in the file name") if kind else None


def token_kind(text: str) -> str | None:
    """The provider token format `text` holds anywhere (a path, a link target, a line)."""
    if not _TOKEN_HINT.search(text):
        return None
    for kind, pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            if _plausible_token(match.group("s")):
                return kind
    for kind, pattern in _ruleset():
        for match in pattern.finditer(text):
            if _plausible_token(match.group(0)):
                return kind
    return None


_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z)",
    re.DOTALL,
)


def redact_credentials(text: str, marker: str) -> str:
    """`text` with every provider token (as `token_kind` finds them) and every private key
    block replaced by `marker`: for output a model reads, where the value may come from a
    repository file or a test rather than an environment variable ourobot knows."""
    text = _KEY_BLOCK.sub(marker, text)
    if not _TOKEN_HINT.search(text):
        return text
    for _, pattern in (*_TOKEN_PATTERNS, *_ruleset()):
        group: str | int = "s" if "s" in pattern.groupindex else 0

        def hide(match: re.Match[str], group: str | int = group) -> str:
            secret = match.group(group)
            if not _plausible_token(secret):
                return match.group(0)
            return match.group(0).replace(secret, marker)

        text = pattern.sub(hide, text)
    return text


def scan_strings(strings: Sequence[str]) -> list[Finding]:
    """Credential strings found in a binary file (its printable runs): token formats and
    private keys, one finding for the file."""
    for index, text in enumerate(strings):
        kind = token_kind(text) or _key_in(text, list(strings[index + 1 : index + _KEY_WINDOW]))
        if kind is not None:
            return [Finding(None, f"{kind} in a binary file")]
    return []


def scan_lines(path: str, lines: Sequence[Line]) -> list[Finding]:
    """Credential-shaped text among the added lines of one file, one finding per line."""
    name = path.rsplit("/", 1)[-1].casefold()
    generic = name not in _LOCKFILES
    if not _worth_scanning("\n".join(line.text for line in lines), generic):
        return []
    findings: list[Finding] = []
    for index, line in enumerate(lines):
        kind = _scan_line(line.text, functools.partial(_following, lines, index), generic)
        if kind is not None:
            findings.append(Finding(line.number, kind))
    return findings


def _following(lines: Sequence[Line], index: int) -> list[str]:
    """The added lines right after `lines[index]`, as long as they follow it in the file."""
    found: list[str] = []
    number = lines[index].number
    for line in lines[index + 1 : index + 1 + _KEY_WINDOW]:
        if line.number != number + 1:
            break
        found.append(line.text)
        number = line.number
    return found


def _worth_scanning(text: str, generic: bool) -> bool:
    """One pass over a whole file's added text: most files hold no hint of a credential."""
    return bool(
        _TOKEN_HINT.search(text)
        or "PRIVATE KEY" in text
        or "LS0tLS1CRUdJT" in text
        or "PuTTY-User-Key-File-" in text
        or "://" in text
        or (generic and _SECRET_KEY.search(text))
    )


def _scan_line(text: str, following: Callable[[], list[str]], generic: bool) -> str | None:
    # No length limit: a minified file is one long line, and a token in it is still a token.
    kind = token_kind(text)
    if kind is not None:
        return kind
    if "PRIVATE KEY" in text or "PuTTY-User-Key-File-" in text:
        kind = _key_in(text, following())
        if kind is not None:
            return kind
    if "LS0tLS1CRUdJT" in text and _encoded_key(text):
        return "base64-encoded private key"
    if "://" in text:
        for match in _URL_CREDENTIALS.finditer(text):
            if _url_password(match.group("s"), match.group("host")):
                return "password in a URL"
    if generic and _SECRET_KEY.search(text):
        return _assignment(text)
    return None


def _key_in(text: str, following: list[str]) -> str | None:
    """A private key whose header is on `text` and whose body follows (inline, or within the
    next lines once its armour headers are past); a mere mention of the header is none."""
    if _PUTTY_KEY.match(text.strip()):
        return (
            "private key" if any(line.startswith("Private-Lines:") for line in following) else None
        )
    if not (_PRIVATE_KEY.search(text) or any(m.search(text) for m in _key_markers())):
        return None
    if _INLINE_KEY_BODY.search(text):
        return "private key"
    for line in following:
        if _key_body(line):
            return "private key"
        if line.strip() and not _ARMOUR_HEADER.match(line):
            return None
    return None


def _encoded_key(text: str) -> bool:
    """A base64 value that decodes to a private key with its body."""
    for match in _BASE64_PEM.finditer(text):
        run = match.group(0)
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4)).decode("ascii", "replace")
        except (binascii.Error, ValueError):
            continue
        lines = decoded.splitlines()
        for index, line in enumerate(lines):
            if _key_in(line, lines[index + 1 : index + 1 + _KEY_WINDOW]):
                return True
    return False


def _url_password(password: str, host: str) -> bool:
    if _EXAMPLE_HOST.search(host) or _URL_PLACEHOLDER.search(password):
        return False
    return _random_enough(password, minimum=8)


def _key_body(line: str) -> bool:
    return bool(_BASE64_BODY.match(line)) or line.startswith("Proc-Type:")


def _exempt_key(key: str) -> bool:
    """Whether a key is named for something other than a secret, by its whole segments."""
    return any(_NOT_SECRET_SEGMENT.fullmatch(segment.lower()) for segment in _SEGMENT.findall(key))


def _plausible_token(secret: str) -> bool:
    if "EXAMPLE" in secret.upper() or _PLACEHOLDER.search(secret):
        return False
    return shannon_entropy(secret) >= 3.0


def _assignment(text: str) -> str | None:
    for match in _ASSIGNMENT.finditer(text):
        key = match.group("key")
        last = re.split(r"[.\-$]", key)[-1] or key
        if not _SECRET_KEY.search(last) or _exempt_key(last):
            continue
        value = match.group("quoted") or match.group("bare") or ""
        if _looks_like_secret(value):
            return f"high-entropy value assigned to {_key_kind(last)}"
    return None


def _is_jwt(value: str) -> bool:
    """A JSON Web Token: three base64url parts, the first a JSON header naming an algorithm."""
    if not _JWT.fullmatch(value):
        return False
    head = value.split(".", 1)[0]
    if len(head) > 2000:
        return False  # no JOSE header is this long; and json would recurse on a crafted one
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        return False
    return isinstance(header, dict) and "alg" in header


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
    if _is_jwt(value):
        return True
    if len(value) < 16 or len(value) > 1000:
        return False
    if _UUID.match(value) or _DIGEST_PREFIX.match(value):
        return False
    if _DOTTED_NAME.match(value):
        # `settings.api_key` names where a secret is; a value of random runs joined by dots is
        # one (a dotted token format) all the same.
        return any(_random_enough(part, minimum=16) for part in value.split("."))
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
