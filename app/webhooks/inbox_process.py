"""The inbox process: `ourobot serve` records deliveries in a child process of its own.

The HTTP process keeps what must happen per request (HTTP, the signature, parsing the body)
and hands each verified delivery over a private socket pair to one child process that owns
everything stateful behind it: the inbox writes (group commit), the inline /panic hook, the
dispatcher (the embedded runner, or the Celery publisher) and their threads. Python runs one
thread at a time per process, so in one process these competed with acknowledging webhooks;
as two processes they use two cores. The contract is unchanged: a delivery is answered only
after its row is committed and the inline hook has run, in the child, for it.

Frames on the socket are a 4-byte length and a pickle; both ends are this module, in processes
`serve` started, on a socket pair nobody else holds. The child ignores SIGINT and SIGTERM: it
stops when the HTTP process closes its end (a graceful stop, or the HTTP process dying), after
finishing what it was sent. If the child dies, the requests it held are answered 503 (GitHub
marks them failed; the redelivery job asks again) and a new child is started.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import pickle
import select
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from app.errors import ConfigError
from app.settings import Settings
from app.store import Store
from app.webhooks.delivery import BadDelivery, Received
from app.webhooks.dispatch import Closable, Dispatcher
from app.webhooks.handoff import DispatchQueue, InlineHook, describe, guarded_inline
from app.webhooks.inbox import Inbox
from app.webhooks.recorder import MAX_BATCH, InboxWriter, Outcome

log = logging.getLogger("app.webhooks")

# What the child builds, in the child, from the settings and its store: the dispatcher and the
# inline hook. A module-level function, so that it can be named to a spawned process.
Components = Callable[[Settings, Store], tuple[Dispatcher, InlineHook | None]]

_LENGTH = struct.Struct("!I")
_READY = "ready"
_BAD, _ERROR = "bad", "error"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0
RESTART_DELAY_S = 1.0
_SOCKET_BUFFER = 4 * 1024 * 1024
_RECV_BYTES = 1 << 20
# How long the inbox process may hold a batch open for more deliveries (see `_next_batch`):
# paired runs under wrk, Redis mode: 0.3 ms +17% against 1 ms; 0 and 0.1 ms no better.
GATHER_S = 0.0003
_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class InboxUnavailable(Exception):
    """The inbox process could not record a delivery (stopped, or the database refused)."""


def _frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def _split_frames(buffer: bytearray) -> list[Any]:
    """Take every complete frame off the front of `buffer`."""
    messages = []
    offset = 0
    while len(buffer) - offset >= _LENGTH.size:
        (size,) = _LENGTH.unpack_from(buffer, offset)
        end = offset + _LENGTH.size + size
        if len(buffer) < end:
            break
        messages.append(pickle.loads(buffer[offset + _LENGTH.size : end]))  # noqa: S301 (our own child)
        offset = end
    del buffer[:offset]
    return messages


# ---- the HTTP process's side ---------------------------------------------------------------


class InboxProcess:
    """The receiver's `Recorder` backed by the inbox process; `start()` before serving."""

    def __init__(self, settings: Settings, components: Components) -> None:
        self._settings = settings
        self._components = components
        self._context = multiprocessing.get_context("spawn")
        self._process: multiprocessing.process.BaseProcess | None = None
        self._socket: socket.socket | None = None
        self._channel: _Channel | None = None
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._restarting = False
        self._closed = False
        self._connecting: asyncio.Future[_Channel] | None = None

    def start(self) -> None:
        """Start the child and wait until it is ready; ConfigError (one line) if it is not."""
        with self._lock:
            self._process, self._socket = self._spawn()

    def _watch(self, process: multiprocessing.process.BaseProcess) -> None:
        """Replace the child as soon as it dies, not only when the next delivery finds out:
        a health check answering 503 could otherwise keep every delivery away for good."""

        def wait_for_exit() -> None:
            # The sentinel, not join(): only one thread may reap the child. Two waiting in
            # join() race in waitpid, and the loser sees a dead child as alive.
            multiprocessing.connection.wait([process.sentinel])
            with self._lock:
                if self._process is process and not self._closed:
                    self._restart_later()

        threading.Thread(target=wait_for_exit, name="inbox-watch", daemon=True).start()

    def _spawn(self) -> tuple[multiprocessing.process.BaseProcess, socket.socket]:
        ours, theirs = socket.socketpair()
        for end in (ours, theirs):
            end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SOCKET_BUFFER)
            end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _SOCKET_BUFFER)
        process = self._context.Process(
            target=_child_main,
            args=(self._settings, self._components, theirs),
            name="ourobot-inbox",
            daemon=False,
        )
        process.start()
        theirs.close()
        try:
            _await_ready(ours, process)
        except ConfigError:
            ours.close()
            process.join(5)
            raise
        self._watch(process)
        return process, ours

    async def record(self, received: Received) -> int | None:
        channel = await self._connected()
        outcome = await channel.send(
            next(self._seq), (received.delivery_id, received.event, received.body)
        )
        if isinstance(outcome, tuple):
            kind, text = outcome
            raise BadDelivery(text) if kind == _BAD else InboxUnavailable(text)
        return outcome

    async def _connected(self) -> _Channel:
        channel = self._channel
        if channel is not None and not channel.lost:
            return channel
        # One event loop: between this check and the assignment nothing else runs, so every
        # concurrent request awaits the same connection (two transports on one socket would
        # split the answers between them).
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect())
        return await asyncio.shield(self._connecting)

    async def _connect(self) -> _Channel:
        try:
            with self._lock:
                if self._channel is not None and self._channel.lost:
                    # The child we talked to is gone: its replacement starts in the background.
                    self._channel = None
                    if self._socket is not None:
                        self._socket.close()
                    self._socket = None
                    self._restart_later()
                sock = self._socket
            if sock is None:
                raise InboxUnavailable("the inbox process is restarting")
            sock.setblocking(False)
            loop = asyncio.get_running_loop()
            _, channel = await loop.connect_accepted_socket(_Channel, sock=sock)
            self._channel = channel
            return channel
        finally:
            self._connecting = None

    def _restart_later(self) -> None:
        if self._restarting or self._closed:
            return
        self._restarting = True
        old = self._process
        threading.Thread(target=self._restart, args=(old,), name="inbox-restart").start()

    def _restart(self, old: multiprocessing.process.BaseProcess | None) -> None:
        log.error("the inbox process stopped (exit code %s); starting a new one", _code(old))
        if old is not None:
            old.join(STOP_TIMEOUT_S)
        while not self._closed:
            time.sleep(RESTART_DELAY_S)
            try:
                process, sock = self._spawn()
            except ConfigError as error:
                log.error("%s; trying again", error)
                continue
            with self._lock:
                closed = self._closed
                if not closed:
                    if self._channel is None and self._socket is not None:
                        self._socket.close()  # never attached to a transport: ours to close
                    self._process, self._socket, self._channel = process, sock, None
                    self._restarting = False
            if closed:
                # `close()` ran while this one was starting: stop it the same way.
                sock.shutdown(socket.SHUT_WR)
                process.join(STOP_TIMEOUT_S)
                sock.close()
                return
            log.info("inbox process restarted (pid %s)", process.pid)
            return

    def close(self) -> None:
        """Let the child finish what it was sent and stop; wait for it (bounded)."""
        with self._lock:
            self._closed = True
            process, sock, channel = self._process, self._socket, self._channel
            self._socket = self._channel = None
        if channel is not None:
            channel.finish()
        elif sock is not None:
            sock.shutdown(socket.SHUT_WR)
        if process is not None:
            process.join(STOP_TIMEOUT_S)
            if process.is_alive():
                log.error("the inbox process did not stop in %d s; terminating it", STOP_TIMEOUT_S)
                process.kill()
                process.join()
        if sock is not None:
            sock.close()

    def alive(self) -> bool:
        """The child is running and this process can talk to it (for the health check)."""
        process = self._process
        channel = self._channel
        return (
            process is not None
            and process.is_alive()
            and not self._restarting
            and not (channel is not None and channel.lost)
        )

    @property
    def pid(self) -> int | None:
        """The child's process id (for operators and tests)."""
        process = self._process
        return None if process is None else process.pid


