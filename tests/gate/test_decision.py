"""Every condition of the merge decision, through the pure function, on well-formed states."""

from __future__ import annotations

from typing import Any

import pytest

from app.gate import CONDITION_NAMES, decide
from tests.gate.states import (
    APP_ID,
    OLD,
    OTHER_APP_ID,
    H,
    edit,
    good,
    review,
    run,
    status,
    with_,
)


def missing(state: dict[str, Any]) -> dict[str, str]:
    return {c.name: c.reason for c in decide(state).missing}


def test_everything_met_merges_and_reports_each_condition_in_contract_order() -> None:
    decision = decide(good())
    assert decision.merge and decision.verdict == "merge"
    assert [c.name for c in decision.conditions] == list(CONDITION_NAMES)
    assert CONDITION_NAMES == (
        "ci", "guards", "review", "approval", "changes-requested", "owner-approval",
        "hold", "halt", "draft", "mergeable", "up-to-date",
    )  # fmt: skip
    assert decision.to_dict() == {"decision": "merge", "missing": []}
    assert decision.head_sha == H
    # A met condition says what it saw: that is the ledger's evidence.
    assert "run 11" in decision.condition("guards").reason
    assert "alice" in decision.condition("approval").reason


def test_the_json_document_lists_what_is_missing_in_contract_order() -> None:
    state = with_(**{"pr.draft": True, "halted": True, "statuses": []})
    document = decide(state).to_dict()
    assert set(document) == {"decision", "missing"}
    assert document["decision"] == "wait"
    assert [m["condition"] for m in document["missing"]] == ["ci", "halt", "draft"]
    assert all(set(m) == {"condition", "reason"} and m["reason"] for m in document["missing"])


# ----- ci -----------------------------------------------------------------------------------------
def test_ci_with_no_check_at_all_is_not_green() -> None:
    reason = missing(with_(statuses=[]))["ci"]
    assert "no check run or status" in reason
    assert set(missing(with_(statuses=[]))) == {"ci"}


def test_ci_required_checks_empty_list_means_no_ci() -> None:
    state = with_(statuses=[status(21, "ci/lint", "failure")])
    state = edit(state, "config.merge.required_checks", [])
    assert decide(state).merge
    assert decide(edit(state, "statuses", [])).merge


@pytest.mark.parametrize("outcome", ["pending", "failure", "error"])
def test_ci_every_status_must_be_success(outcome: str) -> None:
    state = with_(statuses=[status(21, "ci/lint"), status(22, "ci/test", outcome)])
    assert f"ci/test status {outcome}" in missing(state)["ci"]


@pytest.mark.parametrize(
    ("run_status", "conclusion", "shown"),
    [
        ("queued", None, "queued"),
        ("in_progress", None, "in_progress"),
        ("completed", "failure", "concluded failure"),
        ("completed", "neutral", "concluded neutral"),
        ("completed", "skipped", "concluded skipped"),
        ("completed", "cancelled", "concluded cancelled"),
        ("completed", "timed_out", "concluded timed_out"),
    ],
)
def test_ci_every_check_run_must_have_completed_with_success(
    run_status: str, conclusion: str | None, shown: str
) -> None:
    runs = [*good()["check_runs"], run(13, "build", status=run_status, conclusion=conclusion,
                                        app_id=OTHER_APP_ID)]  # fmt: skip
    assert f"build check run {shown}" in missing(with_(check_runs=runs))["ci"]


def test_ci_counts_the_latest_run_and_status_of_each_name_by_id_not_list_order() -> None:
    runs = [
        run(40, "build", app_id=OTHER_APP_ID),
        run(13, "build", conclusion="failure", app_id=OTHER_APP_ID),
        *good()["check_runs"],
    ]
    statuses = [status(50, "ci/lint", "failure"), status(60, "ci/lint")]
    assert decide(with_(check_runs=runs, statuses=statuses)).merge
    flipped = [status(60, "ci/lint", "failure"), status(50, "ci/lint")]
    assert "ci/lint status failure" in missing(with_(statuses=flipped))["ci"]


def test_ci_ignores_checks_on_other_commits() -> None:
    stale = [status(21, "ci/lint"), status(22, "ci/test", "failure", sha=OLD)]
    assert decide(with_(statuses=stale)).merge
    only_old = [status(21, "ci/lint", sha=OLD)]
    assert "no check run or status" in missing(with_(statuses=only_old))["ci"]


