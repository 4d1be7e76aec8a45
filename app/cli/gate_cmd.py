"""`ourobot gate check --state FILE|- [--json]`: its arguments only.

The implementation is `app.cli.gate`, imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("gate", help="the merge gate's decision")
    actions = parser.add_subparsers(dest="gate_command", metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="decide from a snapshot of a pull request: why won't it merge?",
        description="Decide from a JSON snapshot of a pull request (docs/gate.md). Exit 0 = "
        "merge, 1 = not yet, 2 = unreadable state.",
    )
    check.add_argument("--state", required=True, metavar="FILE|-", help="the state (- = stdin)")
    check.add_argument("--json", action="store_true", help="print the decision as JSON")
    check.set_defaults(handler=deferred("app.cli.gate", "run_check"))
