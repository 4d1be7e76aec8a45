"""check_run.completed -> fix_round: only ourobot's own failing review or guards run, only on
ourobot's branches."""

from __future__ import annotations

from typing import Any

from app.handlers.fix_triggers import on_check_run
from app.handlers.router import Event
from app.settings import load_settings

SETTINGS = load_settings(env={}, app_id=42)
SHA = "a" * 40


def event(**run: Any) -> Event:
    check_run = {
        "id": 9,
        "name": "ourobot/review",
        "conclusion": "failure",
        "head_sha": SHA,
        "app": {"id": 42},
        "pull_requests": [{"number": 3, "head": {"ref": "ourobot/issue-1", "sha": SHA}}],
        **run,
    }
    payload = {
        "check_run": check_run,
        "installation": {"id": 5},
        "repository": {"full_name": "octo/demo"},
    }
    return Event("check_run", "completed", payload, "d-1")


def test_ourobots_failing_review_or_guards_asks_for_a_fix_round():
    [job] = on_check_run(event(), settings=SETTINGS)
    assert job.name == "fix_round"
    assert job.kwargs == {
        "installation_id": 5,
        "repo": "octo/demo",
        "number": 3,
        "head_sha": SHA,
        "source": "review",
        "check_run_id": 9,
    }
    [job] = on_check_run(event(name="ourobot/guards"), settings=SETTINGS)
    assert job.kwargs["source"] == "guards"


def test_anything_else_asks_for_nothing():
    others = [
        event(conclusion="success"),
        event(name="ourobot/gate"),
        event(name="ci"),
        event(app={"id": 7}),  # another App posting a run under ourobot's name
        event(pull_requests=[{"number": 3, "head": {"ref": "feature/x", "sha": SHA}}]),
        event(head_sha="not-a-sha"),
        event(pull_requests=[]),
    ]
    for other in others:
        assert on_check_run(other, settings=SETTINGS) == []
