"""`ourobot review check`: the review panel on base..head: its arguments only.

The implementation is `app.cli.review`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("review", help="the multi-model review panel")
    actions = parser.add_subparsers(dest="review_command", metavar="ACTION")
    check = actions.add_parser(
        "check", help="ask the panel of review.models for a verdict on base..head"
    )
    check.add_argument("--repo", required=True, type=Path, help="a local git repository")
    check.add_argument("--base", required=True, help="the revision the change is based on")
    check.add_argument("--head", required=True, help="the revision to review")
    check.add_argument("--ticket", type=Path, help="a file with the ticket (issue) text")
    check.add_argument(
        "--config", type=Path, help="a repo config file (default: .github/ourobot.yml at --base)"
    )
    check.add_argument("--json", action="store_true", help="print the verdict as JSON")
    check.set_defaults(handler=deferred("app.cli.review", "review_check"))
