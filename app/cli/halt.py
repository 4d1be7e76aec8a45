"""`ourobot halt` / `ourobot resume`: the operator's stop switch from a shell.

Same durable record as `/ourobot panic` (the store, mirrored to Redis when configured), so a
halt set here stops the App's workers and one set there can be lifted here.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.controls.halt import GLOBAL, Halt, HaltRegistry, installation_scope
from app.errors import UserError
from app.settings import load_settings
from app.store import Store


def _scope(args: argparse.Namespace) -> str:
    if args.installation is None:
        return GLOBAL
    if args.installation <= 0:
        raise UserError("--installation must be a positive installation id")
    return installation_scope(args.installation)


def _registry() -> HaltRegistry:
    settings = load_settings()
    store = Store.open(settings)
    store.migrate()
    redis_client = None
    if settings.redis_url:
        import redis

        redis_client = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=3)
    return HaltRegistry(store, redis_client)


def _as_dict(halt: Halt) -> dict[str, str]:
    return {
        "scope": halt.scope,
        "reason": halt.reason,
        "set_by": halt.set_by,
        "set_at": halt.set_at.isoformat(),
    }


def run_halt(args: argparse.Namespace) -> int:
    registry = _registry()
    if not args.list:
        registry.set(_scope(args), reason=args.reason, set_by=args.by)
    halts = registry.all()
    if args.json:
        print(json.dumps({"halts": [_as_dict(h) for h in halts]}))
    else:
        for halt in halts:
            print(f"halted {halt.scope} by {halt.set_by} at {halt.set_at:%Y-%m-%d %H:%M:%S}Z")
        if not halts:
            print("no halt in force")
    return 0


def run_resume(args: argparse.Namespace) -> int:
    registry = _registry()
    scope = _scope(args)
    lifted = registry.clear(scope)
    if args.json:
        print(json.dumps({"scope": scope, "lifted": lifted}))
    elif lifted:
        print(f"lifted the {scope} halt")
    else:
        print(f"no {scope} halt was in force", file=sys.stderr)
    return 0 if lifted else 1