def _await_ready(sock: socket.socket, process: multiprocessing.process.BaseProcess) -> None:
    sock.settimeout(START_TIMEOUT_S)
    buffer = bytearray()
    try:
        while not (messages := _split_frames(buffer)):
            chunk = sock.recv(65536)
            if not chunk:
                process.join(5)
                raise ConfigError(
                    f"the inbox process exited while starting (exit code {_code(process)}); "
                    "its error is above"
                )
            buffer += chunk
    except TimeoutError:
        process.kill()
        raise ConfigError(
            f"the inbox process did not start within {START_TIMEOUT_S:.0f} s"
        ) from None
    finally:
        sock.settimeout(None)
    if messages != [_READY]:
        raise ConfigError(f"the inbox process said {messages!r} instead of {_READY!r}")


def _code(process: multiprocessing.process.BaseProcess | None) -> object:
    return None if process is None else process.exitcode


class _Channel(asyncio.Protocol):
    """The HTTP process's end of the socket: sends deliveries, resolves their answers."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._waiting: dict[int, asyncio.Future[int | tuple[str, str] | None]] = {}
        self._outgoing: list[bytes] = []
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    async def send(self, seq: int, fields: tuple[Any, ...]) -> int | tuple[str, str] | None:
        if self.lost or self._transport is None:
            raise InboxUnavailable("the inbox process stopped")
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[int | tuple[str, str] | None] = loop.create_future()
        self._waiting[seq] = answer
        # Frames of the same loop iteration go out in one write: a send to the child costs a
        # system call and a wake-up, which showed as the HTTP process's largest single cost.
        if not self._outgoing:
            loop.call_soon(self._flush)
        self._outgoing.append(_frame((seq, fields)))
        return await answer

    def _flush(self) -> None:
        outgoing, self._outgoing = self._outgoing, []
        if self._transport is not None and not self.lost:
            self._transport.write(b"".join(outgoing))

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        for replies in _split_frames(self._buffer):
            for seq, outcome in replies:
                answer = self._waiting.pop(seq, None)
                if answer is not None and not answer.done():
                    answer.set_result(outcome)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        waiting, self._waiting = self._waiting, {}
        for answer in waiting.values():
            if not answer.done():
                answer.set_exception(InboxUnavailable("the inbox process stopped"))

    def finish(self) -> None:
        """No more deliveries: the child drains what it has and exits."""
        if self._transport is not None and not self.lost:
            self._transport.write_eof()


# ---- the child -----------------------------------------------------------------------------


def _child_main(settings: Settings, components: Components, sock: socket.socket) -> None:
    # The HTTP process decides when this one stops (by closing the socket), so a Ctrl-C sent
    # to the whole process group cannot cut a commit short.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    log_handler = _install_log_handler()
    store = Store.open(settings)
    try:
        dispatcher, inline = components(settings, store)
        dispatch = DispatchQueue(dispatcher)
        try:
            writer = InboxWriter(
                Inbox(store), on_recorded=guarded_inline(inline), on_answered=dispatch.submit
            )
            _serve_socket(sock, writer, log_handler.flush)
        finally:
            dispatch.close()
            if isinstance(dispatcher, Closable):
                dispatcher.close()
    finally:
        store.close()
        log_handler.flush()


class _BatchedLogHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Log lines to stderr through a block buffer: one write per batch of deliveries.

    The inbox process logs a line per delivery; written one by one, that is a system call per
    delivery. Lines are written when a batch is answered, at once for warnings and errors, and
    at least every LOG_FLUSH_S (for the runner's lines while no delivery arrives).
    """

    def __init__(self) -> None:
        super().__init__(open(2, "w", buffering=1 << 16, closefd=False, errors="backslashreplace"))  # noqa: SIM115
        self._lock_flush = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.stream.write(self.format(record) + self.terminator)
        except Exception:
            self.handleError(record)
            return
        if record.levelno >= logging.WARNING:
            self.flush()

    def flush(self) -> None:
        # A stderr that is gone cannot be written to; nothing else to do about it here.
        with self._lock_flush, contextlib.suppress(OSError, ValueError):
            self.stream.flush()

    def flush_every(self, interval_s: float) -> None:
        def loop() -> None:
            while True:
                time.sleep(interval_s)
                self.flush()

        threading.Thread(target=loop, name="log-flush", daemon=True).start()


