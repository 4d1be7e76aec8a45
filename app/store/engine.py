"""The database engine: which database (from settings), and how connections to it behave.

The server and the workers open the same database at once. On SQLite that means WAL (readers do
not block the writer), a busy timeout (a writer waits for the lock instead of failing at once),
foreign keys on, and transactions that take the write lock when they begin (`BEGIN IMMEDIATE`):
a deferred transaction that reads and then writes can fail with "database is locked" without
waiting, which is exactly the read-then-insert pattern of a de-duplicating inbox.
PostgreSQL goes through psycopg 3. Creating an engine opens no connection.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, cast

from sqlalchemy import URL, Connection, Engine, create_engine, event, exc, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from app.errors import ConfigError
from app.settings import Settings

SQLITE_FILENAME = "ourobot.sqlite3"
SQLITE_BUSY_TIMEOUT_MS = 30_000

# Execution option choosing how a SQLite transaction begins. IMMEDIATE (the default) takes the
# write lock up front; DEFERRED suits read-only work that must not wait behind a writer.
SQLITE_BEGIN = "ourobot_sqlite_begin"
BEGIN_IMMEDIATE = "IMMEDIATE"
BEGIN_DEFERRED = "DEFERRED"
_BEGIN_MODES = frozenset({BEGIN_IMMEDIATE, BEGIN_DEFERRED})

_URL_VAR = "OUROBOT_DATABASE_URL"
_SUPPORTED = "use sqlite:///PATH or postgresql://USER@HOST/DB"


def database_url(settings: Settings) -> URL:
    """The URL to connect to: configured, or the SQLite file under the data directory."""
    if not settings.database_url:
        # Built rather than parsed, so a data directory containing '?' or '#' stays a path.
        return URL.create("sqlite", database=str(settings.data_dir / SQLITE_FILENAME))
    try:
        url = make_url(settings.effective_database_url)
    except exc.ArgumentError:
        raise ConfigError(f"{_URL_VAR}: not a database URL ({_SUPPORTED})") from None
    return _normalise(url)


def _normalise(url: URL) -> URL:
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg"):
        return url.set(drivername="postgresql+psycopg")
    if url.drivername in ("sqlite", "sqlite+pysqlite"):
        return url
    raise ConfigError(f"{_URL_VAR}: unsupported database '{url.drivername}' ({_SUPPORTED})")


def create_store_engine(settings: Settings) -> Engine:
    """An engine for ourobot's database; SQLite's directory is created, nothing is connected."""
    url = database_url(settings)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, configured=bool(settings.database_url))
    engine = create_engine(url, pool_pre_ping=True)
    _guard_against_fork(engine)
    return engine


def _sqlite_engine(url: URL, *, configured: bool) -> Engine:
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        _make_parent(Path(database), "OUROBOT_DATABASE_URL" if configured else "OUROBOT_DATA_DIR")
    engine = create_engine(url)
    writers = _WriterTurns()
    event.listen(engine, "connect", _configure_sqlite)
    event.listen(engine, "begin", writers.begin)
    event.listen(engine, "commit", writers.end)
    event.listen(engine, "rollback", writers.end)
    event.listen(engine, "reset", writers.reset)  # a connection back in the pool mid-transaction
    _guard_against_fork(engine)
    return engine


def _make_parent(path: Path, variable: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"{variable}: cannot create {path.parent}: {error.strerror}") from None


def _configure_sqlite(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # sqlite3's own transaction handling skips BEGIN before DDL; `_begin_sqlite` takes over.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # The timeout first: switching to WAL itself needs a lock another process may hold.
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    # Two connections switching a fresh file at once can deadlock on the lock upgrade; SQLite
    # then answers "database is locked" at once, without its busy handler. Retry, bounded.
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01 + random.random() * 0.04)  # noqa: S311 (jitter, not secrecy)


class _WriterTurns:
    """Write transactions of one process take turns on a lock before SQLite's own.

    SQLite makes a waiting writer poll, sleeping 1, 2, 5, 10... up to 100 ms between tries, so
    two threads of one process writing at once (the inbox writer and the embedded runner)
    turned into tens of milliseconds of tail latency. A thread lock hands the turn over at
    once. Other processes still meet at SQLite's lock and its busy timeout. A turn not taken
    within that timeout is not waited for longer: SQLite decides, as it would without this.
    """

    _HELD = "ourobot_write_turn"

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def begin(self, connection: Connection) -> None:
        mode = connection.get_execution_options().get(SQLITE_BEGIN, BEGIN_IMMEDIATE)
        if mode not in _BEGIN_MODES:
            raise ValueError(f"{SQLITE_BEGIN} must be one of {sorted(_BEGIN_MODES)}, not {mode!r}")
        if mode == BEGIN_IMMEDIATE and self._lock.acquire(timeout=SQLITE_BUSY_TIMEOUT_MS / 1000):
            connection.info[self._HELD] = True
        try:
            connection.exec_driver_sql(f"BEGIN {mode}")
        except BaseException:
            self.end(connection)
            raise

    def end(self, connection: Connection) -> None:
        if connection.info.pop(self._HELD, False):
            self._lock.release()

    def reset(self, _dbapi: DBAPIConnection, record: ConnectionPoolEntry, _state: Any) -> None:
        if record.info.pop(self._HELD, False):
            self._lock.release()


def _guard_against_fork(engine: Engine) -> None:
    """A forked child (Celery's prefork pool) must not reuse its parent's pooled connections.

    Sharing one connection between two processes corrupts the protocol stream (PostgreSQL) or
    the file locks (SQLite), so the child gets fresh connections and leaves the parent's alone.
    """

    def remember_pid(_dbapi: DBAPIConnection, record: ConnectionPoolEntry) -> None:
        record.info["pid"] = os.getpid()

    def refuse_inherited(
        _dbapi: DBAPIConnection, record: ConnectionPoolEntry, proxy: PoolProxiedConnection
    ) -> None:
        owner = record.info.get("pid")
        if owner is not None and owner != os.getpid():
            # Detach without closing: closing would disturb the parent's connection.
            # The interfaces declare these read-only; the pool's records allow the reset.
            cast(Any, record).dbapi_connection = None
            cast(Any, proxy).dbapi_connection = None
            raise exc.DisconnectionError(f"connection was opened by process {owner}")

    event.listen(engine, "connect", remember_pid)
    event.listen(engine, "checkout", refuse_inherited)
