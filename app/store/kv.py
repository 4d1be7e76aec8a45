"""The operator key/value table: small shared settings every process must see alike."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.store.schema import kv


def get_value(session: Session, key: str) -> str | None:
    return session.execute(select(kv.c.value).where(kv.c.key == key)).scalar_one_or_none()


def set_value(session: Session, key: str, value: str, *, now: datetime | None = None) -> None:
    """Insert or replace `key`, atomically even when two processes set it at once."""
    values = {"key": key, "value": value, "updated_at": now or datetime.now(UTC)}
    upsert = (
        postgresql.insert(kv)
        if session.get_bind().dialect.name == "postgresql"
        else sqlite.insert(kv)
    )
    session.execute(
        upsert.values(values).on_conflict_do_update(
            index_elements=[kv.c.key],
            set_={"value": values["value"], "updated_at": values["updated_at"]},
        )
    )


def delete_value(session: Session, key: str) -> bool:
    """Remove `key`; says whether it was there."""
    deleted = session.execute(delete(kv).where(kv.c.key == key).returning(kv.c.key))
    return deleted.first() is not None


def all_values(session: Session) -> dict[str, str]:
    rows = session.execute(select(kv.c.key, kv.c.value).order_by(kv.c.key))
    return {key: value for key, value in rows}
