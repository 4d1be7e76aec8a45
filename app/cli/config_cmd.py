"""`ourobot config check [FILE]`: the effective repo config, or the one error: its arguments only.

The implementation is `app.cli.config`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("config", help="repository configuration (.github/ourobot.yml)")
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    check = actions.add_parser("check", help="validate a config file; print the effective config")
    check.add_argument(
        "file",
        nargs="?",
        default=None,
        help="the config file (it must exist); default: .github/ourobot.yml here, "
        "whose absence means the defaults",
    )
    check.add_argument("--json", action="store_true", help="print the effective config as JSON")
    check.set_defaults(handler=deferred("app.cli.config", "check_config"))
