"""Review rounds that converge and cost less, end to end on the sandbox with the real SDKs
against the fake model servers, counting every model request:

- cheap first: the real guards job fails a bot PR, its check run's completion starts the
  review, which concludes "Not reviewed" with no model request;
- never pay twice: a new head with the same reviewed inputs reuses the verdict, and a change to
  the diff, the ticket, the constitution, the config or the roster pays again;
- obligations: a three-round scenario carries the finding ids through and converges;
- a blocker without a location is advisory; the spend is in the summary and the ledger.
"""

from __future__ import annotations

import pytest

from app.handlers import pulls
from app.jobs.registry import Job
from app.jobs.review_rounds import open_obligations
from reviewers.fake_servers import Text
from reviewers.obligations import finding_id
from reviewers.verdict import Finding
from tests.jobs.review_check.conftest import APPROVE, DIVIDE, A, B

pytestmark = pytest.mark.slow

OPS = "calc/ops.py"
NEW_OPS = "def add(a: int, b: int) -> int:\n    return a + b\n" + DIVIDE
ZERO = Finding("blocker", OPS, 6, "divide(1, 0) raises ZeroDivisionError; check b first")
DOC = Finding("major", OPS, 5, "divide() has no docstring, which the constitution requires")
REJECT_TWO = Text(
    f"FINDING {ZERO.severity} {ZERO.path}:{ZERO.line} {ZERO.reason}\n"
    f"FINDING {DOC.severity} {DOC.path}:{DOC.line} {DOC.reason}\n"
    "VERDICT: REJECT"
)
Z, D = finding_id(ZERO), finding_id(DOC)


def config(models: tuple[str, ...] = (A, B), extra: str = "") -> str:
    listed = ", ".join(f'"{m}"' for m in models)
    return (
        f"version: 1\nproject: {{name: demo, description: a tiny calculator}}\n"
        f"review: {{models: [{listed}], quorum: {len(models)}, timeout_s: 20{extra}}}\n"
        "guards: {apply_to: bot}\n"
    )


def new_head_same_diff(rw, branch: str = "ourobot/issue-1", message: str = "reworded") -> str:
    """Amend the head's message only: a new SHA, the same diff."""
    git, token = rw.sandbox.git, rw.repo.owner_token
    git("fetch", "-q", "origin", cwd=rw.work, token=token)
    git("checkout", "-q", "-B", branch, f"origin/{branch}", cwd=rw.work)
    git("commit", "-q", "--amend", "-m", message, cwd=rw.work)
    git("push", "-q", "-f", "origin", branch, cwd=rw.work, token=token)
    head = git("rev-parse", "HEAD", cwd=rw.work).stdout.strip()
    rw.post_guards(head, "success")
    return head


def sync_job(rw, head: str) -> Job:
    delivery = rw.sink.wait_for_one(
        "pull_request", "synchronize", lambda d: d.payload["pull_request"]["head"]["sha"] == head
    )
    [job] = rw.jobs_for(delivery.payload, "synchronize")
    return job


def review_entries(rw, head: str):
    return [e for e in rw.ledger.entries(kind="review") if e.head_sha == head]


# ---- cheap first --------------------------------------------------------------------------------


def guards_jobs(rw, payload) -> list[Job]:
    """What the production router asks for on this pull_request event: guards and review."""
    pulls.register(rw.router, rw.settings)
    jobs = rw.jobs_for(payload)
    assert sorted(job.name for job in jobs) == ["guards_check", "review_check"]
    return jobs


def run_guards_then_route_completion(rw, jobs: list[Job], head: str) -> list[Job]:
    [guards] = [job for job in jobs if job.name == "guards_check"]
    rw.run(guards)
    completed = rw.sink.wait_for_one(
        "check_run",
        "completed",
        lambda d: (
            d.payload["check_run"]["name"] == "ourobot/guards"
            and d.payload["check_run"]["head_sha"] == head
        ),
    )
    return rw.router.route("check_run", "completed", completed.payload, delivery_id="d-2")


