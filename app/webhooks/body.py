"""Reading a request body without ever holding more than the cap.

GitHub caps webhook payloads at 25 MB; anything larger is not GitHub. A declared
Content-Length over the cap is refused before reading a byte, and a body without one
(chunked) is read chunk by chunk and abandoned as soon as it passes the cap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

MAX_BODY_BYTES = 25 * 1024 * 1024


class BodyTooLarge(Exception):
    """The body is (or declares itself) larger than the cap."""


class BadContentLength(Exception):
    """The Content-Length header is not a non-negative integer."""


def check_declared_length(header: str | None, cap: int) -> None:
    """Refuse a declared length over `cap` before any of the body is read."""
    if header is None:
        return
    if not header.isascii() or not header.isdigit():
        raise BadContentLength(header[:40])
    if int(header) > cap:
        raise BodyTooLarge(f"declared {header} bytes")


async def read_capped(chunks: AsyncIterator[bytes], cap: int) -> bytes:
    """The whole body, if it stays within `cap`; stops reading at the first chunk past it."""
    received = bytearray()
    async for chunk in chunks:
        if len(received) + len(chunk) > cap:
            raise BodyTooLarge(f"more than {cap} bytes")
        received += chunk
    return bytes(received)
