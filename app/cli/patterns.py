"""`ourobot patterns`: the pattern register, recurring failure classes counted from the ledger."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from app.cli.store_open import open_store
from app.controls.ledger_query import parse_repo, parse_time
from app.controls.patterns import Example, pattern_dict, read_register
from app.settings import load_settings


def run_patterns(args: argparse.Namespace) -> int:
    repo = parse_repo(args.repo) if args.repo else None
    since = parse_time(args.since, now=datetime.now(UTC), option="--since") if args.since else None
    store = open_store(load_settings(), reading=True)
    try:
        patterns = read_register(store, repo=repo, since=since)
    finally:
        store.close()
    patterns.sort(key=lambda p: (-p.count, p.error_class))
    if args.json:
        print(json.dumps({"patterns": [pattern_dict(p) for p in patterns]}, sort_keys=True))
        return 0
    for pattern in patterns:
        print(f"{pattern.count:>5}  {pattern.error_class}  ({pattern.status})")
        print(f"       first: {_example(pattern.first)}")
        if pattern.last.ledger_id != pattern.first.ledger_id:
            print(f"       last:  {_example(pattern.last)}")
    if not patterns:
        print("no failure classes recorded")
    return 0


def _example(example: Example) -> str:
    where = example.repo or "-"
    if example.number is not None:
        where += f"#{example.number}"
    text = f": {example.text}" if example.text else ""
    return f"ledger {example.ledger_id} at {example.at:%Y-%m-%d %H:%M}Z {where}{text}"
