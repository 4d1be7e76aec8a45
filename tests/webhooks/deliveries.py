"""Building signed webhook requests the way GitHub sends them, for the receiver tests."""

from __future__ import annotations

import uuid
from pathlib import Path

from app.webhooks.signature import sign

SECRET = "receiver-test-secret"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "webhooks"
# GitHub's own examples (octokit/webhooks); present in CI and on this machine, maybe not in a
# user's clone, where the sweep over them skips.
EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "github-webhook-examples"


def fixture_body(name: str) -> bytes:
    """Raw bytes of tests/fixtures/webhooks/<name>.payload.json."""
    return (FIXTURES / f"{name}.payload.json").read_bytes()


def fresh_delivery_id() -> str:
    return str(uuid.uuid4())


def signed_headers(
    body: bytes,
    event: str,
    *,
    delivery_id: str | None = None,
    secret: str = SECRET,
) -> dict[str, str]:
    """Headers GitHub would send with `body` for `event`."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/test",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id or fresh_delivery_id(),
        "X-Hub-Signature-256": sign(secret, body),
    }
