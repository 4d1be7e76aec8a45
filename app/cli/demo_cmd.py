"""`ourobot demo`: the loop against the local GitHub sandbox, no accounts needed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run the loop against the local GitHub sandbox")
    parser.add_argument(
        "--keep", metavar="DIR", type=Path,
        help="keep the demo's files in DIR for inspection (a new or empty folder, or an earlier "
        "demo's, whose files are replaced)",
    )  # fmt: skip
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
    parser.add_argument(
        "--model", metavar="ID",
        help="a real model (anthropic:<name> or openai:<name>) for the implementer and the "
        "panel, its key from ANTHROPIC_API_KEY / OPENAI_API_KEY; default: scripted models",
    )  # fmt: skip
    parser.add_argument(
        "--base-url", metavar="URL",
        help="where --model is served: an OpenAI-compatible server such as Ollama's "
        "http://127.0.0.1:11434/v1 (a local one needs no key)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import os

    from app.cli.demo import real_model, run_demo
    from app.cli.demo_files import check_keep, check_record
    from app.errors import UserError
    from app.settings import load_settings

    # Every option is checked before anything starts or is written.
    keep, record = check_keep(args.keep), check_record(args.record)
    # Redis mode when the operator's environment names a Redis, embedded otherwise.
    redis_url = load_settings(env=os.environ).redis_url
    if args.base_url and not args.model:
        raise UserError("--base-url needs --model: name the model that URL serves")
    model = real_model(args.model, dict(os.environ), args.base_url) if args.model else None
    return run_demo(
        sys.stdout, keep_dir=keep, record_dir=record, as_json=args.json, redis_url=redis_url,
        model=model,
    )  # fmt: skip
