"""Each field of the state, missing or malformed: it fails exactly the conditions that read it,
with a reason naming the field, and never passes one."""

from __future__ import annotations

from typing import Any

import pytest

from app.gate import decide
from tests.gate.states import DELETE, H, edit, good, review, run, with_

# ci reads app_id too: with no required list it must tell ourobot's own runs from CI.
CHECKS = {"ci", "guards", "review"}
PR_ON_HEAD = {"ci", "guards", "review", "approval"}
PR_ALL = PR_ON_HEAD | {"hold", "draft", "mergeable", "up-to-date"}

CASES: list[tuple[str, Any, set[str]]] = [
    ("app_id", DELETE, CHECKS),
    ("app_id", "101", CHECKS),
    ("app_id", True, CHECKS),
    ("app_id", 0, CHECKS),
    ("app_id", 101.0, CHECKS),
    ("halted", DELETE, {"halt"}),
    ("halted", "false", {"halt"}),
    ("halted", 0, {"halt"}),
    ("halted", None, {"halt"}),
    ("config", DELETE, {"ci", "approval", "owner-approval", "up-to-date"}),
    ("config", [], {"ci", "approval", "owner-approval", "up-to-date"}),
    ("config.mode", DELETE, {"owner-approval"}),
    ("config.mode", "turbo", {"owner-approval"}),
    ("config.mode", None, {"owner-approval"}),
    ("config.merge", DELETE, {"ci", "approval", "up-to-date"}),
    ("config.merge", "strict", {"ci", "approval", "up-to-date"}),
    ("config.merge.require_human_approval", DELETE, {"approval"}),
    ("config.merge.require_human_approval", "true", {"approval"}),
    ("config.merge.require_human_approval", 1, {"approval"}),
    ("config.merge.require_human_approval", None, {"approval"}),
    ("config.merge.required_checks", DELETE, {"ci"}),
    ("config.merge.required_checks", "ci/lint", {"ci"}),
    ("config.merge.required_checks", [1], {"ci"}),
    ("config.merge.required_checks", [""], {"ci"}),
    ("config.merge.required_checks", {"ci/lint": True}, {"ci"}),
    ("config.merge.require_up_to_date", DELETE, {"up-to-date"}),
    ("config.merge.require_up_to_date", "yes", {"up-to-date"}),
    ("config.merge.require_up_to_date", None, {"up-to-date"}),
    ("branch_protection_required_checks", DELETE, {"ci"}),
    ("branch_protection_required_checks", "ci/lint", {"ci"}),
    ("branch_protection_required_checks", [5], {"ci"}),
    ("pr", DELETE, PR_ALL),
    ("pr", [], PR_ALL),
    ("pr", None, PR_ALL),
    ("pr.head_sha", DELETE, PR_ON_HEAD),
    ("pr.head_sha", "", PR_ON_HEAD),
    ("pr.head_sha", 5, PR_ON_HEAD),
    ("pr.head_sha", "a a", PR_ON_HEAD),
    ("pr.head_sha", None, PR_ON_HEAD),
    ("pr.author", DELETE, {"approval"}),
    ("pr.author", "", {"approval"}),
    ("pr.author", None, {"approval"}),
    ("pr.draft", DELETE, {"draft"}),
    ("pr.draft", "false", {"draft"}),
    ("pr.draft", None, {"draft"}),
    ("pr.mergeable", DELETE, {"mergeable"}),
    ("pr.mergeable", "true", {"mergeable"}),
    ("pr.mergeable", 1, {"mergeable"}),
    ("pr.labels", DELETE, {"hold"}),
    ("pr.labels", "ourobot:hold", {"hold"}),
    ("pr.labels", [1], {"hold"}),
    ("pr.labels", [{"name": "bug"}], {"hold"}),
    ("pr.labels", None, {"hold"}),
    ("pr.behind_by", DELETE, {"up-to-date"}),
    ("pr.behind_by", -1, {"up-to-date"}),
    ("pr.behind_by", "0", {"up-to-date"}),
    ("pr.behind_by", 0.0, {"up-to-date"}),
    ("pr.behind_by", False, {"up-to-date"}),
    ("check_runs", DELETE, CHECKS),
    ("check_runs", {}, CHECKS),
    ("check_runs", None, CHECKS),
    ("check_runs.0", "ourobot/guards", CHECKS),
    ("check_runs.0.id", DELETE, {"guards"}),
    ("check_runs.0.id", "11", {"guards"}),
    ("check_runs.0.id", -11, {"guards"}),
    ("check_runs.0.id", 12, {"guards", "review"}),  # the same id as ourobot/review's run
    ("check_runs.0.name", DELETE, {"guards"}),
    ("check_runs.0.name", 3, {"guards"}),
    ("check_runs.0.head_sha", DELETE, {"guards"}),
    ("check_runs.0.head_sha", 7, {"guards"}),
    ("check_runs.0.status", DELETE, {"guards"}),
    ("check_runs.0.status", "done", {"guards"}),
    ("check_runs.0.conclusion", DELETE, {"guards"}),
    ("check_runs.0.conclusion", "green", {"guards"}),
    ("check_runs.0.conclusion", None, {"guards"}),  # completed without a conclusion
    ("check_runs.0.app_id", DELETE, {"guards"}),
    ("check_runs.0.app_id", "101", {"guards"}),
    ("statuses", DELETE, {"ci"}),
    ("statuses", "success", {"ci"}),
    ("statuses.0", None, {"ci"}),
    ("statuses.0.id", DELETE, {"ci"}),
    ("statuses.0.id", 1.5, {"ci"}),
    ("statuses.0.context", DELETE, {"ci"}),
    ("statuses.0.context", "", {"ci"}),
    ("statuses.0.sha", DELETE, {"ci"}),
    ("statuses.0.sha", ["x"], {"ci"}),
    ("statuses.0.state", DELETE, {"ci"}),
    ("statuses.0.state", "SUCCESS", {"ci"}),
    ("statuses.0.state", "green", {"ci"}),
    ("reviews", DELETE, {"approval", "changes-requested"}),
    ("reviews", {}, {"approval", "changes-requested"}),
    ("reviews.0", "alice", {"approval", "changes-requested"}),
    ("reviews.0.id", DELETE, {"approval", "changes-requested"}),
    ("reviews.0.id", "31", {"approval", "changes-requested"}),
    ("reviews.0.user", DELETE, {"approval", "changes-requested"}),
    ("reviews.0.user", "", {"approval", "changes-requested"}),
    ("reviews.0.user_type", DELETE, {"approval"}),
    ("reviews.0.user_type", None, {"approval"}),
    ("reviews.0.state", DELETE, {"approval", "changes-requested"}),
    ("reviews.0.state", "approved", {"approval", "changes-requested"}),
    ("reviews.0.state", "LGTM", {"approval", "changes-requested"}),
    ("reviews.0.commit_id", DELETE, {"approval"}),
    ("reviews.0.commit_id", 5, {"approval"}),
    ("reviews.0.commit_id", "", {"approval"}),
    ("reviews.0.permission", DELETE, {"approval"}),
    ("reviews.0.permission", "WRITE", {"approval"}),
    ("reviews.0.permission", None, {"approval"}),
]


