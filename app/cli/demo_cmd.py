"""`ourobot demo`: the loop against the local GitHub sandbox, no accounts needed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run the loop against the local GitHub sandbox")
    parser.add_argument(
        "--keep", metavar="DIR", type=Path, help="keep the demo's files in DIR for inspection"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="steps on stderr; the last stdout line is a JSON summary of the tickets",
    )
    parser.add_argument(
        "--record", metavar="DIR", type=Path,
        help="write every HTTP request the sandbox and the model servers received to DIR "
        "as JSONL, secrets scrubbed",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from app.cli.demo import run_demo

    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    return run_demo(sys.stdout, keep_dir=args.keep, record_dir=args.record, as_json=args.json)
