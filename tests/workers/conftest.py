"""Fixtures for the worker tests: private Redis servers and stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import Settings
from app.store import Store
from tests.workers.processes import REDIS_SERVER, RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """A migrated SQLite store under a fresh data directory (what workers share with serve)."""
    store = Store.open(Settings(data_dir=tmp_path / "data", database_url=None))
    store.migrate()
    try:
        yield store
    finally:
        store.close()
