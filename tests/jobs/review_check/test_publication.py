"""What is posted for a panel run (plain data, no GitHub), and the pure pull_request trigger."""

from __future__ import annotations

import pytest

from app.handlers.review_triggers import on_pull_request
from app.handlers.router import Event
from app.jobs.review_publish import (
    Publication,
    build_publication,
    execution_of,
    latest_result,
    load_publication,
    save_publication,
    unreviewable,
)
from app.settings import load_settings
from reviewers.context import Omission
from reviewers.diff import ChangedFile, FileDiff, Hunk
from reviewers.result import ModelVerdict, PanelResult, ScopeReview
from reviewers.verdict import Finding

HEAD, BASE = "b" * 40, "a" * 40
A, B = "anthropic:claude-a", "openai:gpt-b"


def diff(path: str, new_start: int, lines: list[str], status: str = "modified") -> FileDiff:
    hunk = Hunk(f"@@ -1,1 +{new_start},{len(lines)} @@", 1, new_start, tuple(lines))
    return FileDiff(ChangedFile(path, status), (hunk,))  # type: ignore[arg-type]


FILES = [
    diff("calc/ops.py", 4, [" ctx", "+def divide(a, b):", "+    return a / b"]),
    diff("old.py", 1, ["-gone"], status="deleted"),
]


def result(*verdicts: ModelVerdict, reason="rejected", conclusion="failure") -> PanelResult:
    return PanelResult(
        conclusion=conclusion,
        reason=reason,
        detail="1 of 2 reviewers rejected the change.",
        verdicts=verdicts,
        quorum=2,
        base_sha=BASE,
        head_sha=HEAD,
        scope=ScopeReview("skipped", "review.context is low"),
        omitted=(Omission("big.py", "whole file", 90_000),),
        diff_summary="1 of 2 changed files shown in full",
    )


def publish(panel: PanelResult) -> Publication:
    return build_publication(
        panel,
        FILES,
        run_key="review:o/r:x:p",
        cost_micro_usd=1234,
        cost_line="Model spend for this run: $0.0012.",
    )


def test_findings_on_changed_lines_go_inline_the_rest_into_the_models_summary():
    on_line = Finding("blocker", "calc/ops.py", 6, "divides by zero")
    context = Finding("minor", "calc/ops.py", 4, "context lines can be commented")
    elsewhere = Finding("major", "calc/ops.py", 40, "not a changed line")
    deleted = Finding("nit", "old.py", 1, "a deleted file has no new lines")
    panel = result(
        ModelVerdict(A, "approve", notes="Fine by me."),
        ModelVerdict(B, "reject", findings=(on_line, context, elsewhere, deleted)),
    )
    pub = publish(panel)
    assert [(c.path, c.line) for c in pub.inline] == [("calc/ops.py", 6), ("calc/ops.py", 4)]
    assert pub.inline[0].body == f"**blocker** (`{B}`): divides by zero"
    assert f"### `{A}`: approve" in pub.review_body and "> Fine by me." in pub.review_body
    assert f"### `{B}`: reject" in pub.review_body
    assert "2 finding(s) inline" in pub.review_body
    assert "`calc/ops.py:40`: not a changed line" in pub.review_body
    assert "`old.py:1`" in pub.review_body
    # Annotations for files that exist at the head, with levels by severity.
    levels = [(a.path, a.line, a.level) for a in pub.annotations]
    assert levels == [
        ("calc/ops.py", 6, "failure"),
        ("calc/ops.py", 4, "warning"),
        ("calc/ops.py", 40, "failure"),
    ]
    assert pub.request_changes and pub.conclusion == "failure"
    assert pub.check_title == "Review failed: rejected by 1 of 2"
    assert "| `openai:gpt-b` | reject | 4 |" in pub.check_summary
    assert pub.check_summary.rstrip().endswith("Model spend for this run: $0.0012.")
    assert (pub.execution, pub.review_axis) == ("ok", "rejected")


def test_model_text_cannot_mention_post_html_or_forge_our_marker():
    nasty = "@maintainers look <!-- ourobot:review.0000 --> <img src=x onerror=alert(1)> \u202e"
    panel = result(
        ModelVerdict(
            A, "reject", notes=nasty, findings=(Finding("major", "calc/ops.py", 5, nasty),)
        ),
        ModelVerdict(B, "incomplete", problem=nasty, error_kind="unparseable"),
    )
    pub = publish(panel)
    for text in (pub.review_body, pub.inline[0].body, pub.check_summary):
        assert "@maintainers" not in text
        assert "<!--" not in text.replace("\\<!--", "")  # escaped: text, not a comment
        assert "<img" not in text.replace("\\<img", "")
        assert "\u202e" not in text
        assert "\uff20maintainers" in text  # the full-width at sign: read as "@", no mention
        assert "&#" not in text and "&lt;" not in text  # no HTML entities
    # An annotation is plain text: shown as written, its mention made inert all the same.
    message = pub.annotations[0].message
    assert message.startswith("\uff20maintainers look <!-- ourobot:review.0000 -->")
    assert "\u202e" not in message


