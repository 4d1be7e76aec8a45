"""`ourobot patterns`: the pattern register of recurring failure classes: arguments only.

The implementation is `app.cli.patterns`, imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "patterns", help="recurring failure classes with counts and first and last examples"
    )
    parser.add_argument("--repo", metavar="OWNER/NAME", help="one repository")
    parser.add_argument("--since", metavar="WHEN", help="ISO date/time or an age: 30m, 24h, 7d")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=deferred("app.cli.patterns", "run_patterns"))