LOG_FLUSH_S = 1.0


def _install_log_handler() -> _BatchedLogHandler:
    handler = _BatchedLogHandler()
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    handler.flush_every(LOG_FLUSH_S)
    return handler


def _serve_socket(sock: socket.socket, writer: InboxWriter, flush_log: Callable[[], None]) -> None:
    sock.sendall(_frame(_READY))
    buffer = bytearray()
    expected = 1
    while (batch := _next_batch(sock, buffer, expected)) is not None:
        seqs = [seq for seq, _ in batch]
        received = [_received(fields) for _, fields in batch]
        writer.write(received, functools.partial(_reply, sock, seqs))
        flush_log()
        expected = len(batch)


def _next_batch(
    sock: socket.socket, buffer: bytearray, expected: int
) -> list[tuple[int, Any]] | None:
    """Block for at least one delivery, then gather more for a moment.

    A commit costs about the same for one row as for a dozen, so under load it pays to wait
    up to GATHER_S for as many deliveries as the last batch had: without that, a batch of one
    goes to disk while the rest queue behind it, and batches alternate between tiny and full.
    Idle (the last batch had one delivery), nothing waits.
    """
    batch: list[tuple[int, Any]] = _split_frames(buffer)
    while not batch:
        chunk = sock.recv(_RECV_BYTES)
        if not chunk:
            return None
        buffer += chunk
        batch = _split_frames(buffer)
    deadline = time.monotonic() + GATHER_S
    while len(batch) < MAX_BATCH:
        wait = deadline - time.monotonic() if len(batch) < expected else 0.0
        readable, _, _ = select.select([sock], [], [], max(0.0, wait))
        if not readable:
            break
        chunk = sock.recv(_RECV_BYTES)
        if not chunk:
            break  # the end: answer this batch first; the next call sees it again
        buffer += chunk
        batch += _split_frames(buffer)
    return batch


def _received(fields: tuple[Any, ...]) -> Received:
    delivery_id, event, body = fields
    return Received(delivery_id, event, body)


def _reply(sock: socket.socket, seqs: list[int], outcomes: list[Outcome]) -> None:
    sock.sendall(
        _frame([(seq, _wire(outcome)) for seq, outcome in zip(seqs, outcomes, strict=True)])
    )


def _wire(outcome: Outcome) -> int | tuple[str, str] | None:
    """An outcome as it crosses the socket: errors as (kind, one line), never the exception."""
    if isinstance(outcome, BadDelivery):
        return (_BAD, str(outcome))
    if isinstance(outcome, Exception):
        return (_ERROR, describe(outcome))
    return outcome
