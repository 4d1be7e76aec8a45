"""`ourobot demo`: the loop against the local GitHub sandbox, no accounts needed."""

from __future__ import annotations

from typing import Any

from app.cli import not_available


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run the loop against the local GitHub sandbox")
    parser.set_defaults(handler=not_available("demo"))
