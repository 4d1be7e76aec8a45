"""`ourobot guards check`: the deterministic guards over a diff."""

from __future__ import annotations

from typing import Any

from app.cli import not_available


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("guards", help="deterministic guards over a diff")
    actions = parser.add_subparsers(dest="guards_command", metavar="ACTION")
    check = actions.add_parser("check", help="check a diff against the guard rules")
    check.set_defaults(handler=not_available("guards check"))