def test_ci_never_counts_ourobot_own_runs_or_anything_named_like_them() -> None:
    # ourobot's App's runs, whatever their name, and any status or run named ourobot/*.
    runs = [*good()["check_runs"], run(13, "ourobot/scope", app_id=APP_ID),
            run(14, "ourobot/guards", app_id=OTHER_APP_ID)]  # fmt: skip
    statuses = [status(21, "ourobot/review"), status(22, "ourobot/gate")]
    assert "no check run or status" in missing(with_(check_runs=runs, statuses=statuses))["ci"]


def test_ci_never_counts_the_report_of_a_cycle_on_the_actions_runner() -> None:
    # `ourobot/cycle` is made by GitHub Actions' App (the workflow's token) on the PR's head.
    runs = [*good()["check_runs"], run(13, "ourobot/cycle", app_id=OTHER_APP_ID)]
    assert "no check run or status" in missing(with_(check_runs=runs, statuses=[]))["ci"]
    named = edit(good(), "config.merge.required_checks", ["ourobot/cycle"])
    assert decide(edit(named, "statuses", [])).merge  # it names no CI at all


def test_ci_required_checks_from_config_need_each_name_green() -> None:
    state = edit(good(), "config.merge.required_checks", ["ci/test", "ci/lint"])
    assert "ci/test not reported" in missing(state)["ci"]
    runs = [*good()["check_runs"], run(13, "ci/test", app_id=OTHER_APP_ID)]
    assert decide(edit(state, "check_runs", runs)).merge
    # Other checks on H do not matter once the list is explicit.
    extra = [*runs, run(14, "flaky", conclusion="failure", app_id=OTHER_APP_ID)]
    assert decide(edit(state, "check_runs", extra)).merge


def test_ci_a_required_name_reported_both_as_run_and_status_needs_both_green() -> None:
    state = edit(good(), "config.merge.required_checks", ["ci/lint"])
    runs = [*good()["check_runs"], run(13, "ci/lint", conclusion="failure", app_id=OTHER_APP_ID)]
    assert "ci/lint check run concluded failure" in missing(edit(state, "check_runs", runs))["ci"]


def test_ci_required_list_naming_only_ourobot_checks_requires_no_other_ci() -> None:
    state = edit(good(), "config.merge.required_checks", ["ourobot/guards", "ourobot/gate"])
    assert decide(edit(state, "statuses", [])).merge


def test_ci_falls_back_to_branch_protection_then_to_every_check() -> None:
    state = edit(good(), "branch_protection_required_checks", ["ci/test"])
    assert "branch protection" in missing(state)["ci"]
    assert "ci/test not reported" in missing(state)["ci"]
    # The config wins over branch protection.
    assert decide(edit(state, "config.merge.required_checks", ["ci/lint"])).merge
    # Protection naming nothing but ourobot's gate adds nothing: every check on H counts.
    only_gate = edit(good(), "branch_protection_required_checks", ["ourobot/gate"])
    assert decide(only_gate).merge
    assert "no check run or status" in missing(edit(only_gate, "statuses", []))["ci"]
    assert decide(edit(good(), "branch_protection_required_checks", [])).merge


# ----- guards, review -----------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "condition"), [("ourobot/guards", "guards"),
                                                 ("ourobot/review", "review")])  # fmt: skip
def test_ourobot_check_missing_is_not_success(name: str, condition: str) -> None:
    runs = [r for r in good()["check_runs"] if r["name"] != name]
    assert missing(with_(check_runs=runs)) == {condition: f"no {name} check run on {H[:12]}"}


def test_a_spoofed_guards_status_never_counts() -> None:
    runs = [run(12, "ourobot/review")]
    statuses = [*good()["statuses"], status(22, "ourobot/guards")]
    reason = missing(with_(check_runs=runs, statuses=statuses))["guards"]
    assert "a commit status named ourobot/guards never counts" in reason


def test_another_apps_guards_run_never_counts() -> None:
    runs = [run(11, "ourobot/guards", app_id=OTHER_APP_ID), run(12, "ourobot/review")]
    reason = missing(with_(check_runs=runs))["guards"]
    assert f"App {OTHER_APP_ID}" in reason and "never counts" in reason


