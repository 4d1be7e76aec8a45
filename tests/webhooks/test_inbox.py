"""The durable inbox on SQLite and PostgreSQL: record/dedup, claims with leases, fail/retry,
and what the sweeper sees as overdue."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from app.store import Store
from app.store.schema import webhook_bodies, webhook_inbox
from app.webhooks import body_encoding
from app.webhooks.inbox import DONE, FAILED, PENDING, RUNNING, Delivery, Inbox, InboxRow


def _delivery(
    delivery_id: str = "d-1", event: str = "issues", action: str = "opened", **payload: object
) -> Delivery:
    body = json.dumps({"action": action, **payload}).encode()
    return Delivery(delivery_id, event, action, installation_id=42, body=body)


def _column(store: Store, row_id: int, name: str) -> object:
    with store.read_session() as session:
        return session.execute(
            select(webhook_inbox.c[name]).where(webhook_inbox.c.id == row_id)
        ).scalar_one()


def _age(store: Store, row_id: int, seconds: float) -> None:
    """Pretend the row arrived `seconds` ago."""
    with store.session() as session:
        session.execute(
            update(webhook_inbox)
            .where(webhook_inbox.c.id == row_id)
            .values(received_at=datetime.now(UTC) - timedelta(seconds=seconds))
        )


def test_record_keeps_the_exact_bytes_and_fields(store: Store) -> None:
    inbox = Inbox(store)
    body = b'{"action": "opened", "note": "caf\\u00e9 \xc3\xa9", "n": 1.50}'
    before = datetime.now(UTC)
    row_id = inbox.record(Delivery("d-1", "issues", "opened", installation_id=2**40, body=body))
    assert row_id is not None
    row = inbox.get(row_id)
    assert row is not None
    assert before - timedelta(seconds=5) <= row.received_at <= datetime.now(UTC)
    assert row.received_at.tzinfo is not None
    assert row == InboxRow(
        id=row_id,
        delivery_id="d-1",
        event="issues",
        action="opened",
        installation_id=2**40,
        body=body,
        state=PENDING,
        attempts=0,
        received_at=row.received_at,
    )
    assert row.payload()["note"] == "café é"


def test_bodies_are_stored_compressed_and_read_back_exactly(store: Store) -> None:
    inbox = Inbox(store)
    big = json.dumps({"action": "opened", "url": ["https://api.github.com/repos/o/r"] * 400})
    tiny = b"{}"
    big_id, tiny_id = inbox.record_many(
        [
            Delivery("big", "issues", "opened", 1, big.encode()),
            Delivery("tiny", "ping", "", 1, tiny),
        ]
    )
    with store.read_session() as session:
        stored = dict(
            session.execute(select(webhook_bodies.c.inbox_id, webhook_bodies.c.encoding)).all()
        )
        sizes = dict(
            session.execute(
                select(webhook_bodies.c.inbox_id, func.length(webhook_bodies.c.body))
            ).all()
        )
    # Compressed where that shrinks the body, as it is where it would not.
    assert stored == {big_id: body_encoding.LZ4, tiny_id: body_encoding.IDENTITY}
    assert sizes[big_id] < len(big) // 4
    assert [row.body for row in (inbox.get(big_id), inbox.get(tiny_id)) if row] == [
        big.encode(),
        tiny,
    ]
    assert inbox.bodies_of([big_id, tiny_id]) == {big_id: big.encode(), tiny_id: tiny}
    claimed = inbox.claim(big_id, lease_s=60)
    assert claimed is not None and claimed.payload()["url"][0].endswith("/o/r")


def test_a_body_in_an_unknown_encoding_is_refused_not_misread(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery("from-the-future"))
    assert row_id is not None
    with store.session() as session:
        session.execute(
            update(webhook_bodies)
            .where(webhook_bodies.c.inbox_id == row_id)
            .values(encoding="zstd")
        )
    with pytest.raises(body_encoding.UnknownEncoding, match="'zstd'"):
        inbox.get(row_id)


def test_get_of_an_unknown_row_is_none(store: Store) -> None:
    assert Inbox(store).get(12345) is None


def test_dedup_is_on_delivery_event_and_action(store: Store) -> None:
    inbox = Inbox(store)
    first = inbox.record(_delivery("d-1", "issues", "opened"))
    assert first is not None
    assert inbox.record(_delivery("d-1", "issues", "opened", other="body")) is None
    # GitHub shares one delivery id among the hooks of an event: other keys are other rows.
    others = [
        inbox.record(_delivery("d-1", "issues", "closed")),
        inbox.record(_delivery("d-1", "issue_comment", "opened")),
        inbox.record(_delivery("d-2", "issues", "opened")),
        inbox.record(Delivery("d-1", "push", "", None, b"{}")),
    ]
    assert None not in others
    assert len({first, *others}) == 5


def test_record_many_answers_in_order_with_repeats_inside_the_batch(store: Store) -> None:
    inbox = Inbox(store)
    known = inbox.record(_delivery("known"))
    answers = inbox.record_many(
        [_delivery("a"), _delivery("known"), _delivery("b"), _delivery("a"), _delivery("c")]
    )
    assert answers[1] is None and answers[3] is None
    new = [answers[0], answers[2], answers[4]]
    assert all(isinstance(row_id, int) for row_id in new)
    assert len({known, *new}) == 4
    assert inbox.record_many([]) == []
    for row_id, delivery_id in zip(new, ["a", "b", "c"], strict=True):
        assert row_id is not None
        row = inbox.get(row_id)
        assert row is not None and row.delivery_id == delivery_id


def test_a_batch_larger_than_one_statement_is_stored_whole(store: Store) -> None:
    inbox = Inbox(store)
    batch = [_delivery(f"big-{n}") for n in range(250)] + [_delivery("big-7")]
    answers = inbox.record_many(batch)
    assert answers[-1] is None  # a repeat of a delivery from an earlier statement
    stored = answers[:-1]
    assert all(isinstance(row_id, int) for row_id in stored)
    assert len(set(stored)) == 250
    rows = [inbox.get(row_id) for row_id in stored if row_id is not None]
    assert [row.delivery_id for row in rows if row is not None] == [f"big-{n}" for n in range(250)]


def test_a_batch_that_fails_halfway_stores_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction: a body the database refuses undoes the rows already inserted."""
    inbox = Inbox(store)
    encode = body_encoding.encode

    def refused_for_bad(body: bytes) -> tuple[bytes | None, str]:
        return (None, body_encoding.IDENTITY) if body == b"bad" else encode(body)

    monkeypatch.setattr(body_encoding, "encode", refused_for_bad)
    unstorable = Delivery("bad", "issues", "opened", installation_id=1, body=b"bad")
    with pytest.raises(Exception, match=r"(?i)null"):
        inbox.record_many([_delivery("first"), unstorable])
    monkeypatch.undo()
    with store.read_session() as session:
        assert session.execute(select(webhook_inbox.c.id)).all() == []
    assert inbox.record(_delivery("first")) is not None  # not a duplicate: it was never kept


