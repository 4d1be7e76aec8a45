"""Webhook signatures: HMAC-SHA256 of the raw body under the webhook secret (X-Hub-Signature-256).

Only the SHA-256 header counts; GitHub's legacy SHA-1 `X-Hub-Signature` is never accepted,
alone or alongside. Digests are compared with `hmac.compare_digest`, so the time taken does
not reveal how much of a guess was right.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Hub-Signature-256"
_PREFIX = "sha256="
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_DIGEST_HEX_CHARS = 64


def sign(secret: str | bytes, body: bytes) -> str:
    """The X-Hub-Signature-256 value GitHub would send for `body`."""
    return _PREFIX + hmac.new(_key(secret), body, hashlib.sha256).hexdigest()


def parse_signature(header: str | None) -> bytes | None:
    """The digest claimed by a header value, or None if it is absent or not `sha256=<hex>`."""
    if header is None or not header.startswith(_PREFIX):
        return None
    digits = header[len(_PREFIX) :]
    if len(digits) != _DIGEST_HEX_CHARS or not _HEX_DIGITS.issuperset(digits):
        return None
    return bytes.fromhex(digits)


def matches(secret: bytes, body: bytes, claimed: bytes) -> bool:
    """Whether `claimed` is the HMAC-SHA256 of the whole `body` (one call into OpenSSL)."""
    return hmac.compare_digest(hmac.digest(secret, body, "sha256"), claimed)


def verify(secret: str | bytes, body: bytes, header: str | None) -> bool:
    """Whether `header` is a valid X-Hub-Signature-256 of `body` under `secret`."""
    claimed = parse_signature(header)
    return claimed is not None and matches(_key(secret), body, claimed)


def _key(secret: str | bytes) -> bytes:
    return secret.encode() if isinstance(secret, str) else secret