def test_another_apps_later_run_of_that_name_is_the_latest_and_it_is_not_ourobots() -> None:
    runs = [*good()["check_runs"], run(13, "ourobot/guards", app_id=OTHER_APP_ID)]
    assert "guards" in missing(with_(check_runs=runs))
    # ourobot posting again afterwards makes its own run the latest.
    again = [*runs, run(14, "ourobot/guards")]
    assert decide(with_(check_runs=again)).merge


@pytest.mark.parametrize(
    ("run_status", "conclusion"),
    [("completed", "neutral"), ("completed", "skipped"), ("completed", "failure"),
     ("in_progress", None), ("queued", None), ("completed", "action_required")],
)  # fmt: skip
def test_guards_only_success_is_success(run_status: str, conclusion: str | None) -> None:
    runs = [run(11, "ourobot/guards", status=run_status, conclusion=conclusion),
            run(12, "ourobot/review")]  # fmt: skip
    assert set(missing(with_(check_runs=runs))) == {"guards"}


def test_guards_latest_run_by_id_decides() -> None:
    runs = [run(15, "ourobot/guards"), run(11, "ourobot/guards", conclusion="failure"),
            run(12, "ourobot/review")]  # fmt: skip
    assert decide(with_(check_runs=runs)).merge
    runs[0]["conclusion"], runs[1]["conclusion"] = "failure", "success"
    assert "concluded failure" in missing(with_(check_runs=runs))["guards"]


def test_a_guards_run_on_an_earlier_head_does_not_count() -> None:
    runs = [run(11, "ourobot/guards", sha=OLD), run(12, "ourobot/review")]
    assert set(missing(with_(check_runs=runs))) == {"guards"}


# ----- approval -----------------------------------------------------------------------------------
def test_an_approval_of_an_earlier_head_is_not_counted() -> None:
    reason = missing(with_(reviews=[review(31, "alice", commit_id=OLD)]))["approval"]
    assert f"alice approved {OLD[:12]}, not the head {H[:12]}" in reason


def test_an_approval_of_a_commit_that_is_gone_is_not_counted() -> None:
    assert "approval" in missing(with_(reviews=[review(31, "alice", commit_id=None)]))


def test_no_review_no_approval() -> None:
    assert set(missing(with_(reviews=[]))) == {"approval"}


@pytest.mark.parametrize("later", ["DISMISSED", "CHANGES_REQUESTED"])
def test_a_later_dismissal_or_change_request_replaces_the_approval(later: str) -> None:
    reviews = [review(31, "alice"), review(35, "alice", later)]
    assert "approval" in missing(with_(reviews=reviews))


def test_a_later_comment_changes_nothing() -> None:
    reviews = [review(31, "alice"), review(35, "alice", "COMMENTED", commit_id=OLD),
               review(36, "alice", "PENDING")]  # fmt: skip
    assert decide(with_(reviews=reviews)).merge


def test_latest_review_is_by_id_not_list_order() -> None:
    reviews = [review(40, "alice"), review(31, "alice", "DISMISSED")]
    assert decide(with_(reviews=reviews)).merge


def test_logins_are_compared_case_insensitively() -> None:
    reviews = [review(31, "Alice"), review(35, "alice", "DISMISSED")]
    assert "approval" in missing(with_(reviews=reviews))
    state = with_(**{"pr.author": "ALICE"})
    assert "alice is the author" in missing(state)["approval"]


@pytest.mark.parametrize("permission", ["read", "triage", "none"])
def test_an_approval_without_write_access_is_not_counted(permission: str) -> None:
    reason = missing(with_(reviews=[review(31, "alice", permission=permission)]))["approval"]
    assert f"alice has {permission} access" in reason


@pytest.mark.parametrize("permission", ["write", "maintain", "admin"])
def test_write_maintain_and_admin_approvals_count(permission: str) -> None:
    assert decide(with_(reviews=[review(31, "alice", permission=permission)])).merge


def test_a_bot_approval_is_not_counted() -> None:
    assert "approval" in missing(with_(reviews=[review(31, "helper", user_type="Bot")]))
    # A [bot] login is a bot whatever user_type claims.
    assert "approval" in missing(with_(reviews=[review(31, "helper[bot]")]))


def test_the_authors_own_approval_is_not_counted() -> None:
    state = with_(**{"pr.author": "alice"})
    assert "alice is the author" in missing(state)["approval"]


