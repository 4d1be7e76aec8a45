"""`ourobot beat`: the periodic scheduler alone (sweeper and webhook redelivery): its arguments.

The implementation is `app.cli.worker` (`run_beat`), imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "beat",
        help="run the periodic scheduler (sweeper, redelivery) on its own; needs OUROBOT_REDIS_URL",
    )
    parser.add_argument("--loglevel", default="INFO", help="Celery log level (default: INFO)")
    parser.set_defaults(handler=deferred("app.cli.worker", "run_beat"))
