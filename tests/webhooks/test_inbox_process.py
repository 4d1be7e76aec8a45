"""The inbox process behind `ourobot serve`: a real child process, a real SQLite inbox."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from app.errors import ConfigError
from app.settings import Settings
from app.store import Store
from app.store.schema import webhook_inbox
from app.webhooks.delivery import BadDelivery, Received
from app.webhooks.inbox_process import InboxProcess, InboxUnavailable
from tests.webhooks import inbox_components

pytestmark = pytest.mark.slow


def delivery(name: str, event: str = "issues") -> Received:
    return Received(name, event, b'{"action": "opened", "installation": {"id": 7}}')


@pytest.fixture
def store(receiver_settings: Settings) -> Iterator[Store]:
    opened = Store.open(receiver_settings)
    opened.migrate()
    yield opened
    opened.close()


@pytest.fixture
def inbox_process(receiver_settings: Settings, store: Store) -> Iterator[InboxProcess]:
    process = InboxProcess(receiver_settings, inbox_components.marking)
    process.start()
    yield process
    process.close()


def stored(store: Store) -> list[str]:
    with store.read_session() as session:
        return list(session.execute(select(webhook_inbox.c.delivery_id)).scalars())


def test_records_in_the_child_and_answers_ids_and_duplicates(
    inbox_process: InboxProcess, store: Store
) -> None:
    async def scenario() -> list[int | None]:
        first = await inbox_process.record(delivery("a"))
        again = await inbox_process.record(delivery("a"))
        other = await inbox_process.record(delivery("a", event="issue_comment"))
        return [first, again, other]

    first, again, other = asyncio.run(scenario())
    assert isinstance(first, int) and isinstance(other, int) and first != other
    assert again is None
    assert inbox_process.pid not in (None, os.getpid())
    assert sorted(stored(store)) == ["a", "a"]


def test_a_body_that_is_no_delivery_is_refused_by_the_child_and_not_stored(
    inbox_process: InboxProcess, store: Store
) -> None:
    async def scenario() -> None:
        with pytest.raises(BadDelivery, match="not a JSON object"):
            await inbox_process.record(Received("bad", "issues", b"[1, 2]"))
        assert await inbox_process.record(delivery("good")) is not None

    asyncio.run(scenario())
    assert stored(store) == ["good"]


def test_many_concurrent_requests_each_get_their_own_answer(
    inbox_process: InboxProcess, store: Store
) -> None:
    async def scenario() -> list[int | None]:
        return await asyncio.gather(*(inbox_process.record(delivery(f"d{i}")) for i in range(300)))

    answers = asyncio.run(scenario())
    assert len(set(answers)) == 300 and None not in answers
    assert len(stored(store)) == 300


def test_the_inline_hook_has_run_when_the_answer_arrives(
    inbox_process: InboxProcess, receiver_settings: Settings
) -> None:
    marks = Path(receiver_settings.data_dir) / inbox_components.MARKER_DIR

    async def scenario() -> None:
        for name in ("p1", "p2", "p3"):
            await inbox_process.record(delivery(name))
            assert (marks / name).read_text() == "issues"  # before the next await, not later

    asyncio.run(scenario())


def test_a_killed_child_fails_its_requests_then_is_replaced(
    inbox_process: InboxProcess, store: Store
) -> None:
    async def record(name: str) -> int | None:
        return await inbox_process.record(delivery(name))

    async def scenario() -> tuple[list[str], int | None]:
        assert await record("before") is not None
        assert inbox_process.alive()
        old = inbox_process.pid
        assert old is not None
        os.kill(old, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while inbox_process.alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not inbox_process.alive()  # /healthz answers 503 meanwhile
        failures = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                answer = await record(f"after-{len(failures)}")
            except InboxUnavailable as error:
                failures.append(str(error))
                await asyncio.sleep(0.1)
                continue
            assert inbox_process.pid != old
            assert inbox_process.alive()
            return failures, answer
        raise AssertionError(f"no new inbox process within 30 s: {failures[-3:]}")

    failures, answer = asyncio.run(scenario())
    assert failures, "the dead child's requests must fail (503), not hang or pass"
    assert all("inbox process" in failure for failure in failures)
    assert answer is not None
    # nothing recorded twice or lost: what was answered with an id is in the inbox
    assert "before" in stored(store)


def test_a_dead_child_is_replaced_even_when_no_delivery_comes(
    inbox_process: InboxProcess,
) -> None:
    old = inbox_process.pid
    assert old is not None
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if inbox_process.alive() and inbox_process.pid != old:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the inbox process was not replaced within 30 s")
    assert asyncio.run(inbox_process.record(delivery("after-quiet-restart"))) is not None


def test_close_lets_the_child_finish_what_it_was_sent(
    receiver_settings: Settings, store: Store
) -> None:
    process = InboxProcess(receiver_settings, inbox_components.nothing)
    process.start()

    async def scenario() -> list[int | None]:
        return await asyncio.gather(*(process.record(delivery(f"c{i}")) for i in range(50)))

    answers = asyncio.run(scenario())
    pid = process.pid
    process.close()
    assert None not in answers
    assert len(stored(store)) == 50
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, not left behind


def test_a_child_that_cannot_start_is_one_clear_error(
    receiver_settings: Settings, store: Store
) -> None:
    process = InboxProcess(receiver_settings, inbox_components.broken)
    with pytest.raises(ConfigError, match="inbox process exited while starting"):
        process.start()
