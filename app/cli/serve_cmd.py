"""`ourobot serve`: the webhook receiver: its arguments only.

The implementation is `app.cli.serve`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

import argparse

from app.cli.deferred import deferred

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="run the GitHub webhook receiver")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    parser.set_defaults(handler=deferred("app.cli.serve", "serve"))
