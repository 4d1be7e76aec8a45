"""`/ourobot review`: a person with write access asks for the panel on a PR's head."""

from __future__ import annotations

import pytest

from app.handlers.routes import build_router
from reviewers.fake_servers import Text
from tests.jobs.review_check.conftest import APPROVE, DIVIDE, A, B

pytestmark = pytest.mark.slow

OPS = "calc/ops.py"
NEW_OPS = "def add(a: int, b: int) -> int:\n    return a + b\n" + DIVIDE


def ask(rw, login: str, number: int, text: str = "/ourobot review") -> str:
    """`login` comments `text` on `number`; run the command job; ourobot's reply."""
    made = rw.user(login).rest.issues.create_comment("octo", "demo", number, body=text)
    comment_id = made.parsed_data.id
    payload = rw.sink.wait_for_one(
        "issue_comment", "created", lambda d: d.payload["comment"]["id"] == comment_id
    ).payload
    jobs = build_router(rw.settings).route("issue_comment", "created", payload, delivery_id="c")
    for job in jobs:
        rw.run(job)
    key = f"<!-- ourobot:reply.{comment_id}.review -->"
    [reply] = [
        c.body
        for c in rw.user("octo").rest.issues.list_comments("octo", "demo", number).parsed_data
        if c.user.login == rw.sandbox.app.bot_login and key in c.body
    ]
    return reply


def test_a_writer_gets_a_review_of_any_pr_and_the_result_in_the_reply(rw):
    rw.models.script(A, APPROVE)
    rw.models.script(B, APPROVE)
    # A person's PR: not reviewed on its own (apply_to: bot), reviewed when asked.
    number, head, _ = rw.open_pull({OPS: NEW_OPS}, branch="feature", by="writer")
    reply = ask(rw, "writer", number)
    assert f"Reviewed `{head[:12]}`: review passed: 2 of 2 approved" in reply
    [run] = rw.check_runs(head)
    assert run.conclusion == "success"


def test_a_decisive_verdict_is_not_rerolled_on_request(rw):
    rw.models.script(A, APPROVE)
    rw.models.script(B, Text("FINDING major calc/ops.py:6 no zero check\nVERDICT: REJECT"))
    number, head, _ = rw.open_pull({OPS: NEW_OPS}, branch="feature", by="writer")
    ask(rw, "writer", number)
    again = ask(rw, "writer", number)
    assert "already reviewed" in again and "not re-rolled" in again
    assert len(rw.check_runs(head)) == 1
    assert len(rw.models.requests) == 2


def test_an_incomplete_review_can_be_asked_for_again(rw):
    rw.models.script(A, APPROVE, APPROVE)
    rw.models.script(B, Text("no verdict here"), APPROVE)
    number, head, _ = rw.open_pull({OPS: NEW_OPS}, branch="feature", by="writer")
    first = ask(rw, "writer", number)
    assert "incomplete evidence" in first
    second = ask(rw, "writer", number)
    assert "review passed" in second
    runs = rw.check_runs(head)
    assert sorted(run.conclusion for run in runs) == ["failure", "success"]
    assert runs[0].conclusion == "success"  # the newest run is what the PR shows


def test_a_reader_is_refused_and_nothing_is_reviewed(rw):
    number, head, _ = rw.open_pull({OPS: NEW_OPS}, branch="feature", by="writer")
    reply = ask(rw, "reader", number)
    assert "needs **write**" in reply
    assert rw.check_runs(head) == []
    assert rw.models.requests == []


def test_on_an_issue_it_says_it_reviews_pull_requests(rw):
    issue = rw.user("writer").rest.issues.create("octo", "demo", title="t").parsed_data.number
    reply = ask(rw, "writer", issue)
    assert "reviews a pull request" in reply
    assert rw.models.requests == []