def test_rows_recorded_in_a_batch_compare_by_time_like_any_other(store: Store) -> None:
    """Times are stored as the database layer stores them, so the sweeper's comparisons (and
    rows written by other code) agree with what the receiver wrote."""
    inbox = Inbox(store)
    before = datetime.now(UTC)
    [row_id] = inbox.record_many([_delivery("timed")])
    assert row_id is not None
    with store.read_session() as session:
        newer = session.execute(
            select(webhook_inbox.c.id).where(
                webhook_inbox.c.received_at >= before - timedelta(milliseconds=1)
            )
        ).all()
        older = session.execute(
            select(webhook_inbox.c.id).where(
                webhook_inbox.c.received_at < before - timedelta(seconds=1)
            )
        ).all()
    assert [found.id for found in newer] == [row_id]
    assert older == []


def test_claim_takes_a_pending_row_once_and_counts_attempts(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None
    claimed = inbox.claim(row_id, lease_s=60)
    assert claimed is not None
    assert (claimed.state, claimed.attempts) == (RUNNING, 1)
    assert inbox.claim(row_id, lease_s=60) is None  # leased by someone else
    assert inbox.claim(999_999, lease_s=60) is None


def test_an_expired_lease_can_be_claimed_again(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None
    assert inbox.claim(row_id, lease_s=0.05) is not None
    time.sleep(0.1)
    again = inbox.claim(row_id, lease_s=60)
    assert again is not None
    assert again.attempts == 2


def test_concurrent_claims_have_exactly_one_winner(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None
    start = threading.Barrier(8)
    winners: list[InboxRow] = []

    def claim() -> None:
        start.wait()
        claimed = inbox.claim(row_id, lease_s=60)
        if claimed is not None:
            winners.append(claimed)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1
    assert winners[0].attempts == 1


def test_finish_makes_a_row_done_and_unclaimable(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None and inbox.claim(row_id, lease_s=60) is not None
    inbox.finish(row_id)
    row = inbox.get(row_id)
    assert row is not None and row.state == DONE
    assert _column(store, row_id, "finished_at") is not None
    assert _column(store, row_id, "lease_until") is None
    assert inbox.claim(row_id, lease_s=60) is None


def test_a_retryable_failure_returns_the_row_to_pending(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None and inbox.claim(row_id, lease_s=60) is not None
    inbox.fail(row_id, "RequestFailed: 502", final=False)
    row = inbox.get(row_id)
    assert row is not None and (row.state, row.attempts) == (PENDING, 1)
    assert _column(store, row_id, "last_error") == "RequestFailed: 502"
    retried = inbox.claim(row_id, lease_s=60)
    assert retried is not None and retried.attempts == 2


def test_a_final_failure_stops_the_row_and_keeps_a_bounded_error(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None and inbox.claim(row_id, lease_s=60) is not None
    inbox.fail(row_id, "boom " * 2000, final=True)
    row = inbox.get(row_id)
    assert row is not None and row.state == FAILED
    error = _column(store, row_id, "last_error")
    assert isinstance(error, str) and error.startswith("boom") and len(error) == 2000
    assert inbox.claim(row_id, lease_s=60) is None
    assert inbox.overdue(older_than_s=0) == []


def test_a_late_failure_report_does_not_undo_done(store: Store) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(_delivery())
    assert row_id is not None and inbox.claim(row_id, lease_s=60) is not None
    inbox.finish(row_id)
    inbox.fail(row_id, "worker whose lease had expired", final=False)
    row = inbox.get(row_id)
    assert row is not None and row.state == DONE


def test_overdue_lists_old_pending_and_expired_running_rows_only(store: Store) -> None:
    inbox = Inbox(store)
    ids = {name: inbox.record(_delivery(name)) for name in ("old", "new", "lost", "busy", "done")}
    assert None not in ids.values()
    for name in ("old", "lost", "busy", "done"):
        _age(store, ids[name] or 0, 600)
    assert inbox.claim(ids["lost"] or 0, lease_s=0.01) is not None
    assert inbox.claim(ids["busy"] or 0, lease_s=3600) is not None
    assert inbox.claim(ids["done"] or 0, lease_s=3600) is not None
    inbox.finish(ids["done"] or 0)
    time.sleep(0.05)
    assert inbox.overdue(older_than_s=60) == sorted([ids["old"] or 0, ids["lost"] or 0])
    # `new` is pending but younger than the threshold: its dispatch may still be on the way.
    assert inbox.overdue(older_than_s=0) == sorted(
        [ids["old"] or 0, ids["new"] or 0, ids["lost"] or 0]
    )


def test_overdue_is_oldest_first_and_limited(store: Store) -> None:
    inbox = Inbox(store)
    row_ids = [inbox.record(_delivery(f"d-{n}")) for n in range(5)]
    for row_id in row_ids:
        _age(store, row_id or 0, 600)
    assert inbox.overdue(older_than_s=60, limit=3) == row_ids[:3]


@pytest.mark.parametrize("body", [b"[1, 2]", b"not json"])
def test_payload_of_a_row_that_is_not_an_object_raises(store: Store, body: bytes) -> None:
    inbox = Inbox(store)
    row_id = inbox.record(Delivery("d-1", "issues", "", None, body))
    assert row_id is not None
    row = inbox.get(row_id)
    assert row is not None
    with pytest.raises(ValueError):
        row.payload()
