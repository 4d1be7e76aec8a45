"""`ourobot review check`: the review panel's verdict on a local change, before a push.

Exit 0 when the panel passes, 1 when it fails (rejected, incomplete, budget), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from app.cli import EXIT_NEGATIVE, EXIT_OK

if TYPE_CHECKING:
    from reviewers.result import ModelVerdict


def review_check(args: argparse.Namespace) -> int:
    # Imported here: the model SDKs take seconds to import, and every other `ourobot`
    # command builds this parser too.
    from reviewers.local_review import prepare, read_ticket, run_local_review

    env = dict(os.environ)
    ticket = read_ticket(args.ticket) if args.ticket is not None else None
    prepared = prepare(
        args.repo, args.base, args.head, ticket=ticket, config_file=args.config, env=env
    )
    models = prepared.config.review.models
    # Progress goes to stderr, so stdout stays the report (or the JSON contract) alone.
    print(
        f"ourobot review: asking {len(models)} model{'s' if len(models) != 1 else ''} "
        f"({', '.join(model.id for model in models)}), "
        f"up to {prepared.config.review.timeout_s:g}s",
        file=sys.stderr,
        flush=True,
    )
    result = run_local_review(prepared, env, on_verdict=print_progress)
    if args.json:
        sys.stdout.write(json.dumps(result.as_json(), indent=2) + "\n")
    else:
        sys.stdout.write(result.summary_markdown())
    return EXIT_OK if result.conclusion == "success" else EXIT_NEGATIVE


def print_progress(verdict: ModelVerdict) -> None:
    print(f"ourobot review: {verdict.progress_line()}", file=sys.stderr, flush=True)
