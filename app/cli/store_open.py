"""What the operator views read, opened from a command: the store (migrated; an unreachable
database is one line, exit 2) and, in Redis mode, a Redis client and the Celery queue names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.errors import ConfigError
from app.settings import Settings

if TYPE_CHECKING:
    from app.store import Store


def open_store(settings: Settings, *, reading: bool = False) -> Store:
    """The store, migrated. `reading` (ledger, status, patterns): a SQLite store's folder must
    exist already; a typo in OUROBOT_DATA_DIR is said, not answered from a new empty store."""
    from sqlalchemy.exc import OperationalError

    from app.store import Store

    if reading and not settings.database_url and not settings.data_dir.is_dir():
        raise ConfigError(
            f"OUROBOT_DATA_DIR {settings.data_dir}: no such folder, so no ledger to read "
            "(ourobot serve and ourobot cycle write one there; a kept demo's is DIR/ourobot-data)"
        )

    store = Store.open(settings)
    try:
        store.migrate()
    except OperationalError as error:
        store.close()
        first = (str(error.orig).strip().splitlines() or ["unreachable"])[0]
        raise ConfigError(f"OUROBOT_DATABASE_URL: cannot open the database: {first}") from None
    return store


def status_redis(url: str | None, queue: str) -> tuple[Any, tuple[str, ...]]:
    """A Redis client for status reads and the queues to measure (None, () without Redis)."""
    if not url:
        return None, ()
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # One quick try: a status read reports a Redis it cannot reach rather than waiting on it.
    client = redis.Redis.from_url(
        url, socket_connect_timeout=2, socket_timeout=2, retry=Retry(NoBackoff(), 0)
    )
    return client, (queue,)
