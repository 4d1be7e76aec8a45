"""issue_comment.created -> `command` jobs: the plan's job carries the issue's text as the event
had it; the other verbs' jobs do not carry it."""

from __future__ import annotations

from app.handlers.commands import on_comment_created
from app.handlers.router import Event
from app.settings import Settings


def event(body: str, *, issue_body: object = "Please add divide.<!-- hidden -->") -> Event:
    payload = {
        "repository": {"full_name": "octo/demo"},
        "installation": {"id": 7},
        "issue": {"number": 3, "title": "Add divide", "body": issue_body},
        "comment": {"id": 11, "body": body, "user": {"login": "writer", "type": "User"}},
    }
    return Event("issue_comment", "created", payload, "d-1")


def test_the_plan_job_carries_the_issue_text_at_trigger_time():
    [job] = on_comment_created(event("/ourobot plan"), settings=Settings())
    assert job.kwargs["verb"] == "plan"
    assert job.kwargs["issue_title"] == "Add divide"
    assert job.kwargs["issue_body"] == "Please add divide.<!-- hidden -->"  # stripped later


def test_a_null_body_is_an_empty_one_and_other_verbs_carry_no_text():
    [plan] = on_comment_created(event("/ourobot plan", issue_body=None), settings=Settings())
    assert plan.kwargs["issue_body"] == ""
    [scout] = on_comment_created(event("/ourobot scout"), settings=Settings())
    assert "issue_title" not in scout.kwargs and "issue_body" not in scout.kwargs
