"""`ourobot worker`: a Celery worker on OUROBOT_REDIS_URL: its arguments only.

The implementation is `app.cli.worker`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("worker", help="run a Celery worker (needs OUROBOT_REDIS_URL)")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: one per CPU)",
    )
    parser.add_argument(
        "--beat",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the periodic sweeper and redelivery (default: on)",
    )
    parser.add_argument("--loglevel", default="INFO", help="Celery log level (default: INFO)")
    parser.set_defaults(handler=deferred("app.cli.worker", "run_worker"))
