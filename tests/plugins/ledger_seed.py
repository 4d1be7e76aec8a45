"""A ledger with a little of everything, written through the real `Ledger`: what the operator
commands, `/ourobot status` and the status page are tested on.

Rows (repository octo/demo unless said): ticket 1's cycle opened PR 2, the panel rejected then
approved it, and it merged; tickets 3 and 4 were blocked by the iteration guard (class
`iterations`, refusals of rule `deletions`); a merge of PR 6 found the head moved; ticket 5's
cycle opened PR 7, still open; two days ago a review of a repository with a hostile name could
not fetch its change. Spend: installation 11 today and yesterday, the Action three days ago.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.controls.ledger import Ledger, ModelCall, Outcome, Subject
from app.store import Store
from reviewers.model_client import Usage

REPO = "octo/demo"
HOSTILE_REPO = "evil/<script>alert(1)</script>"
HOSTILE_REASON = '<img src=x onerror="alert(2)"> lost 240 lines'
INSTALLATION = 11


@dataclass(frozen=True)
class Seeded:
    now: datetime
    ids: dict[str, int]


def _subject(key: str, number: int, *, repo: str = REPO, ticket: int | None = None) -> Subject:
    return Subject(
        key=key,
        installation_id=INSTALLATION,
        repo=repo,
        number=number,
        ticket=f"{repo}#{ticket}" if ticket is not None else None,
        head_sha="a" * 40,
    )


def seed_ledger(store: Store, now: datetime) -> Seeded:
    ledger = Ledger(store)
    ids: dict[str, int] = {}
    hour = timedelta(hours=1)

    def put(name: str, kind, subject, outcome, *, at, error_class=None, detail=None) -> None:
        row = ledger.record(kind, subject, outcome, error_class=error_class, detail=detail, at=at)
        assert row is not None
        ids[name] = row

    put(
        "cycle1",
        "cycle",
        _subject("cycle:octo/demo#1", 1, ticket=1),
        Outcome("ok", "met", "approved", "pr"),
        at=now - 5 * hour,
        detail={"outcome": "ready", "reason": "tests pass", "pr": 2, "refusals": []},
    )
    put(
        "review-reject",
        "review",
        _subject("review:octo/demo#2:1", 2),
        Outcome("ok", "unknown", "rejected", "pr"),
        at=now - 4 * hour,
        detail={"conclusion": "failure", "reason": "rejected"},
    )
    put(
        "review-approve",
        "review",
        _subject("review:octo/demo#2:2", 2),
        Outcome("ok", "unknown", "approved", "pr"),
        at=now - 3 * hour,
        detail={"conclusion": "success", "reason": "approved"},
    )
    put(
        "merge2",
        "merge",
        _subject("merge:octo/demo#2:merged", 2),
        Outcome("ok", "met", "skipped", "merged"),
        at=now - 2 * hour,
        detail={"status": "merged", "message": "merged", "merged_sha": "b" * 40},
    )
    for n, (ticket, ago) in enumerate(((3, 90), (4, 60))):
        put(
            f"blocked{ticket}",
            "cycle",
            _subject(f"cycle:octo/demo#{ticket}", ticket, ticket=ticket),
            Outcome("ok", "unmet", "skipped", "none"),
            at=now - timedelta(minutes=ago),
            error_class="iterations",
            detail={
                "outcome": "blocked",
                "reason": "12 iterations refused",
                "refusals": [
                    {
                        "iteration": 1,
                        "rule": "deletions",
                        "path": "INSTALL.md",
                        "reason": HOSTILE_REASON if n == 0 else "lost 230 lines",
                    }
                ],
            },
        )
    put(
        "merge6",
        "merge",
        _subject("merge:octo/demo#6:attempt", 6),
        Outcome("ok", "unmet", "skipped", "none"),
        at=now - timedelta(minutes=30),
        detail={"status": "head-moved", "message": "the head moved during the merge"},
    )
    put(
        "cycle5",
        "cycle",
        _subject("cycle:octo/demo#5", 5, ticket=5),
        Outcome("ok", "met", "approved", "pr"),
        at=now - timedelta(minutes=10),
        detail={"outcome": "ready", "reason": "tests pass", "pr": 7, "refusals": []},
    )
    put(
        "fetch",
        "review",
        _subject("review-fetch:x", 9, repo=HOSTILE_REPO),
        Outcome("infra", "unknown", "incomplete", "pr"),
        at=now - timedelta(days=2),
        error_class="review:fetch",
        detail={"problem": "HTTP 502 <b>bad gateway</b>"},
    )
    for ago, micro, installation in (
        (timedelta(0), 1_200_000, INSTALLATION),
        (timedelta(days=1), 500_000, INSTALLATION),
        (timedelta(days=3), 100_000, None),
    ):
        ledger.record_call(
            Subject("cycle:octo/demo#1", installation, REPO, 1, f"{REPO}#1"),
            ModelCall("implementer", "anthropic:demo", "ok", Usage(10, 10), cost_micro_usd=micro),
            at=now - ago,
        )
    return Seeded(now, ids)
