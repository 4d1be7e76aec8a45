"""What the operator reads back from the store: the ledger by filter, the pattern register and
the status snapshot, over SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.controls.halt import HaltRegistry, installation_scope
from app.controls.ledger import Ledger, Outcome, Subject
from app.controls.ledger_query import (
    LedgerFilter,
    parse_outcome,
    parse_ticket,
    parse_time,
    search,
)
from app.controls.overview import overview_dict, read_overview
from app.controls.patterns import read_register
from app.errors import UserError
from app.settings import Settings
from app.webhooks.inbox import Delivery, Inbox
from tests.plugins.ledger_seed import HOSTILE_REASON, HOSTILE_REPO, INSTALLATION, REPO, seed_ledger

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def ids(entries):
    return [entry.id for entry in entries]


def test_filters_by_repo_ticket_outcome_kind_and_time(store):
    seeded = seed_ledger(store, NOW).ids
    everything = search(store, LedgerFilter())
    assert len(everything) == len(seeded)
    # Oldest first by time: the failed fetch two days ago was written last.
    assert ids(everything) == [seeded["fetch"], *sorted(set(seeded.values()) - {seeded["fetch"]})]
    assert HOSTILE_REPO not in {e.repo for e in search(store, LedgerFilter(repo=REPO))}
    # Ticket 1's own rows carry its key; PR 2's rows carry the number 2.
    assert ids(search(store, LedgerFilter(repo=REPO, number=1))) == [seeded["cycle1"]]
    assert ids(search(store, LedgerFilter(repo=REPO, number=2))) == [
        seeded["review-reject"],
        seeded["review-approve"],
        seeded["merge2"],
    ]
    merged = search(store, LedgerFilter(outcomes=(parse_outcome("merged"),)))
    assert ids(merged) == [seeded["merge2"]]
    rejected = LedgerFilter(outcomes=(("review", "rejected"), ("execution", "ok")))
    assert ids(search(store, rejected)) == [seeded["review-reject"]]
    cycles = search(store, LedgerFilter(kinds=("cycle",), outcomes=(("objective", "unmet"),)))
    assert ids(cycles) == [seeded["blocked3"], seeded["blocked4"]]
    recent = search(store, LedgerFilter(since=NOW - timedelta(hours=1)))
    assert ids(recent) == [seeded["blocked4"], seeded["merge6"], seeded["cycle5"]]
    old = search(store, LedgerFilter(until=NOW - timedelta(days=1)))
    assert ids(old) == [seeded["fetch"]]
    assert ids(search(store, LedgerFilter(limit=2))) == [seeded["merge6"], seeded["cycle5"]]


@pytest.mark.parametrize(
    ("word", "problem"),
    [
        ("mergedd", "not an outcome"),
        ("review=merged", "review is one of"),
        ("colour=red", "unknown axis"),
    ],
)
def test_a_bad_outcome_is_a_user_error_naming_it(word, problem):
    with pytest.raises(UserError, match=problem):
        parse_outcome(word)


def test_tickets_and_times_are_parsed_or_refused():
    assert parse_ticket("octo/demo#4", None) == ("octo/demo", 4)
    assert parse_ticket("4", "octo/demo") == ("octo/demo", 4)
    with pytest.raises(UserError, match="needs --repo"):
        parse_ticket("4", None)
    with pytest.raises(UserError, match="another repository"):
        parse_ticket("a/b#4", "octo/demo")
    with pytest.raises(UserError, match="expected owner/name#N"):
        parse_ticket("#4; rm -rf /", None)
    assert parse_time("24h", now=NOW, option="--since") == NOW - timedelta(hours=24)
    assert parse_time("2026-11-30", now=NOW, option="--since") == datetime(2026, 11, 30, tzinfo=UTC)
    with pytest.raises(UserError, match="--until 'soon'"):
        parse_time("soon", now=NOW, option="--until")


def test_the_pattern_register_counts_classes_with_first_and_last_examples(store):
    seeded = seed_ledger(store, NOW).ids
    register = {p.error_class: p for p in read_register(store)}
    assert {name: p.count for name, p in register.items()} == {
        "iterations": 2,
        "refusal:deletions": 2,
        "merge:head-moved": 1,
        "review:fetch": 1,
    }
    deletions = register["refusal:deletions"]
    assert (deletions.first.ledger_id, deletions.last.ledger_id) == (
        seeded["blocked3"],
        seeded["blocked4"],
    )
    assert deletions.first.text == f"INSTALL.md: {HOSTILE_REASON}"
    assert deletions.last.text == "INSTALL.md: lost 230 lines"
    assert deletions.status == "recurring"
    assert register["merge:head-moved"].status == "seen-once"
    # A rejected review is the panel doing its job, and a merge that landed is no failure.
    assert not any(name.startswith(("review:rejected", "merge:merged")) for name in register)
    only_other = read_register(store, repo=HOSTILE_REPO)
    assert [p.error_class for p in only_other] == ["review:fetch"]
    assert read_register(store, since=NOW - timedelta(minutes=45)) and all(
        p.error_class == "merge:head-moved"
        for p in read_register(store, since=NOW - timedelta(minutes=45))
    )


def test_a_blocked_cycle_without_a_class_is_counted_by_its_outcome(store):
    Ledger(store).record(
        "cycle", Subject("cycle:x#1", repo="x/y", number=1, ticket="x/y#1"),
        Outcome("ok", "unmet"), detail={"outcome": "needs-human", "reason": "review rejected"},
    )  # fmt: skip
    [pattern] = read_register(store)
    assert (pattern.error_class, pattern.first.text) == ("cycle:needs-human", "review rejected")


def test_the_ticket_jobs_per_iteration_refusals_count_once_per_rule_and_iteration(store):
    iterations = [
        {"number": n, "refusals": ["deletions -", "deletions INSTALL.md"], "tests": "not-run"}
        for n in (1, 2, 3)
    ]
    iterations.append({"number": 4, "refusals": [], "tests": "passed"})
    Ledger(store).record(
        "cycle", Subject("cycle:run-1", repo="x/y", number=3, ticket="x/y#3"),
        Outcome("ok", "unmet"), error_class="iterations",
        detail={"outcome": "blocked", "reason": "no result", "iterations": iterations},
    )  # fmt: skip
    register = {p.error_class: p for p in read_register(store)}
    assert register["refusal:deletions"].count == 3
    assert register["refusal:deletions"].first.text == "iteration 1: INSTALL.md"
    assert register["iterations"].count == 1


def test_the_snapshot_of_an_empty_store(store):
    view = read_overview(Settings(cap_usd_per_day=20.0), store, now=NOW)
    shown = overview_dict(view)
    assert shown["queues"] == {
        "inbox": {"pending": 0, "running": 0, "done": 0, "failed": 0},
        "oldest_pending": None,
        "broker": None,
    }
    assert shown["halts"] == shown["leases"] == shown["open_cycles"] == []
    assert shown["spend_today"]["total_micro_usd"] == 0
    assert shown["spend_today"]["cap_usd_per_day"] == 20.0
    assert len(shown["spend_per_day"]) == 14
    assert shown["spend_per_day"][-1] == {"day": "2026-12-01", "micro_usd": 0}


def test_the_snapshot_shows_queues_halts_leases_open_cycles_and_spend(store):
    seed_ledger(store, NOW)
    inbox = Inbox(store)
    rows = [
        inbox.record(Delivery(f"d{n}", "issues", "opened", INSTALLATION, b"{}")) for n in range(3)
    ]
    assert inbox.claim(rows[0], lease_s=300) is not None
    HaltRegistry(store).set(installation_scope(INSTALLATION), reason="<b>stop</b>", set_by="ann")
    view = read_overview(Settings(cap_usd_per_day=2.0), store, now=NOW)
    assert view.inbox == {"pending": 2, "running": 1, "done": 0, "failed": 0}
    assert view.oldest_pending is not None and view.oldest_pending.tzinfo is not None
    assert [(lease.kind, lease.key) for lease in view.leases] == [("inbox", "issues d0")]
    assert [h.scope for h in view.halts] == [f"installation:{INSTALLATION}"]
    # PR 2 merged; PR 7 of ticket 5 is open; blocked tickets left no pull request.
    assert [(c.ticket, c.pr) for c in view.open_cycles] == [(f"{REPO}#5", 7)]
    assert view.spend_today == {str(INSTALLATION): 1_200_000}
    by_day = {day.day: day.micro_usd for day in view.days}
    assert (by_day["2026-12-01"], by_day["2026-11-30"], by_day["2026-11-28"]) == (
        1_200_000,
        500_000,
        100_000,
    )


def test_the_loops_running_cycles_and_held_ticket_leases_are_shown(store):
    from app.store.schema import loop_cycles, ticket_leases

    with store.session() as session:
        session.execute(
            ticket_leases.insert().values(
                repo=REPO, number=8, holder="w1", fence=3, expires_at=NOW + timedelta(minutes=5)
            )
        )
        session.execute(
            ticket_leases.insert().values(
                repo=REPO, number=9, holder="w2", fence=1, expires_at=NOW - timedelta(minutes=5)
            )
        )
        for key, state in (("run-8", "started"), ("run-9", "done")):
            session.execute(
                loop_cycles.insert().values(
                    key=key,
                    repo=REPO,
                    number=int(key[-1]),
                    kind="cycle",
                    started_at=NOW,
                    state=state,
                )
            )
    view = read_overview(Settings(), store, now=NOW)
    assert [(lease.kind, lease.key) for lease in view.leases] == [("ticket", f"{REPO}#8")]
    assert [(c.ticket, c.outcome) for c in view.open_cycles] == [(f"{REPO}#8", "cycle started")]


def test_redis_leases_and_the_celery_queue_are_read_when_there_is_redis(sqlite_store, redis_server):
    store = sqlite_store
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.set("ourobot:effect-lease:cycle:octo/demo#5", "token", ex=120)
    client.set("ourobot:turn:gate:octo/demo#7", "token", ex=60)
    client.rpush("ourobot", "job-1", "job-2")
    settings = Settings(redis_url=redis_server.url)
    view = read_overview(settings, store, client, queue_names=("ourobot",), now=NOW)
    assert view.mode == "redis" and view.broker_queue == 2
    found = {(lease.kind, lease.key) for lease in view.leases}
    assert found == {("effect", "cycle:octo/demo#5"), ("turn", "gate:octo/demo#7")}
    assert all(0 < (lease.seconds_left or 0) <= 120 for lease in view.leases)


def test_a_redis_that_cannot_be_read_is_a_note_not_a_failure(sqlite_store):
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    store = sqlite_store
    gone = redis.Redis(
        host="127.0.0.1", port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0)
    )
    view = read_overview(Settings(redis_url="redis://127.0.0.1:1"), store, gone, queue_names=("q",))
    assert view.broker_queue is None
    assert view.notes and view.notes[0].startswith("redis not readable")
