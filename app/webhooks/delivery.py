"""Turning a verified request (headers + raw body) into a `Delivery`, or a 400 reason.

Runs only after the signature matched, in two steps: the headers where the request is answered
(`parse_headers`, cheap), the body where the delivery is recorded (`parse_body`: in
`ourobot serve` that is the inbox process, which keeps the JSON parsing off the process that
acknowledges webhooks). The body must be a JSON object; the event and delivery id come from
GitHub's headers, the action and installation from the payload. Values that end up in log
lines and database keys are checked to be short, plain tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.store.ids import IdOutOfRange, checked_id
from app.webhooks import json_body
from app.webhooks.inbox import Delivery

EVENT_HEADER = "X-GitHub-Event"
DELIVERY_HEADER = "X-GitHub-Delivery"

# GitHub's event names are snake_case words and its delivery ids are GUIDs; allow a little
# more (other senders such as the sandbox), but nothing that could forge a log line.
_EVENT = re.compile(r"[A-Za-z0-9_.\-]{1,100}")
_DELIVERY_ID = re.compile(r"[A-Za-z0-9_.:\-]{1,200}")
_MAX_ACTION_CHARS = 200


class BadDelivery(Exception):
    """A signed request that is still not a usable delivery (answered with 400)."""


@dataclass(frozen=True)
class Received:
    """A request whose signature and headers checked out; its body is not parsed yet."""

    delivery_id: str
    event: str
    body: bytes


def parse_delivery(headers: Mapping[str, str], body: bytes) -> Delivery:
    """The delivery described by GitHub's headers and a verified JSON body."""
    return parse_body(parse_headers(headers, body))


def parse_headers(headers: Mapping[str, str], body: bytes) -> Received:
    """The event and delivery id GitHub's headers name; BadDelivery if either is unusable."""
    event = _header_token(headers, EVENT_HEADER, _EVENT)
    delivery_id = _header_token(headers, DELIVERY_HEADER, _DELIVERY_ID)
    return Received(delivery_id, event, body)


def parse_body(received: Received) -> Delivery:
    """The delivery, with its action and installation from the JSON object body."""
    payload = _json_object(received.body)
    return Delivery(
        delivery_id=received.delivery_id,
        event=received.event,
        action=_action(payload),
        installation_id=_installation_id(payload),
        body=received.body,
        payload=payload,
    )


def _header_token(headers: Mapping[str, str], name: str, shape: re.Pattern[str]) -> str:
    value = headers.get(name)
    if value is None:
        raise BadDelivery(f"missing {name} header")
    if not shape.fullmatch(value):
        raise BadDelivery(f"malformed {name} header")
    return value


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        payload = json_body.loads(body)
    except ValueError:
        # Invalid JSON, invalid UTF-8, or absurd nesting.
        raise BadDelivery("body is not valid JSON") from None
    if not isinstance(payload, dict):
        raise BadDelivery("body is not a JSON object")
    return payload


def _action(payload: Mapping[str, Any]) -> str:
    action = payload.get("action")
    if action is None:
        return ""
    if not isinstance(action, str):
        raise BadDelivery("payload action is not a string")
    if len(action) > _MAX_ACTION_CHARS or not action.isprintable():
        raise BadDelivery("payload action is malformed")
    return action


def _installation_id(payload: Mapping[str, Any]) -> int | None:
    installation = payload.get("installation")
    if not isinstance(installation, dict):
        return None
    found = installation.get("id")
    if isinstance(found, float):
        # orjson reads an integer past 64 bits as a float: an id no store column holds.
        raise BadDelivery("installation id is outside the range the store keeps")
    # bool is an int subclass; `true` is not an installation.
    if not isinstance(found, int) or isinstance(found, bool):
        return None
    try:
        return checked_id("installation id", found)
    except IdOutOfRange as exc:
        # Signed, but no installation GitHub has: a 4xx, never retried, and nothing stored.
        raise BadDelivery(str(exc)) from None
