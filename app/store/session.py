"""Sessions over the store's engine, and `Store`: the one object the rest of ourobot holds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.settings import Settings
from app.store.engine import BEGIN_DEFERRED, SQLITE_BEGIN, create_store_engine
from app.store.migrations import current_version, migrate


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions bound to `engine`. Loaded objects stay usable after commit (no expiry)."""
    return sessionmaker(bind=engine, expire_on_commit=False)


class Store:
    """An engine and its sessions: `with store.session() as s:` commits, or rolls back on error.

    Build one per process (after any fork) with `Store.open(settings)` and pass it down.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sessions = session_factory(engine)
        self._read_sessions = session_factory(
            engine.execution_options(**{SQLITE_BEGIN: BEGIN_DEFERRED})
        )

    @classmethod
    def open(cls, settings: Settings) -> Store:
        """A store for the configured database; connects only when first used."""
        return cls(create_store_engine(settings))

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back if it raises.

        On SQLite it holds the write lock from the start, so concurrent writers queue (up to
        the busy timeout) instead of failing halfway through.
        """
        with self.sessions.begin() as session:
            yield session

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        """A session for reading only: never waits for SQLite's write lock, never commits.

        Anything written in it is discarded when the block ends.
        """
        with self._read_sessions() as session:
            try:
                yield session
            finally:
                session.rollback()

    def migrate(self) -> list[int]:
        """Bring the schema up to date; see `app.store.migrations.migrate`."""
        return migrate(self.engine)

    def current_version(self) -> int:
        return current_version(self.engine)

    def close(self) -> None:
        """Close pooled connections (tests, shutdown); the store reconnects if used again."""
        self.engine.dispose()
