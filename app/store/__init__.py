"""ourobot's database: engine, sessions, schema and versioned migrations.

Typical use in an entry point::

    store = Store.open(settings)
    store.migrate()
    with store.session() as session:
        kv.set_value(session, "halted", "yes")
"""

from app.store.engine import create_store_engine, database_url
from app.store.migrations import MIGRATIONS, Migration, current_version, latest_version, migrate
from app.store.session import Store, session_factory

__all__ = [
    "MIGRATIONS",
    "Migration",
    "Store",
    "create_store_engine",
    "current_version",
    "database_url",
    "latest_version",
    "migrate",
    "session_factory",
]
