"""`ourobot halt` / `ourobot resume`: the operator's stop switch: its arguments only.

The implementation is `app.cli.halt`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    halt = subparsers.add_parser("halt", help="stop ourobot's work (globally or one installation)")
    _scope_arguments(halt)
    halt.add_argument("--reason", default="ourobot halt from the command line")
    halt.add_argument("--by", default="operator", help="who is halting (recorded)")
    halt.add_argument("--list", action="store_true", help="only list the halts in force")
    halt.add_argument("--json", action="store_true")
    halt.set_defaults(handler=deferred("app.cli.halt", "run_halt"))
    resume = subparsers.add_parser("resume", help="lift a halt")
    _scope_arguments(resume)
    resume.add_argument("--json", action="store_true")
    resume.set_defaults(handler=deferred("app.cli.halt", "run_resume"))


def _scope_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--installation", type=int, metavar="ID", help="one installation (default: global)"
    )
