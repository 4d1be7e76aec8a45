"""`ourobot ledger`: the ledger's rows, filtered, with their outcome on the four axes."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from app.cli.store_open import open_store
from app.controls.ledger import Entry
from app.controls.ledger_query import (
    LedgerFilter,
    entry_dict,
    parse_kind,
    parse_limit,
    parse_outcome,
    parse_repo,
    parse_ticket,
    parse_time,
    search,
)
from app.errors import UserError
from app.settings import load_settings


def ledger_filter(args: argparse.Namespace, now: datetime) -> LedgerFilter:
    """The filter the options ask for; a bad option is a UserError naming it."""
    repo = parse_repo(args.repo) if args.repo else None
    number = None
    if args.ticket:
        repo, number = parse_ticket(args.ticket, repo)
    since = parse_time(args.since, now=now, option="--since") if args.since else None
    until = parse_time(args.until, now=now, option="--until") if args.until else None
    if since is not None and until is not None and since >= until:
        raise UserError("--since must be before --until")
    return LedgerFilter(
        repo=repo,
        number=number,
        outcomes=tuple(parse_outcome(word) for word in args.outcome),
        kinds=tuple(parse_kind(kind) for kind in args.kind),
        since=since,
        until=until,
        limit=parse_limit(args.limit),
    )


def run_ledger(args: argparse.Namespace) -> int:
    wanted = ledger_filter(args, datetime.now(UTC))  # bad input before any store is opened
    store = open_store(load_settings(), reading=True)
    try:
        entries = search(store, wanted)
    finally:
        store.close()
    if args.json:
        print(json.dumps({"entries": [entry_dict(e) for e in entries]}, sort_keys=True))
    else:
        for entry in entries:
            print(entry_line(entry))
        if not entries:
            print("no ledger rows match")
    return 0


def entry_line(entry: Entry) -> str:
    o = entry.outcome
    where = entry.repo or "-"
    if entry.number is not None:
        where += f"#{entry.number}"
    sha = f" {entry.head_sha[:12]}" if entry.head_sha else ""
    error = f" class={entry.error_class}" if entry.error_class else ""
    said = entry.detail.get("outcome") or entry.detail.get("reason") or entry.detail.get("status")
    what = f" ({' '.join(str(said).split())[:120]})" if said else ""
    return (
        f"{entry.id:>6} {entry.at:%Y-%m-%d %H:%M:%S}Z {entry.kind:<12} {where}{sha} "
        f"execution={o.execution} objective={o.objective} review={o.review} "
        f"artifact={o.artifact}{error}{what}"
    )
