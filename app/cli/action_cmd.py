"""`ourobot action <command>`: the entry point `action.yml` runs: its arguments only.

The implementation is `app.cli.action`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred

# What `ourobot action` does; `app.cli.action.COMMANDS` holds one function for each.
ACTIONS = ("command", "guards", "review", "gate", "implement")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "action", help="run inside GitHub Actions (the entry point of action.yml)"
    )
    parser.add_argument("command", choices=ACTIONS, help="what the action should do")
    parser.set_defaults(handler=deferred("app.cli.action", "run"))