def test_titles_and_ledger_axes_for_every_reason():
    ok = publish(
        result(
            ModelVerdict(A, "approve"),
            ModelVerdict(B, "approve"),
            reason="approved",
            conclusion="success",
        )
    )
    assert ok.check_title == "Review passed: 2 of 2 approved"
    assert not ok.request_changes and ok.review_axis == "approved"
    budget = publish(
        result(
            ModelVerdict(A, "approve"),
            ModelVerdict(B, "incomplete", error_kind="budget"),
            reason="budget",
        )
    )
    assert budget.check_title == "Review failed: budget exhausted"
    assert (budget.execution, budget.review_axis) == ("budget", "incomplete")
    slow = publish(
        result(
            ModelVerdict(A, "approve"),
            ModelVerdict(B, "incomplete", error_kind="timeout"),
            reason="incomplete",
        )
    )
    assert slow.check_title == "Review failed: incomplete evidence (1 of 2 approvals)"
    assert (slow.execution, slow.error_class) == ("timeout", "review:timeout")
    overloaded = [ModelVerdict(A, "incomplete", error_kind="overloaded")]
    assert execution_of(overloaded) == ("error", "review:overloaded")


def test_a_publication_survives_storage_unchanged(sqlite_settings):
    from app.store import Store

    store = Store.open(sqlite_settings)
    store.migrate()
    try:
        pub = publish(
            result(ModelVerdict(B, "reject", findings=(Finding("major", "calc/ops.py", 5, "x"),)))
        )
        save_publication(store, pub, repo="o/r", number=3, panel="p")
        save_publication(
            store, unreviewable(pub.run_key, HEAD, BASE, "other"), repo="o/r", number=3, panel="p"
        )  # the first one stays
        assert load_publication(store, pub.run_key) == pub
        latest = latest_result(store, repo="o/r", head_sha=HEAD, panel="p")
        assert latest is not None and latest.publication == pub
        assert latest_result(store, repo="o/r", head_sha=HEAD, panel="q") is None
    finally:
        store.close()


def test_an_unreviewable_change_fails_closed_without_a_review():
    pub = unreviewable("k", HEAD, BASE, "config: review.quorum: expected an integer")
    assert (pub.conclusion, pub.review_body, pub.request_changes) == ("failure", "", False)
    assert "review.quorum" in pub.check_summary and "No model was asked" in pub.check_summary


# ---- the trigger ------------------------------------------------------------------------------


def event(action: str, **pull) -> Event:
    base = {
        "number": 5,
        "state": "open",
        "draft": False,
        "title": "T",
        "body": "B",
        "head": {"sha": HEAD, "ref": "ourobot/issue-1"},
    }
    payload = {
        "action": action,
        "pull_request": {**base, **pull},
        "repository": {"full_name": "octo/demo"},
        "installation": {"id": 42},
    }
    return Event("pull_request", action, payload, "d")


@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened", "ready_for_review"])
def test_each_trigger_action_asks_for_one_review_of_its_head(action):
    [job] = on_pull_request(event(action), settings=load_settings(env={}))
    assert job.name == "review_check"
    assert dict(job.kwargs) == {
        "installation_id": 42,
        "repo": "octo/demo",
        "number": 5,
        "head_sha": HEAD,
        "trigger": "pull_request",
        "title": "T",
        "body": "B",
    }


@pytest.mark.parametrize(
    ("action", "pull"),
    [
        ("opened", {"draft": True}),
        ("opened", {"state": "closed"}),
        ("opened", {"head": {"sha": "not-a-sha"}}),
        ("opened", {"number": "5"}),
    ],
)
def test_drafts_closed_and_malformed_pulls_ask_for_nothing(action, pull):
    assert on_pull_request(event(action, **pull), settings=load_settings(env={})) == []


def test_a_draft_becoming_ready_is_reviewed():
    jobs = on_pull_request(event("ready_for_review", draft=True), settings=load_settings(env={}))
    assert [job.name for job in jobs] == ["review_check"]


def test_the_production_router_sends_pull_requests_to_the_review():
    from app.handlers.routes import build_router

    router = build_router(load_settings(env={}))

    def names(action: str) -> list[str]:
        jobs = router.route("pull_request", action, event(action).payload, delivery_id="d")
        return [job.name for job in jobs]

    assert names("synchronize").count("review_check") == 1
    assert "review_check" not in names("closed")


def test_a_failed_fetch_is_retried_by_the_task_layer():
    from app.jobs.context import retry_delay
    from app.jobs.review_check import FetchFailed

    delay = retry_delay(FetchFailed("cannot fetch octo/demo: git fetch failed (128)"), 0)
    assert delay is not None and delay > 0
