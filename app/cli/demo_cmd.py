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
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from app.cli.demo import run_demo

    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    return run_demo(sys.stdout, keep_dir=args.keep)
