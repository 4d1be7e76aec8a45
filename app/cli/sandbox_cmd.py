"""`ourobot sandbox`: run the local GitHub sandbox server in the foreground until Ctrl-C/SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from app.errors import UserError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sandbox", help="run the local GitHub sandbox (a test double)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--data-dir", required=False, help="where repositories are kept")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Imported here so other commands never pay for (or depend on) the sandbox.
    from app.sandbox.server import SandboxServer

    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be between 0 and 65535, got {args.port}")
    data_dir = Path(args.data_dir) if args.data_dir else None
    if data_dir is not None and data_dir.exists() and not data_dir.is_dir():
        raise UserError(f"--data-dir is not a directory: {data_dir}")
    server = SandboxServer(args.host, args.port, data_dir)
    try:
        server.start()
    except (RuntimeError, OSError) as exc:
        raise UserError(f"sandbox: {exc}") from exc
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        info = server.state.app
        print(f"sandbox listening on {server.url}")
        print(f"admin token: {server.admin_token}")
        print(f"App id: {info.id} (slug {info.slug})")
        print(f"App private key: {server.key_path}")
        print(f"data dir: {server.data_dir}")
        print("press Ctrl-C to stop", flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
    print("sandbox stopped", file=sys.stderr)
    return 0