def test_a_bot_pr_failing_a_guard_gets_no_model_request_and_a_review_that_does_not_pass(rw):
    rw.models.default(A, APPROVE)
    rw.models.default(B, APPROVE)
    workflow = {".github/workflows/ci.yml": "on: push\n", OPS: NEW_OPS}
    number, head, payload = rw.open_pull(workflow, guards=None)
    jobs = guards_jobs(rw, payload)
    # The review job the pull request event started runs first and waits for the guards.
    [review] = [job for job in jobs if job.name == "review_check"]
    rw.run(review)
    assert rw.check_runs(head) == []

    [triggered] = run_guards_then_route_completion(rw, jobs, head)
    assert triggered.kwargs == {
        "installation_id": rw.repo.installation_id,
        "repo": "octo/demo",
        "number": number,
        "head_sha": head,
        "trigger": "guards",
    }
    rw.run(triggered)
    [run] = rw.check_runs(head)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert run.output.title == f"Not reviewed: the guards failed on {head[:12]}"
    assert f"Not reviewed: the guards failed on `{head}`" in run.output.summary
    assert "2 model request(s) not made" in run.output.summary
    assert rw.models.requests == []  # not one model request
    [entry] = review_entries(rw, head)
    assert (entry.outcome.review, entry.detail["kind"]) == ("skipped", "guards-failed")
    assert (entry.detail["model_requests"], entry.detail["model_requests_saved"]) == (0, 2)


def test_the_panel_runs_once_the_guards_pass(rw):
    rw.models.script(A, APPROVE)
    rw.models.script(B, APPROVE)
    _number, head, payload = rw.open_pull({OPS: NEW_OPS}, guards=None)
    jobs = guards_jobs(rw, payload)
    [triggered] = run_guards_then_route_completion(rw, jobs, head)
    rw.run(triggered)
    [review] = [job for job in jobs if job.name == "review_check"]
    rw.run(review)  # the pull request's own job, late: the verdict is already there
    [run] = rw.check_runs(head)
    assert run.conclusion == "success"
    assert len(rw.models.requests) == 2


def test_a_pr_the_guards_do_not_apply_to_is_reviewed_without_waiting(rw):
    # A person's `ourobot/...` branch: the review's rule takes it, the guards' does not (only
    # the App's own pull requests), so there is no guards run to wait for.
    rw.models.script(A, APPROVE)
    rw.models.script(B, APPROVE)
    _number, head, payload = rw.open_pull({OPS: NEW_OPS}, by="writer", guards=None)
    [review] = rw.jobs_for(payload)
    rw.run(review)
    [run] = rw.check_runs(head)
    assert run.conclusion == "success"
    assert len(rw.models.requests) == 2


# ---- never pay twice ----------------------------------------------------------------------------


def test_a_new_head_with_the_same_inputs_reuses_the_verdict_with_zero_requests(rw):
    rw.models.script(A, APPROVE)
    rw.models.script(B, APPROVE)
    _number, first, payload = rw.open_pull({OPS: NEW_OPS})
    rw.run(rw.jobs_for(payload)[0])
    assert len(rw.models.requests) == 2

    second = new_head_same_diff(rw)
    rw.run(sync_job(rw, second))
    assert len(rw.models.requests) == 2  # zero requests for the second head
    [run] = rw.check_runs(second)
    assert (run.conclusion, run.output.title) == ("success", "Review passed: 2 of 2 approved")
    summary = run.output.summary
    assert "Verdict reused, no model was asked" in summary
    assert f"as `{first}`" in summary and f"`{second}` has the same reviewed inputs" in summary
    assert "- This head: $0.00" in summary and "in 0 model request(s)" in summary
    assert "- This pull request so far: $" in summary and "in 2 model request(s)" in summary
    assert "Saved by reusing verdicts for identical inputs: $" in summary
    assert "on 1 head(s)" in summary
    [entry] = review_entries(rw, second)
    assert entry.detail["kind"] == "reused" and entry.detail["reused_from"] == first
    assert entry.detail["model_requests"] == 0 and entry.detail["saved_micro_usd"] > 0
    assert entry.detail["model_requests_saved"] == 2
    [paid] = review_entries(rw, first)
    assert entry.detail["pr_cost_micro_usd"] == paid.detail["cost_micro_usd"] > 0


