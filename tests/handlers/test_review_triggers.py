"""The review's handlers on edge-case payloads: only ourobot's own guards run starts a review."""

from __future__ import annotations

from typing import Any

import pytest

from app.handlers.review_triggers import on_guards_completed
from app.handlers.router import Event
from app.settings import load_settings

SETTINGS = load_settings(env={}, app_id=101)
SHA = "a" * 40


def completed(run: Any) -> Event:
    body = {
        "repository": {"full_name": "octo/demo"},
        "installation": {"id": 9},
        "action": "completed",
        "check_run": run,
    }
    return Event("check_run", "completed", body, "d")


def guards(**changes: Any) -> dict[str, Any]:
    run = {
        "name": "ourobot/guards",
        "head_sha": SHA,
        "app": {"id": 101},
        "pull_requests": [{"number": 3}, {"number": 3}, {"number": "x"}, {"number": True}, 5],
    }
    return {**run, **changes}


def test_our_guards_completing_reviews_each_listed_pull_request_once() -> None:
    [job] = on_guards_completed(completed(guards()), settings=SETTINGS)
    assert (job.name, dict(job.kwargs)) == (
        "review_check",
        {"installation_id": 9, "repo": "octo/demo", "number": 3, "head_sha": SHA,
         "trigger": "guards"},
    )  # fmt: skip


@pytest.mark.parametrize(
    "run",
    [
        guards(name="ci/test"),
        guards(name="ourobot/review"),
        guards(app={"id": 202}),  # another App's run of the same name
        guards(app=None),
        guards(head_sha="not-a-sha"),
        guards(pull_requests=None),
        None,
    ],
    ids=["other-check", "review", "other-app", "no-app", "bad-sha", "no-pulls", "no-run"],
)
def test_anything_else_starts_no_review(run: Any) -> None:
    assert on_guards_completed(completed(run), settings=SETTINGS) == []


def test_without_an_app_id_no_run_can_be_told_to_be_ours() -> None:
    assert on_guards_completed(completed(guards()), settings=load_settings(env={})) == []
