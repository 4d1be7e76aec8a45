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

from app.cli import EXIT_NEGATIVE, EXIT_OK
from app.cli.startup import require_unexposed
from app.loop.local_models import model_option
from app.loop.local_start import start_local_cycle
from app.settings import load_settings

SUCCESS = ("ready", "merged", "satisfied")


def cycle(args: argparse.Namespace) -> int:
    def progress(line: str) -> None:
        print(f"ourobot: {line}", file=sys.stderr, flush=True)

    env, settings = dict(os.environ), load_settings()
    require_unexposed(settings)
    start = start_local_cycle(
        args.repo,
        args.ticket,
        config_file=args.config,
        env=env,
        settings=settings,
        progress=progress,
        model=model_option(args.model, args.base_url),
    )
    # The cycle's machinery (store, SDKs, cage) loads once the input is known to be good, so
    # bad input is one line within a second.
    from app.loop.local import run_local_cycle

    run = run_local_cycle(
        start,
        config_file=args.config,
        merge=args.merge,
        env=env,
        settings=settings,
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
    """A yes/no question on the terminal; anything but yes (or no answer at all) is no."""
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")
