"""`ourobot config check FILE`: print the effective repo config or one error naming the key."""

from __future__ import annotations

from typing import Any

from app.cli import not_available


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("config", help="repository configuration (.github/ourobot.yml)")
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    check = actions.add_parser("check", help="validate a config file; print the effective config")
    check.add_argument("file", help="path to .github/ourobot.yml (a missing file means defaults)")
    check.add_argument("--json", action="store_true", help="print the effective config as JSON")
    check.set_defaults(handler=not_available("config check"))