def test_one_valid_approval_is_enough_among_others() -> None:
    reviews = [review(30, "bob", permission="read"), review(31, "alice"),
               review(32, "carol", commit_id=OLD)]  # fmt: skip
    assert decide(with_(reviews=reviews)).merge


def test_approval_not_required_when_the_config_says_so() -> None:
    state = with_(reviews=[], **{"config.merge.require_human_approval": False})
    assert decide(state).merge


# ----- changes-requested --------------------------------------------------------------------------
def test_a_writers_change_request_blocks_even_on_an_earlier_commit() -> None:
    reviews = [review(31, "alice"), review(32, "bob", "CHANGES_REQUESTED", commit_id=OLD)]
    reason = missing(with_(reviews=reviews))["changes-requested"]
    assert reason == "bob (write) requested changes in review 32"


def test_a_change_request_without_write_access_does_not_block() -> None:
    reviews = [review(31, "alice"), review(32, "bob", "CHANGES_REQUESTED", permission="read")]
    assert decide(with_(reviews=reviews)).merge


@pytest.mark.parametrize(("later", "blocks"), [("APPROVED", False), ("DISMISSED", False),
                                               ("COMMENTED", True)])  # fmt: skip
def test_a_change_request_is_replaced_only_by_a_later_approval_or_dismissal(
    later: str, blocks: bool
) -> None:
    reviews = [review(31, "alice"), review(32, "bob", "CHANGES_REQUESTED"),
               review(33, "bob", later)]  # fmt: skip
    assert ("changes-requested" in missing(with_(reviews=reviews))) is blocks


def test_change_requests_block_even_without_required_approval() -> None:
    state = with_(reviews=[review(32, "bob", "CHANGES_REQUESTED")],
                  **{"config.merge.require_human_approval": False})  # fmt: skip
    assert set(missing(state)) == {"changes-requested"}


# ----- owner-approval -----------------------------------------------------------------------------
def pro(**changes: Any) -> dict[str, Any]:
    return with_(**{"config.mode": "pro", "pr.touches_protected": True, **changes})


def test_pro_mode_protected_change_needs_an_admins_approval_on_the_head() -> None:
    reason = missing(pro())["owner-approval"]
    assert reason.startswith("pro mode and a protected path changed")
    assert "alice has write access" in reason
    assert decide(pro(reviews=[review(31, "alice"), review(32, "root", permission="admin")])).merge
    old = [review(31, "alice"), review(32, "root", permission="admin", commit_id=OLD)]
    assert set(missing(pro(reviews=old))) == {"owner-approval"}


def test_owner_approval_is_not_needed_outside_pro_mode_or_without_protected_paths() -> None:
    for mode in ("light", "advanced"):
        assert decide(pro(**{"config.mode": mode})).merge
    assert decide(pro(**{"pr.touches_protected": False})).merge


# ----- hold, halt, draft, mergeable, up-to-date ---------------------------------------------------
def test_the_hold_label_holds_in_any_case() -> None:
    assert set(missing(with_(**{"pr.labels": ["bug", "ourobot:hold"]}))) == {"hold"}
    assert set(missing(with_(**{"pr.labels": ["Ourobot:Hold"]}))) == {"hold"}
    assert decide(with_(**{"pr.labels": ["ourobot:ticket", "bug"]})).merge


def test_halted_draft_and_unmergeable_wait() -> None:
    assert set(missing(with_(halted=True))) == {"halt"}
    assert set(missing(with_(**{"pr.draft": True}))) == {"draft"}
    assert set(missing(with_(**{"pr.mergeable": False}))) == {"mergeable"}
    not_computed = missing(with_(**{"pr.mergeable": None}))
    assert "not computed" in not_computed["mergeable"]


def test_up_to_date_needs_behind_by_zero_and_unknown_is_not_up_to_date() -> None:
    behind = missing(with_(**{"pr.behind_by": 3}))
    assert set(behind) == {"up-to-date"} and "3 commits behind" in behind["up-to-date"]
    assert "behind_by is null" in missing(with_(**{"pr.behind_by": None}))["up-to-date"]
    off = with_(**{"pr.behind_by": 3, "config.merge.require_up_to_date": False})
    assert decide(off).merge
    assert decide(edit(off, "pr.behind_by", None)).merge
