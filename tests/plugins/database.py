"""Database fixtures: a fresh SQLite data directory, a fresh PostgreSQL database, and a migrated
`store` over every backend this machine has.

PostgreSQL comes from `OUROBOT_TEST_POSTGRES_URL` (default
postgresql://postgres@127.0.0.1:5432/postgres): a maintenance database whose user may create
databases. Each test gets its own `ourobot_test_<random>` database, dropped afterwards. Where
no server answers, PostgreSQL cases skip with a one-line reason.

Fixtures:
  sqlite_settings    Settings with a fresh data dir (not created yet), default SQLite database
  sqlite_store       a migrated SQLite `app.store.Store` under that data dir, closed afterwards
  postgres_url       URL (postgresql://...) of a fresh, empty PostgreSQL database
  postgres_settings  Settings pointing at `postgres_url`
  database_settings  parametrised over sqlite|postgresql: Settings for a fresh, unmigrated database
  store              parametrised likewise: a migrated `app.store.Store`, closed afterwards
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy import make_url

from app.settings import Settings
from app.store import Store

POSTGRES_URL_VARIABLE = "OUROBOT_TEST_POSTGRES_URL"
DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
BACKENDS = ("sqlite", "postgresql")


def _admin_connection(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True, connect_timeout=3)


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    """The maintenance database URL; skips (once per session) when nothing answers there."""
    url = os.environ.get(POSTGRES_URL_VARIABLE) or DEFAULT_POSTGRES_URL
    try:
        with _admin_connection(url) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        where = make_url(url).render_as_string(hide_password=True)
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        first_line = first_line.removeprefix("connection failed: ")
        pytest.skip(
            f"PostgreSQL not reachable at {where} (set {POSTGRES_URL_VARIABLE}): {first_line}"
        )
    return url


@pytest.fixture
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    name = f"ourobot_test_{secrets.token_hex(6)}"
    with _admin_connection(postgres_admin_url) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_url(postgres_admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        # FORCE (PostgreSQL 13+): a test that leaked a connection must not leak the database.
        with _admin_connection(postgres_admin_url) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def sqlite_settings(tmp_path: Path) -> Settings:
    # Explicit None: an OUROBOT_DATABASE_URL in the developer's shell must not leak in.
    return Settings(data_dir=tmp_path / "data", database_url=None)


@pytest.fixture
def sqlite_store(sqlite_settings: Settings) -> Iterator[Store]:
    """A migrated SQLite store under a fresh data directory (what workers share with serve)."""
    opened = Store.open(sqlite_settings)
    opened.migrate()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def postgres_settings(tmp_path: Path, postgres_url: str) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=postgres_url)


@pytest.fixture(params=BACKENDS)
def database_settings(request: pytest.FixtureRequest) -> Settings:
    """Settings for a fresh, unmigrated database on each backend (PostgreSQL may skip)."""
    fixture = "sqlite_settings" if request.param == "sqlite" else "postgres_settings"
    settings: Settings = request.getfixturevalue(fixture)
    return settings


@pytest.fixture
def store(database_settings: Settings) -> Iterator[Store]:
    """A migrated store on each backend; its connections are closed afterwards."""
    opened = Store.open(database_settings)
    try:
        opened.migrate()
        yield opened
    finally:
        opened.close()
