"""`ourobot status`: queues, halts, leases, open cycles and today's spend: its arguments only.

The implementation is `app.cli.status`, imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "status", help="what ourobot is doing now: queues, halts, leases, cycles, spend"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=deferred("app.cli.status", "run_status"))