def _change_diff(rw):
    rw.push("ourobot/issue-1", {"calc/extra.py": "X = 1\n"}, start="ourobot/issue-1")


def _change_ticket(rw):
    rw.bot.rest.pulls.update(rw.repo.owner, rw.repo.name, 1, body="Adds divide(), exactly.")
    new_head_same_diff(rw)


def _change_constitution(rw):
    rw.push(
        "main", {".github/ourobot/CONSTITUTION.md": "Every function has a docstring and a test.\n"}
    )
    new_head_same_diff(rw)


def _change_config(rw):
    rw.push("main", {".github/ourobot.yml": config(extra=", max_diff_chars: 20000")})
    new_head_same_diff(rw)


def _change_roster(rw):
    rw.push("main", {".github/ourobot.yml": config(models=(A, B, "openai:gpt-c"))})
    new_head_same_diff(rw)


@pytest.mark.parametrize(
    ("change", "why", "requests"),
    [
        (_change_diff, "the diff", 2),
        (_change_ticket, "the ticket", 2),
        # the constitution is part of the reviewers' rendered role prompt too
        (_change_constitution, "the constitution, the prompts", 2),
        (_change_config, "the config", 2),
        (_change_roster, "the config, the roster", 3),
    ],
    ids=["diff", "ticket", "constitution", "config", "roster"],
)
def test_any_change_to_the_reviewed_inputs_pays_again(rw, change, why, requests):
    for model in (A, B, "openai:gpt-c"):
        rw.models.default(model, APPROVE)
    _number, _first, payload = rw.open_pull({OPS: NEW_OPS})
    rw.run(rw.jobs_for(payload)[0])
    assert len(rw.models.requests) == 2
    change(rw)
    head = rw.bot.rest.pulls.get(rw.repo.owner, rw.repo.name, 1).parsed_data.head.sha
    rw.run(sync_job(rw, head))
    assert len(rw.models.requests) == 2 + requests
    [run] = rw.check_runs(head)
    assert run.conclusion == "success"
    assert "Verdict reused" not in run.output.summary
    assert f"Not reused: reviewed again: {why} changed since" in run.output.summary
    [entry] = review_entries(rw, head)
    assert entry.detail["kind"] == "panel" and entry.detail["model_requests"] == requests


# ---- obligations and convergence ----------------------------------------------------------------


