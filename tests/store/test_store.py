"""The store: engine settings per backend, versioned migrations (including several processes
racing to apply them), and sessions that commit or roll back.

Backend-parametrised tests run on SQLite and, where reachable, PostgreSQL
(fixtures in tests/plugins/database.py, registered in tests/conftest.py).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import (
    Column,
    Connection,
    Engine,
    ForeignKey,
    Integer,
    MetaData,
    Table,
    delete,
    exc,
    insert,
    inspect,
    select,
    text,
    update,
)

from app.errors import ConfigError
from app.settings import Settings
from app.store import MIGRATIONS, Migration, Store, create_store_engine, kv, latest_version
from app.store.engine import SQLITE_BUSY_TIMEOUT_MS
from app.store.migrations import current_version, migrate
from app.store.schema import kv as kv_table
from app.store.schema import metadata, schema_version
from app.webhooks.inbox import Inbox


@pytest.fixture
def engine(database_settings: Settings) -> Iterator[Engine]:
    built = create_store_engine(database_settings)
    try:
        yield built
    finally:
        built.dispose()


# ---- extra migrations used to exercise the runner (appended after the real ones) ----


def _create_probe(connection: Connection) -> None:
    probe = Table("probe", MetaData(), Column("version", Integer, nullable=False))
    probe.create(connection)
    connection.execute(text("INSERT INTO probe (version) VALUES (:v)"), {"v": len(MIGRATIONS) + 1})


def _record_in_probe(version: int) -> Migration:
    def upgrade(connection: Connection) -> None:
        time.sleep(0.1)  # widen the window in which an unlocked runner would apply it twice
        connection.execute(text("INSERT INTO probe (version) VALUES (:v)"), {"v": version})

    return Migration(version, f"probe {version}", upgrade)


def probe_migrations() -> tuple[Migration, ...]:
    first = len(MIGRATIONS) + 1
    return (
        *MIGRATIONS,
        Migration(first, "probe table", _create_probe),
        _record_in_probe(first + 1),
        _record_in_probe(first + 2),
    )


def _fail_halfway(connection: Connection) -> None:
    Table("half_done", MetaData(), Column("id", Integer, primary_key=True)).create(connection)
    raise RuntimeError("migration failed halfway")


def _recorded_versions(engine: Engine) -> list[tuple[int, str]]:
    with engine.connect() as connection:
        rows = connection.execute(
            select(schema_version.c.version, schema_version.c.name).order_by("version")
        )
        return [(version, name) for version, name in rows]


# ---- engine ----


def test_default_database_is_a_wal_sqlite_file_under_the_data_dir(tmp_path: Path) -> None:
    # '?' and '#' would be read as URL syntax if the path were pasted into a URL string.
    data_dir = tmp_path / "not yet" / "data ?#"
    engine = create_store_engine(Settings(data_dir=data_dir, database_url=None))
    database_file = data_dir / "ourobot.sqlite3"
    assert data_dir.is_dir()
    assert not database_file.exists(), "creating the engine must not connect"
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            busy_timeout = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
            assert busy_timeout == SQLITE_BUSY_TIMEOUT_MS
        assert database_file.is_file()
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bot@127.0.0.1:1/ourobot",
        "postgres://bot@127.0.0.1:1/ourobot",
        "postgresql+psycopg://bot@127.0.0.1:1/ourobot",
    ],
)
def test_postgres_urls_use_psycopg3_without_connecting(tmp_path: Path, url: str) -> None:
    engine = create_store_engine(Settings(data_dir=tmp_path, database_url=url))
    # Port 1 has no server: had the engine connected, this test would have failed above.
    assert engine.url.drivername == "postgresql+psycopg"
    assert (engine.url.host, engine.url.port, engine.url.database) == ("127.0.0.1", 1, "ourobot")


@pytest.mark.parametrize(
    "url",
    [
        "mysql://bot:hunter2@127.0.0.1/ourobot",
        "postgresql+psycopg2://bot:hunter2@127.0.0.1/ourobot",
        "hunter2 is not a url",
    ],
)
def test_unusable_database_url_is_a_one_line_config_error(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError) as raised:
        create_store_engine(Settings(data_dir=tmp_path, database_url=url))
    message = str(raised.value)
    assert message.startswith("OUROBOT_DATABASE_URL: ")
    assert "\n" not in message
    assert "hunter2" not in message, "the error must not echo credentials"


def test_uncreatable_data_dir_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"^OUROBOT_DATA_DIR: cannot create .*a-file"):
        create_store_engine(Settings(data_dir=blocker / "data", database_url=None))


def test_sqlite_enforces_foreign_keys(sqlite_settings: Settings) -> None:
    engine = create_store_engine(sqlite_settings)
    tables = MetaData()
    Table("parent", tables, Column("id", Integer, primary_key=True))
    child = Table("child", tables, Column("parent_id", Integer, ForeignKey("parent.id")))
    try:
        with engine.begin() as connection:
            tables.create_all(connection)
        with pytest.raises(exc.IntegrityError), engine.begin() as connection:
            connection.execute(insert(child).values(parent_id=42))
    finally:
        engine.dispose()


def test_sqlite_writer_queues_behind_a_lock_and_reader_does_not(sqlite_settings: Settings) -> None:
    store = Store.open(sqlite_settings)
    other = create_store_engine(sqlite_settings)
    store.migrate()
    locked, release = threading.Event(), threading.Event()

    def hold_write_lock() -> None:
        with other.begin() as connection:  # BEGIN IMMEDIATE: the write lock
            connection.execute(insert(kv_table).values(key="held", value="1", updated_at=_now()))
            locked.set()
            release.wait(10)

    holder = threading.Thread(target=hold_write_lock)
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        with store.read_session() as session:
            assert kv.get_value(session, "held") is None  # not committed yet
        assert time.monotonic() - started < 0.5, "a reader must not wait for the writer"
        threading.Timer(0.5, release.set).start()
        with store.session() as session:
            kv.set_value(session, "after", "2")
        assert time.monotonic() - started >= 0.4, "the writer should have waited for the lock"
        with store.read_session() as session:
            assert kv.all_values(session) == {"after": "2", "held": "1"}
    finally:
        release.set()
        holder.join(10)
        store.close()
        other.dispose()


def test_writers_of_one_process_take_turns_and_an_abandoned_one_gives_its_turn_back(
    sqlite_settings: Settings,
) -> None:
    store = Store.open(sqlite_settings)
    store.migrate()
    holding, release = threading.Event(), threading.Event()
    waited: list[float] = []

    def hold() -> None:
        with store.session() as session:
            kv.set_value(session, "first", "1")
            holding.set()
            release.wait(10)

    def second() -> None:
        started = time.monotonic()
        with store.session() as session:
            kv.set_value(session, "second", "2")
        waited.append(time.monotonic() - started)

    holder, follower = threading.Thread(target=hold), threading.Thread(target=second)
    holder.start()
    try:
        assert holding.wait(10)
        follower.start()
        time.sleep(0.3)
        assert not waited, "the second writer must wait for the first"
        release.set()
        follower.join(10)
        assert waited and waited[0] >= 0.3
        # An abandoned transaction gives its turn back (else the next writer waits 30 s).
        connection = store.engine.connect()
        connection.begin()
        connection.close()
        started = time.monotonic()
        with store.session() as session:
            kv.set_value(session, "third", "3")
        assert time.monotonic() - started < 1.0
        with store.read_session() as session:
            assert kv.all_values(session) == {"first": "1", "second": "2", "third": "3"}
    finally:
        release.set()
        holder.join(10)
        store.close()


def _report_connection_owner(
    engine: Engine, results: multiprocessing.Queue[tuple[int, int]]
) -> None:
    with engine.connect() as connection:
        connection.exec_driver_sql("SELECT 1")
        results.put((os.getpid(), connection.connection._connection_record.info["pid"]))


def test_forked_child_does_not_reuse_the_parents_connection(sqlite_settings: Settings) -> None:
    engine = create_store_engine(sqlite_settings)
    with engine.connect() as connection:
        connection.exec_driver_sql("SELECT 1")  # the pool now holds a connection of this process
    context = multiprocessing.get_context("fork")
    results: multiprocessing.Queue[tuple[int, int]] = context.Queue()
    child = context.Process(target=_report_connection_owner, args=(engine, results))
    child.start()
    try:
        child_pid, owner_pid = results.get(timeout=30)
    finally:
        child.join(30)
    assert child.exitcode == 0
    assert owner_pid == child_pid
    with engine.connect() as connection:  # the parent's own connection still works
        assert connection.exec_driver_sql("SELECT 1").scalar() == 1
    engine.dispose()


# ---- migrations ----


def test_fresh_database_is_at_version_zero(engine: Engine) -> None:
    assert current_version(engine) == 0


def test_migrate_applies_everything_once_and_records_it(engine: Engine) -> None:
    before = datetime.now(UTC)
    assert migrate(engine) == list(range(1, latest_version() + 1))
    assert migrate(engine) == []
    assert current_version(engine) == latest_version()
    assert _recorded_versions(engine) == [(step.version, step.name) for step in MIGRATIONS]
    with engine.connect() as connection:
        applied_at = connection.execute(select(schema_version.c.applied_at)).scalars().all()
    assert all(
        before - timedelta(seconds=5) <= moment <= datetime.now(UTC) for moment in applied_at
    )
    assert all(moment.tzinfo is not None for moment in applied_at)


def test_migrated_database_matches_schema_module(engine: Engine) -> None:
    migrate(engine)
    dialect = engine.dialect
    inspector = inspect(engine)
    assert set(inspector.get_table_names()) == set(metadata.tables)
    for table in metadata.sorted_tables:
        reflected = {column["name"]: column for column in inspector.get_columns(table.name)}
        assert set(reflected) == set(table.columns.keys()), table.name
        for column in table.columns:
            found = reflected[column.name]
            where = f"{table.name}.{column.name}"
            assert found["type"].compile(dialect) == column.type.compile(dialect), where
            assert found["nullable"] == column.nullable, where
        primary_key = inspector.get_pk_constraint(table.name)["constrained_columns"]
        assert primary_key == [column.name for column in table.primary_key.columns]


def test_moving_the_bodies_out_keeps_every_stored_delivery(engine: Engine) -> None:
    migrate(engine, MIGRATIONS[:3])
    with engine.begin() as connection:
        for number, body in enumerate([b'{"a": 1}', b"x" * 30_000]):
            connection.execute(
                text(
                    "INSERT INTO webhook_inbox (delivery_id, event, action, body, received_at,"
                    " state, attempts) VALUES (:d, 'issues', 'opened', :b, :t, 'done', 1)"
                ),
                {"d": f"old-{number}", "b": body, "t": _now()},
            )
    assert migrate(engine, MIGRATIONS[:4]) == [4]
    # and, once bodies say how they are encoded, the bodies already there read as they were
    assert migrate(engine, MIGRATIONS[:5]) == [5]
    store = Store(engine)
    rows = [Inbox(store).get(row_id) for row_id in (1, 2)]
    assert [(row.delivery_id, row.body, row.state) for row in rows if row] == [
        ("old-0", b'{"a": 1}', "done"),
        ("old-1", b"x" * 30_000, "done"),
    ]
    assert "body" not in {column["name"] for column in inspect(engine).get_columns("webhook_inbox")}


def test_database_newer_than_the_code_is_refused(engine: Engine) -> None:
    migrate(engine)
    with engine.begin() as connection:
        connection.execute(
            insert(schema_version).values(version=999, name="from the future", applied_at=_now())
        )
    expected = (
        f"database schema is at version 999, this ourobot knows up to {latest_version()}: "
        "upgrade ourobot"
    )
    with pytest.raises(ConfigError) as raised:
        migrate(engine)
    assert str(raised.value) == expected


def test_a_gap_in_the_record_is_refused(engine: Engine) -> None:
    steps = probe_migrations()
    migrate(engine, steps)
    missing = len(MIGRATIONS) + 1
    with engine.begin() as connection:
        connection.execute(delete(schema_version).where(schema_version.c.version == missing))
    with pytest.raises(ConfigError, match=rf"inconsistent.*odd: {missing}\)") as raised:
        migrate(engine, steps)
    assert "\n" not in str(raised.value)


def test_a_renamed_migration_is_refused(engine: Engine) -> None:
    migrate(engine)
    with engine.begin() as connection:
        connection.execute(
            update(schema_version).where(schema_version.c.version == 1).values(name="other")
        )
    with pytest.raises(ConfigError, match=r"version 1 was applied as 'other', this ourobot calls"):
        migrate(engine)


def test_a_failing_migration_leaves_no_trace_and_can_be_retried(engine: Engine) -> None:
    broken = len(MIGRATIONS) + 1
    with pytest.raises(RuntimeError, match="halfway"):
        migrate(engine, (*MIGRATIONS, Migration(broken, "broken", _fail_halfway)))
    assert current_version(engine) == len(MIGRATIONS)
    assert not inspect(engine).has_table("half_done"), "the failed step's DDL must roll back"
    assert migrate(engine, probe_migrations()) == [broken, broken + 1, broken + 2]


@pytest.mark.parametrize(
    "steps",
    [
        (Migration(1, "one", _create_probe), Migration(3, "three", _create_probe)),
        (Migration(1, "", _create_probe),),
        (Migration(1, "two\nlines", _create_probe),),
    ],
    ids=["gap", "empty-name", "multi-line-name"],
)
def test_malformed_migration_list_is_rejected_before_touching_the_database(
    sqlite_settings: Settings, steps: Sequence[Migration]
) -> None:
    engine = create_store_engine(sqlite_settings)
    try:
        with pytest.raises(ValueError, match="migration"):
            migrate(engine, steps)
        assert current_version(engine) == 0
    finally:
        engine.dispose()


def _migrate_in_child(
    data_dir: str,
    database_url: str | None,
    ready: threading.Barrier,
    results: multiprocessing.Queue[tuple[list[int], str]],
) -> None:
    engine = create_store_engine(Settings(data_dir=Path(data_dir), database_url=database_url))
    try:
        ready.wait(60)
        results.put((migrate(engine, probe_migrations()), ""))
    except Exception as error:
        results.put(([], f"{type(error).__name__}: {error}"))
    finally:
        engine.dispose()


@pytest.mark.slow
def test_concurrent_migrate_from_four_processes_applies_each_step_once(
    database_settings: Settings,
) -> None:
    workers = 4
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(workers)
    results: multiprocessing.Queue[tuple[list[int], str]] = context.Queue()
    arguments = (str(database_settings.data_dir), database_settings.database_url, ready, results)
    processes = [context.Process(target=_migrate_in_child, args=arguments) for _ in range(workers)]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=120) for _ in processes]
    except queue.Empty:
        pytest.fail("a migrating process did not report within 120 s")
    finally:
        for process in processes:
            process.join(30)
    assert [error for _, error in outcomes if error] == []
    applied = sorted(version for versions, _ in outcomes for version in versions)
    expected = [step.version for step in probe_migrations()]
    assert applied == expected, "every migration exactly once across all processes"
    engine = create_store_engine(database_settings)
    try:
        assert [version for version, _ in _recorded_versions(engine)] == expected
        with engine.connect() as connection:
            probe = connection.exec_driver_sql("SELECT version FROM probe ORDER BY version")
            assert probe.scalars().all() == expected[len(MIGRATIONS) :]
    finally:
        engine.dispose()


# ---- sessions ----


def _now() -> datetime:
    return datetime.now(UTC)


def test_kv_round_trip_through_sessions(store: Store) -> None:
    with store.session() as session:
        kv.set_value(session, "halted", "no")
        kv.set_value(session, "halted", "yes")
        kv.set_value(session, "note", "x")
    with store.session() as session:
        assert kv.get_value(session, "halted") == "yes"
        assert kv.all_values(session) == {"halted": "yes", "note": "x"}
        assert kv.delete_value(session, "note") is True
        assert kv.delete_value(session, "note") is False
        assert kv.get_value(session, "note") is None


def _write_two_values_then_fail(store: Store) -> None:
    with store.session() as session:
        kv.set_value(session, "first", "1")
        session.flush()
        kv.set_value(session, "second", "2")
        raise LookupError("boom")


def test_session_rolls_back_everything_when_the_block_raises(store: Store) -> None:
    with pytest.raises(LookupError):
        _write_two_values_then_fail(store)
    with store.session() as session:
        assert kv.all_values(session) == {}


def test_read_session_discards_writes(store: Store) -> None:
    with store.read_session() as session:
        kv.set_value(session, "scratch", "1")
        assert kv.get_value(session, "scratch") == "1"
    with store.read_session() as session:
        assert kv.get_value(session, "scratch") is None


def test_timestamps_come_back_as_utc_and_naive_ones_are_refused(store: Store) -> None:
    plus_two = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    with store.session() as session:
        kv.set_value(session, "k", "v", now=plus_two)
    with store.session() as session:
        stored = session.execute(select(kv_table.c.updated_at)).scalar_one()
    assert stored == plus_two
    assert stored.tzinfo == UTC
    with pytest.raises(exc.StatementError, match="naive datetime"), store.session() as session:
        kv.set_value(session, "k", "w", now=datetime(2030, 1, 2))
