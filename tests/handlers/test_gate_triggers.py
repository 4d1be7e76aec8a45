"""The gate's handlers on malformed and edge-case payloads: nothing routed that should not be."""

from __future__ import annotations

from typing import Any

import pytest

from app.handlers.gate_triggers import (
    on_check_run,
    on_check_suite,
    on_merge_group,
    on_pull_request,
    on_push,
    on_status,
)
from app.handlers.router import Event
from app.settings import load_settings

SETTINGS = load_settings(env={}, app_id=101)
REPO = {"full_name": "octo/demo"}
INSTALLATION = {"id": 9}
SHA = "a" * 40


def event(name: str, action: str, **payload: Any) -> Event:
    body = {"repository": REPO, "installation": INSTALLATION, "action": action, **payload}
    return Event(name, action, body, "d")


@pytest.mark.parametrize(
    "pull", [None, {}, {"number": "7"}, {"number": True}, {"number": 0}, {"number": -1}, []]
)
def test_a_pull_request_without_a_number_routes_nothing(pull: Any) -> None:
    assert on_pull_request(event("pull_request", "labeled", pull_request=pull)) == []


def test_a_pull_request_event_asks_for_that_one() -> None:
    [job] = on_pull_request(event("pull_request", "labeled", pull_request={"number": 7}))
    assert (job.name, dict(job.kwargs)) == (
        "gate_evaluate", {"installation_id": 9, "repo": "octo/demo", "number": 7}
    )
    no_repo = Event("pull_request", "labeled", {"pull_request": {"number": 7}}, "d")
    assert on_pull_request(no_repo) == []


def test_check_runs_name_their_pull_requests_and_the_gates_own_is_skipped() -> None:
    run = {"name": "ci/test", "pull_requests": [{"number": 3}, {"number": 3}, {"number": "x"}, 5]}
    assert [j.kwargs["number"] for j in on_check_run(event("check_run", "completed",
            check_run=run), settings=SETTINGS)] == [3]  # fmt: skip
    own = {"name": "ourobot/gate", "pull_requests": [{"number": 3}]}
    assert on_check_run(event("check_run", "completed", check_run=own), settings=SETTINGS) == []
    assert on_check_run(event("check_run", "completed", check_run=[]), settings=SETTINGS) == []


def test_ourobots_own_suite_is_skipped_anothers_is_not() -> None:
    suite = {"app": {"id": 101}, "pull_requests": [{"number": 3}]}
    assert on_check_suite(event("check_suite", "completed", check_suite=suite),
                          settings=SETTINGS) == []  # fmt: skip
    other = {**suite, "app": {"id": 15368}}
    assert len(on_check_suite(event("check_suite", "completed", check_suite=other),
                              settings=SETTINGS)) == 1  # fmt: skip


@pytest.mark.parametrize(
    "payload",
    [{"sha": "abc", "branches": [{"name": "x"}]}, {"sha": SHA, "branches": []},
     {"sha": SHA, "branches": "x"}, {"sha": SHA, "branches": [{"name": 3}]}],
)  # fmt: skip
def test_a_status_without_a_commit_or_a_branch_routes_nothing(payload: dict[str, Any]) -> None:
    assert on_status(event("status", "", **payload)) == []


@pytest.mark.parametrize(
    "payload",
    [{"ref": "refs/tags/v1"}, {"ref": "refs/heads/main", "deleted": True},
     {"ref": "refs/heads/gh-readonly-queue/main/pr-1-" + SHA}, {"ref": 3}],
)  # fmt: skip
def test_pushes_that_move_no_base_route_nothing(payload: dict[str, Any]) -> None:
    assert on_push(event("push", "", **payload)) == []


def test_a_merge_group_needs_every_field() -> None:
    group = {"head_sha": SHA, "head_ref": "refs/heads/gh-readonly-queue/main/pr-1-x",
             "base_sha": "b" * 40, "base_ref": "refs/heads/main"}  # fmt: skip
    [job] = on_merge_group(event("merge_group", "checks_requested", merge_group=group))
    assert job.name == "merge_group_checks" and job.kwargs["head_sha"] == SHA
    for key in group:
        broken = {**group, key: None}
        assert on_merge_group(event("merge_group", "checks_requested", merge_group=broken)) == []
