"""`ourobot guards check`: the guards over a diff: its arguments only.

The implementation is `app.cli.guards`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("guards", help="deterministic guards over a diff")
    actions = parser.add_subparsers(dest="guards_command", metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="check a diff against the guard rules",
        description="Check a change against the guard rules. Exit 0 = pass, 1 = violations, "
        "2 = bad input.",
    )
    source = check.add_mutually_exclusive_group(required=True)
    source.add_argument("--repo", type=Path, metavar="DIR", help="compute the diff from this repo")
    source.add_argument("--diff", metavar="FILE|-", help="read a unified diff from FILE or stdin")
    check.add_argument("--base", metavar="REV", help="base revision (with --repo)")
    check.add_argument("--head", metavar="REV", help="head revision (with --repo)")
    check.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="repo config to apply (default: .github/ourobot.yml at --base, or the defaults)",
    )
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.set_defaults(handler=deferred("app.cli.guards", "run_check"))
