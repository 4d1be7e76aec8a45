"""`ourobot serve`: the webhook receiver under uvicorn, with the dispatcher for its mode.

Startup refuses a missing webhook secret (exit 2), migrates the store, warns when the App's
credentials are missing (the receiver still records deliveries; work needing GitHub then ends
with an `infra` outcome), and listens. SIGTERM and Ctrl-C finish in-flight requests, close the
dispatcher and the store, and exit 0.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import uvicorn
from fastapi import FastAPI
from sqlalchemy.exc import OperationalError

from app.cli import EXIT_OK
from app.dispatch import Closable, Dispatcher, InboxOnlyDispatcher
from app.errors import ConfigError, UserError
from app.inbox import Inbox
from app.settings import Settings, load_settings
from app.store import Store
from app.webhooks import InlineHook, create_receiver_app

log = logging.getLogger("app.cli.serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Finish in-flight requests on shutdown, but never hang a deploy on a stuck one.
GRACEFUL_SHUTDOWN_S = 10


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="run the GitHub webhook receiver")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    parser.set_defaults(handler=serve)


def serve(args: argparse.Namespace) -> int:
    settings = load_settings()
    require_webhook_secret(settings)
    listener = _listen(args.host, args.port)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    store = _open_store(settings)
    if not settings.has_app_credentials():
        print(
            "ourobot: warning: OUROBOT_APP_ID and OUROBOT_PRIVATE_KEY (or _PATH) are not set; "
            "deliveries are recorded, work that needs GitHub ends with an infra outcome",
            file=sys.stderr,
        )
    dispatcher = build_dispatcher(settings, store)
    try:
        app = create_receiver_app(
            settings,
            inbox=Inbox(store),
            dispatcher=dispatcher,
            inline=build_inline_hook(settings, store),
        )
        mode = "embedded" if settings.embedded else "redis"
        log.info("ourobot serve: %s mode, dispatcher %s", mode, type(dispatcher).__name__)
        _run(app, listener)
    finally:
        if isinstance(dispatcher, Closable):
            dispatcher.close()
        store.close()
        listener.close()
    log.info("ourobot serve: stopped")
    return EXIT_OK


def require_webhook_secret(settings: Settings) -> None:
    if settings.webhook_secret is None or not settings.webhook_secret.get_secret_value():
        raise ConfigError(
            "OUROBOT_WEBHOOK_SECRET is not set: ourobot serve refuses to accept unsigned webhooks"
        )


def build_dispatcher(settings: Settings, store: Store) -> Dispatcher:
    """The dispatcher for this deployment's mode.

    Final wiring: embedded mode (no OUROBOT_REDIS_URL) -> `app.embedded.EmbeddedRunner`,
    Redis mode -> the Celery dispatcher from `tasks`. Until they are wired in, deliveries are
    recorded and stay pending in the inbox.
    """
    log.warning("no worker is wired into ourobot serve yet: deliveries stay pending in the inbox")
    return InboxOnlyDispatcher()


def build_inline_hook(settings: Settings, store: Store) -> InlineHook | None:
    """What runs inline before dispatch (the /panic handler, `app.panic.handle_inline`)."""
    return None


def _listen(host: str, port: int) -> socket.socket:
    """Bind before anything else starts, so a taken port is one clear line, not a log dump."""
    if not 0 <= port <= 65535:
        raise UserError(f"--port {port}: not a TCP port")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        listener = socket.socket(family, kind, proto)
    except OSError as error:
        raise UserError(f"--host {host}: {error.strerror or error}") from None
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(2048)
    except OSError as error:
        listener.close()
        raise UserError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    listener.set_inheritable(True)
    return listener


def _open_store(settings: Settings) -> Store:
    store = Store.open(settings)
    try:
        store.migrate()
    except OperationalError as error:
        store.close()
        first = (str(error.orig).strip().splitlines() or ["unreachable"])[0]
        raise ConfigError(f"OUROBOT_DATABASE_URL: cannot open the database: {first}") from None
    return store


class _Server(uvicorn.Server):
    """uvicorn's server, minus re-raising the stop signal after its graceful shutdown.

    uvicorn re-raises SIGTERM once it has stopped, which kills the process before the
    dispatcher and the store are closed; here the signal only asks the server to stop.
    """

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        stop_signals = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self._stop) for sig in stop_signals}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop(self, sig: int, frame: FrameType | None) -> None:
        # A second Ctrl-C skips waiting for in-flight requests.
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True


def _run(app: FastAPI, listener: socket.socket) -> None:
    config = uvicorn.Config(
        app,
        log_config=None,  # logging is configured above; uvicorn's loggers propagate to it
        access_log=False,  # the receiver logs one line per delivery itself
        lifespan="on",  # the receiver finishes queued inbox writes on shutdown
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    _Server(config).run(sockets=[listener])
