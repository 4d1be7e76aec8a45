"""`ourobot review check`: the review panel's verdict on a local change, before a push.

Exit 0 when the panel passes, 1 when it fails (rejected, incomplete, budget), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from app.cli import EXIT_NEGATIVE, EXIT_OK


def review_check(args: argparse.Namespace) -> int:
    # Imported here: the model SDKs take seconds to import, and every other `ourobot`
    # command builds this parser too.
    from reviewers.local_review import prepare, read_ticket, run_local_review

    env = dict(os.environ)
    ticket = read_ticket(args.ticket) if args.ticket is not None else None
    prepared = prepare(
        args.repo, args.base, args.head, ticket=ticket, config_file=args.config, env=env
    )
    result = run_local_review(prepared, env)
    if args.json:
        sys.stdout.write(json.dumps(result.as_json(), indent=2) + "\n")
        # The JSON is a fixed contract; why a reviewer gave no verdict goes to stderr.
        for verdict in result.verdicts:
            if verdict.problem:
                print(f"ourobot: {verdict.model}: {verdict.problem}", file=sys.stderr)
    else:
        sys.stdout.write(result.summary_markdown())
    return EXIT_OK if result.conclusion == "success" else EXIT_NEGATIVE
