"""Opening the store from a command: migrated, and an unreachable database is one line (exit 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.errors import ConfigError
from app.settings import Settings

if TYPE_CHECKING:
    from app.store import Store


def open_store(settings: Settings) -> Store:
    from sqlalchemy.exc import OperationalError

    from app.store import Store

    store = Store.open(settings)
    try:
        store.migrate()
    except OperationalError as error:
        store.close()
        first = (str(error.orig).strip().splitlines() or ["unreachable"])[0]
        raise ConfigError(f"OUROBOT_DATABASE_URL: cannot open the database: {first}") from None
    return store
