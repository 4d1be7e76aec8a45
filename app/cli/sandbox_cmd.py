"""`ourobot sandbox`: run the local GitHub sandbox server."""

from __future__ import annotations

from typing import Any

from app.cli import not_available


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sandbox", help="run the local GitHub sandbox (a test double)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--data-dir", required=False, help="where repositories are kept")
    parser.set_defaults(handler=not_available("sandbox"))
