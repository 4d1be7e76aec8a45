"""Who may read the status page: whoever holds the operator's token, and nobody else.

The token arrives as `Authorization: Bearer <token>` (scripts), or once as `?token=<token>`
(a browser), which is answered with a redirect that drops it from the address bar and sets a
cookie. The cookie holds an HMAC of the token, not the token: a cookie that leaks from a
browser profile does not reveal the setting. Every comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
from enum import Enum

COOKIE = "ourobot_status"
QUERY = "token"
_COOKIE_CONTEXT = b"ourobot status page cookie v1"


class Access(Enum):
    DENIED = "denied"
    GRANTED = "granted"
    FROM_QUERY = "from-query"  # granted; redirect to set the cookie and drop the token


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), _COOKIE_CONTEXT, hashlib.sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def decide(
    token: str, *, authorization: str | None, query: str | None, cookie: str | None
) -> Access:
    """What a request with these credentials may do. Any one valid credential suffices;
    a bad one is no worse than none."""
    if authorization is not None:
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() == "bearer" and _same(given.strip(), token):
            return Access.GRANTED
    if cookie is not None and _same(cookie, cookie_value(token)):
        return Access.GRANTED
    if query is not None and _same(query, token):
        return Access.FROM_QUERY
    return Access.DENIED
