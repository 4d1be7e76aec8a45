"""`ourobot cycle`: the implementer loop on a local repository, without GitHub.

Progress lines go to stderr (iteration, edits, refusals, test result, elapsed); with `--json`
the last line of stdout is the outcome. Exit 0 for ready, merged or satisfied; 1 for blocked
or needs-human; 2 for bad input (not a git repository, an unreadable ticket, an invalid
config, `sandbox: required` without bubblewrap).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from app.cli import EXIT_NEGATIVE, EXIT_OK

SUCCESS = ("ready", "merged", "satisfied")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cycle", help="work one ticket on a local repository: a tested branch ourobot/<ticket>"
    )
    parser.add_argument("--repo", required=True, type=Path, help="a local git repository")
    parser.add_argument("--ticket", required=True, type=Path, help="a file with the ticket")
    parser.add_argument(
        "--config",
        type=Path,
        help="a repo config file (default: .github/ourobot.yml at the default branch)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="after tests and review passed, ask to merge the branch (--no-ff)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(handler=cycle)


def cycle(args: argparse.Namespace) -> int:
    # Imported here: the model SDKs and the store take a while, and every command builds the
    # parser.
    from app.loop.local import run_local_cycle
    from app.settings import load_settings

    def progress(line: str) -> None:
        print(f"ourobot: {line}", file=sys.stderr, flush=True)

    run = run_local_cycle(
        args.repo,
        args.ticket,
        config_file=args.config,
        merge=args.merge,
        env=dict(os.environ),
        settings=load_settings(),
        ask=_ask,
        progress=progress,
    )
    result = run.result
    if args.json:
        sys.stdout.write(json.dumps(result.as_json()) + "\n")
    else:
        where = f" on {result.branch}" if result.branch else ""
        sys.stdout.write(
            f"{result.outcome}{where}: {result.reason} "
            f"({len(result.iterations)} iteration(s), tests {result.tests})\n"
        )
    return EXIT_OK if result.outcome in SUCCESS else EXIT_NEGATIVE


def _ask(question: str) -> bool:
    """A yes/no question on the terminal; anything but yes (or no terminal answer) is no."""
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")