def _label(case: tuple[str, Any, set[str]]) -> str:
    path, value, _ = case
    return f"{path}={'<deleted>' if value is DELETE else repr(value)}"


@pytest.mark.parametrize("case", CASES, ids=[_label(c) for c in CASES])
def test_a_broken_field_fails_exactly_the_conditions_that_read_it(
    case: tuple[str, Any, set[str]],
) -> None:
    path, value, expected = case
    decision = decide(edit(good(), path, value))
    assert decision.verdict == "wait"
    assert {c.name for c in decision.missing} == expected
    top = path.split(".")[0]
    for condition in decision.missing:
        assert condition.reason, condition
        assert top in condition.reason, (condition.name, condition.reason)


def test_the_reason_names_the_field_and_what_was_there() -> None:
    decision = decide(edit(good(), "pr.behind_by", "0"))
    assert decision.condition("up-to-date").reason == (
        'pr.behind_by: expected a whole number >= 0, got "0"'
    )
    decision = decide(edit(good(), "pr.draft", DELETE))
    assert decision.condition("draft").reason == "pr.draft is missing"
    decision = decide(edit(good(), "pr", []))
    assert decision.condition("draft").reason == "pr: expected an object, got a list"


def test_touches_protected_is_read_only_where_it_matters() -> None:
    # Outside pro mode the field is not read; in pro mode a broken one fails owner-approval.
    assert decide(edit(good(), "pr.touches_protected", "yes")).merge
    pro = edit(good(), "config.mode", "pro")
    for value in (DELETE, "yes", None, 1):
        decision = decide(edit(pro, "pr.touches_protected", value))
        assert {c.name for c in decision.missing} == {"owner-approval"}
        assert "pr.touches_protected" in decision.condition("owner-approval").reason


