"""`ourobot status`: the operator's snapshot of what ourobot is doing, from the store.

Redis is read too when `OUROBOT_REDIS_URL` is set (the Celery queue, effect leases and turns);
a Redis that cannot be read is a note in the output, never a failure of the command.
"""

from __future__ import annotations

import argparse
import json

from app.cli.store_open import open_store, status_redis
from app.controls.overview import Overview, overview_dict, read_overview
from app.controls.pricing import usd
from app.settings import load_settings


def run_status(args: argparse.Namespace) -> int:
    settings = load_settings()
    store = open_store(settings, reading=True)
    try:
        redis_client, queues = status_redis(settings.redis_url, settings.celery_queue)
        view = read_overview(settings, store, redis_client, queue_names=queues)
    finally:
        store.close()
    if args.json:
        print(json.dumps(overview_dict(view), sort_keys=True))
    else:
        print("\n".join(status_lines(view)))
    return 0


def status_lines(view: Overview) -> list[str]:
    inbox = view.inbox
    lines = [
        f"ourobot status at {view.at:%Y-%m-%d %H:%M:%S}Z ({view.mode} mode)",
        "queues: inbox "
        + ", ".join(f"{count} {state}" for state, count in inbox.items())
        + (
            f"; oldest pending since {view.oldest_pending:%Y-%m-%d %H:%M:%S}Z"
            if view.oldest_pending
            else ""
        )
        + (f"; broker queue {view.broker_queue}" if view.broker_queue is not None else ""),
    ]
    if view.halts:
        lines += [
            f"HALTED {h.scope} by {h.set_by} at {h.set_at:%Y-%m-%d %H:%M:%S}Z: {h.reason}"
            for h in view.halts
        ]
    else:
        lines.append("halts: none")
    lines.append(f"leases: {len(view.leases)}")
    for lease in view.leases:
        left = f" ({lease.seconds_left}s left)" if lease.seconds_left is not None else ""
        until = f" until {lease.until:%H:%M:%S}Z" if lease.until else ""
        lines.append(f"  {lease.kind} {lease.key}{until}{left}")
    lines.append(f"open cycles: {len(view.open_cycles)}")
    for cycle in view.open_cycles:
        pr = f" PR #{cycle.pr}" if cycle.pr is not None else ""
        lines.append(f"  {cycle.ticket}{pr} {cycle.outcome} since {cycle.at:%Y-%m-%d %H:%M}Z")
    total = sum(view.spend_today.values())
    day_cap = view.cap_usd_per_day
    cap = "no daily cap" if day_cap is None else f"cap {dollars(day_cap)} per installation"
    ticket_cap = dollars(view.cap_usd_per_ticket)
    lines.append(f"spend today: {usd(total)} ({cap}); per ticket cap {ticket_cap}")
    for owner, micro in sorted(view.spend_today.items()):
        name = "the Action/CLI" if owner == "none" else f"installation {owner}"
        lines.append(f"  {name}: {usd(micro)}")
    lines += priced_lines(view)
    lines += [f"note: {note}" for note in view.notes]
    return lines


def priced_lines(view: Overview) -> list[str]:
    """Spend that is not real dollars, said so: models priced at 0 (the demo's scripted ones,
    a local server) and models charged at the dearest price because nobody priced them."""
    lines = []
    if view.free_today:
        models = ", ".join(f"{m} ({n} calls)" for m, n in sorted(view.free_today.items()))
        lines.append(f"  at no cost (priced 0 by OUROBOT_MODEL_PRICES: scripted or local "
                     f"models): {models}")  # fmt: skip
    if view.unpriced_today:
        models = ", ".join(f"{m} {usd(c)}" for m, c in sorted(view.unpriced_today.items()))
        lines.append(f"  of which charged at the dearest price, no price known (set "
                     f"OUROBOT_MODEL_PRICES): {models}")  # fmt: skip
    return lines


def dollars(amount: float) -> str:
    return usd(round(amount * 1_000_000))
