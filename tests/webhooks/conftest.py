"""Fixtures for the receiver tests: a migrated SQLite inbox, in-process apps, a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import Settings
from app.store import Store
from app.webhooks.inbox import Inbox
from tests.webhooks.deliveries import SECRET
from tests.webhooks.serve_process import ServeProcess, serve_env


@pytest.fixture
def receiver_settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=None, webhook_secret=SECRET)


@pytest.fixture
def sqlite_inbox(receiver_settings: Settings) -> Iterator[Inbox]:
    store = Store.open(receiver_settings)
    store.migrate()
    try:
        yield Inbox(store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """One real `ourobot serve` (embedded mode, SQLite) shared by a test module."""
    scratch = tmp_path_factory.mktemp("serve")
    env = serve_env(scratch / "data", OUROBOT_WEBHOOK_SECRET=SECRET)
    server = ServeProcess(env, scratch / "serve.log").start()
    try:
        yield server
    finally:
        server.stop()