def test_a_broken_entry_on_another_commit_is_not_read() -> None:
    runs = [*good()["check_runs"], {"id": "x", "name": 5, "head_sha": "b" * 40}]
    statuses = [*good()["statuses"], {"sha": "b" * 40, "state": "???"}]
    assert decide(with_(check_runs=runs, statuses=statuses)).merge


def test_a_broken_entry_older_than_the_latest_of_its_name_cannot_change_the_answer() -> None:
    runs = [*good()["check_runs"], run(5, "ourobot/guards", status="?", conclusion="?")]
    assert decide(with_(check_runs=runs)).merge
    # An unnamed run older than both ourobot runs cannot be the latest of either ...
    unnamed = [*good()["check_runs"], {**run(5, "x", app_id=101), "name": None}]
    assert decide(with_(check_runs=unnamed)).merge
    # ... but a newer one could be the latest ourobot/guards run.
    newer = [*good()["check_runs"], {**run(50, "x"), "name": None}]
    assert {c.name for c in decide(with_(check_runs=newer)).missing} == {"guards", "review"}


def test_an_unnamed_run_that_may_be_ci_fails_ci() -> None:
    runs = [*good()["check_runs"], {**run(5, "x", app_id=202), "name": None}]
    assert {c.name for c in decide(with_(check_runs=runs)).missing} == {"ci"}


def test_a_broken_comment_review_changes_nothing() -> None:
    broken = {"id": "?", "user": None, "state": "COMMENTED"}
    assert decide(with_(reviews=[review(31, "alice"), broken])).merge


def test_another_reviewers_broken_review_cannot_take_an_approval_away() -> None:
    reviews = [review(31, "alice"), {**review(32, "bob"), "permission": "?"}]
    assert decide(with_(reviews=reviews)).merge
    # ... but a broken change request could be a writer's: it blocks.
    blocked = [review(31, "alice"), {**review(32, "bob", "CHANGES_REQUESTED"), "permission": 1}]
    decision = decide(with_(reviews=blocked))
    assert {c.name for c in decision.missing} == {"changes-requested"}
    assert "reviews[1].permission" in decision.condition("changes-requested").reason


def test_a_broken_field_of_a_review_that_is_not_an_approval_of_h_is_not_needed() -> None:
    # alice approved an earlier commit: whatever her permission says, it is not an approval of H.
    reviews = [{**review(31, "alice", commit_id="b" * 40), "permission": None}]
    reason = decide(with_(reviews=reviews)).condition("approval").reason
    assert "not the head" in reason and "permission" not in reason


def test_unknown_keys_are_ignored() -> None:
    assert decide({**good(), "extra": {"anything": [1, 2]}}).merge


def test_head_sha_is_reported_when_readable() -> None:
    assert decide(good()).head_sha == H
    assert decide(edit(good(), "pr.head_sha", 5)).head_sha is None