def test_three_rounds_carry_the_obligation_ids_through_and_converge(rw):
    rw.push("main", {".github/ourobot.yml": config(extra=", converge_after: 2")})
    # Round 1: A rejects with two findings; B approves.
    rw.models.script(A, REJECT_TWO)
    rw.models.script(B, APPROVE)
    number, first, payload = rw.open_pull({OPS: NEW_OPS})
    rw.run(rw.jobs_for(payload)[0])
    [run] = rw.check_runs(first)
    assert run.conclusion == "failure"
    assert f"`{Z}`" in run.output.summary and f"`{D}`" in run.output.summary
    # The implementer's fix round gets both, with their ids.
    assert [o.id for o in open_obligations(rw.store, repo="octo/demo", number=number)] == [Z, D]
    assert [
        o.id for o in open_obligations(rw.store, repo="octo/demo", number=1, head_sha=first)
    ] == [Z, D]

    # Round 2: the fix resolves the division; both reviewers are asked about both ids.
    fixed = NEW_OPS.replace(
        "    return a / b\n", "    if b == 0:\n        return 0.0\n    return a / b\n"
    )
    rw.models.script(
        A, Text(f"RESOLVED {Z} b is checked\nOPEN {D} still no docstring\nVERDICT: REJECT")
    )
    rw.models.script(B, Text(f"RESOLVED {Z} fine\nRESOLVED {D} fine\nVERDICT: APPROVE"))
    second = rw.push("ourobot/issue-1", {OPS: fixed}, start="ourobot/issue-1")
    rw.run(sync_job(rw, second))
    round_two = rw.models.requests[2:]
    assert len(round_two) == 2
    for request in round_two:
        assert Z in request.prompt_text and D in request.prompt_text
    [run] = rw.check_runs(second)
    assert run.conclusion == "failure"
    assert [o.id for o in open_obligations(rw.store, repo="octo/demo", number=number)] == [D]

    # Round 3 (past converge_after: 2): only D is asked; A resolves it and raises a new major
    # finding about add(), which no fix touched: advisory, so the panel converges.
    documented = fixed.replace(
        "def divide(a: int, b: int) -> float:\n",
        'def divide(a: int, b: int) -> float:\n    """a / b, 0.0 for b == 0."""\n',
    )
    late = "FINDING major calc/ops.py:1 add() should accept floats too\n"
    rw.models.script(A, Text(f"RESOLVED {D} documented\n{late}VERDICT: REJECT"))
    rw.models.script(B, Text(f"RESOLVED {D} documented\nVERDICT: APPROVE"))
    third = rw.push("ourobot/issue-1", {OPS: documented}, start="ourobot/issue-1")
    rw.run(sync_job(rw, third))
    round_three = rw.models.requests[4:]
    assert len(round_three) == 2
    for request in round_three:
        assert D in request.prompt_text and Z not in request.prompt_text
    [run] = rw.check_runs(third)
    assert (run.conclusion, run.output.title) == ("success", "Review passed: 2 of 2 approved")
    assert "said reject, but every blocking finding is advisory" in run.output.summary
    assert "advisory: new in round 3 about code the fix did not touch" in run.output.summary
    assert open_obligations(rw.store, repo="octo/demo", number=number) == ()
    assert [e.detail["round"] for e in rw.ledger.entries(kind="review")] == [1, 2, 3]
    assert len(rw.models.requests) == 6


def test_a_reviewer_that_does_not_answer_an_obligation_gives_no_usable_verdict(rw):
    rw.models.script(A, REJECT_TWO, APPROVE)  # round 2: APPROVE without answering Z and D
    rw.models.script(B, APPROVE, Text(f"RESOLVED {Z} ok\nRESOLVED {D} ok\nVERDICT: APPROVE"))
    number, _first, payload = rw.open_pull({OPS: NEW_OPS})
    rw.run(rw.jobs_for(payload)[0])
    second = rw.push("ourobot/issue-1", {"calc/extra.py": "X = 1\n"}, start="ourobot/issue-1")
    rw.run(sync_job(rw, second))
    [run] = rw.check_runs(second)
    assert run.conclusion == "failure"
    assert "not answered with RESOLVED or OPEN" in run.output.summary
    # no usable answer from A, so neither is resolved by every reviewer: both stay open
    assert [o.id for o in open_obligations(rw.store, repo="octo/demo", number=number)] == [Z, D]


def test_a_blocker_without_a_location_is_advisory(rw):
    rw.models.script(A, Text("FINDING blocker - the whole approach feels wrong\nVERDICT: REJECT"))
    rw.models.script(B, APPROVE)
    _number, head, payload = rw.open_pull({OPS: NEW_OPS})
    rw.run(rw.jobs_for(payload)[0])
    [run] = rw.check_runs(head)
    assert run.conclusion == "success"
    assert "advisory: names no path and line" in run.output.summary
    assert rw.annotations(run.id) == []  # nothing to place, nothing failing
