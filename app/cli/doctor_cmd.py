"""`ourobot doctor`: check a deployment's settings and connections: its arguments only.

The implementation is `app.cli.doctor`, imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor", help="check this deployment's settings and connections, one line each"
    )
    parser.set_defaults(handler=deferred("app.cli.doctor", "doctor"))
