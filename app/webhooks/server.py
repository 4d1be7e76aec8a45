"""Running the receiver under uvicorn: a pre-bound loopback-or-public socket and clean stops.

The socket is bound before anything else starts, so a taken port is one clear error rather
than a log dump from inside uvicorn. SIGTERM and Ctrl-C let in-flight requests finish (up to
`GRACEFUL_SHUTDOWN_S`) and then return to the caller, which closes what it opened; a second
Ctrl-C stops without waiting.
"""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import uvicorn
from fastapi import FastAPI

from app.errors import UserError

GRACEFUL_SHUTDOWN_S = 10
LISTEN_BACKLOG = 2048
# The event loop shares the interpreter with the inbox writer and dispatch threads. Python's
# default switch interval (5 ms) lets a busy helper thread keep the loop waiting that long for
# the GIL on every hand-off, which showed up directly in the receiver's tail latency.
GIL_SWITCH_INTERVAL_S = 0.001


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port; UserError (one line) if that is impossible."""
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
        listener.listen(LISTEN_BACKLOG)
    except OSError as error:
        listener.close()
        raise UserError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return listener


def run(app: FastAPI, listener: socket.socket) -> None:
    """Serve `app` on `listener` until SIGTERM or Ctrl-C; returns after a graceful stop."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    config = uvicorn.Config(
        app,
        log_config=None,  # the caller configures logging; uvicorn's loggers propagate to it
        access_log=False,  # the receiver logs one line per delivery itself
        lifespan="on",  # the receiver finishes queued inbox writes on shutdown
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    _Server(config).run(sockets=[listener])


class _Server(uvicorn.Server):
    """uvicorn's server, minus re-raising the stop signal after its graceful shutdown.

    uvicorn re-raises SIGTERM once it has stopped, which would kill the process before the
    caller closes the dispatcher and the store; here a signal only asks the server to stop.
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
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True
