"""`ourobot ledger`: the ledger's rows with their four outcome axes, filtered: arguments only.

The implementation is `app.cli.ledger`, imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ledger", help="cycles, reviews, merges and refusals with their outcomes"
    )
    parser.add_argument("--repo", metavar="OWNER/NAME", help="one repository")
    parser.add_argument(
        "--ticket", metavar="OWNER/NAME#N|N", help="one ticket, issue or pull request"
    )
    parser.add_argument(
        "--outcome",
        metavar="WORD",
        action="append",
        default=[],
        help="an outcome word (ok, error, budget, met, unmet, approved, rejected, merged, pr, ...) "
        "or axis=word; repeat to require several",
    )
    parser.add_argument("--kind", action="append", default=[], help="cycle, review, merge, ...")
    parser.add_argument("--since", metavar="WHEN", help="ISO date/time or an age: 30m, 24h, 7d")
    parser.add_argument("--until", metavar="WHEN", help="ISO date/time or an age")
    parser.add_argument("--limit", type=int, default=200, help="the newest N rows (default 200)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=deferred("app.cli.ledger", "run_ledger"))
