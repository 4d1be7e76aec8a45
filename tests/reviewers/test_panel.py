"""The quorum decision (a plain function) and the panel running real SDKs against the fakes."""

import time

import pytest

from app.repo_config import ModelRef
from reviewers.context import ReviewInputs, build_review_prompt
from reviewers.fake_servers import Malformed, Text, delayed, overloaded
from reviewers.git_source import read_change
from reviewers.model_client import Completion, Usage
from reviewers.panel import PanelMember, decide, run_panel, scope_review_for
from reviewers.prompts import load_template
from reviewers.providers import ProviderCredentials, build_client
from reviewers.reviewer import BudgetExhausted

A, B, C = "anthropic:claude-a", "openai:gpt-b", "openai:gpt-c"
APPROVE = Text("Looks right.\nVERDICT: APPROVE")
REJECT = Text("FINDING blocker app.py:2 divides by zero when n is 0; guard it\nVERDICT: REJECT")


@pytest.mark.parametrize(
    ("verdicts", "quorum", "expected"),
    [
        (["approve", "approve"], 2, ("success", "approved")),
        (["approve", "approve", "incomplete"], 2, ("success", "approved")),
        (["approve", "reject"], 1, ("failure", "rejected")),
        (["approve", "approve", "reject"], 2, ("failure", "rejected")),
        (["approve", "incomplete"], 2, ("failure", "incomplete")),
        (["approve"], 2, ("failure", "incomplete")),
        (["incomplete", "incomplete"], 1, ("failure", "incomplete")),
        ([], 1, ("failure", "incomplete")),
        (["reject", "incomplete"], 2, ("failure", "rejected")),
    ],
)
def test_quorum_table(verdicts, quorum, expected):
    decision = decide(verdicts, quorum)
    assert (decision.conclusion, decision.reason) == expected
    assert decision.detail


def test_budget_refusals_fail_with_budget_unless_rejected():
    assert decide(["approve", "incomplete"], 2, budget_stopped=1).reason == "budget"
    assert decide(["reject", "incomplete"], 2, budget_stopped=1).reason == "rejected"


def test_missing_scope_review_never_passes():
    decision = decide(["approve", "approve"], 2, scope_complete=False)
    assert (decision.conclusion, decision.reason) == ("failure", "incomplete")
    assert "scope" in decision.detail


def test_quorum_below_one_is_refused():
    with pytest.raises(ValueError, match="quorum"):
        decide(["approve"], 0)


def test_scope_rows():
    assert scope_review_for("low").status == "skipped"
    assert scope_review_for("max").status == "unavailable"


@pytest.fixture
def prompt(repo):
    repo.commit({"app.py": "def mean(xs):\n    return sum(xs)\n"})
    repo.branch("feature")
    repo.commit({"app.py": "def mean(xs):\n    return sum(xs) / len(xs)\n"})
    change = read_change(repo.path, "main", "feature")
    inputs = ReviewInputs(
        change.base_sha,
        change.head_sha,
        change.files,
        change.graph,
        ticket="Make mean() return the mean.",
    )
    return build_review_prompt(inputs, template=load_template("reviewer"), max_diff_chars=5000)


def panel(fake_models, prompt, models, *, quorum=2, timeout_s=10.0, context="low", **kwargs):
    credentials = ProviderCredentials.from_env(fake_models.env())
    members = [
        PanelMember(model, build_client(ModelRef.model_validate(model), credentials))
        for model in models
    ]
    return run_panel(
        members,
        prompt,
        quorum=quorum,
        timeout_s=timeout_s,
        base_sha="b" * 40,
        head_sha="h" * 40,
        scope=scope_review_for(context),
        **kwargs,
    )


@pytest.mark.slow
def test_two_approvals_pass_and_every_model_saw_the_same_prompt(fake_models, prompt):
    fake_models.script(A, APPROVE)
    fake_models.script(B, APPROVE)
    result = panel(fake_models, prompt, [A, B])
    assert (result.conclusion, result.reason) == ("success", "approved")
    assert [v.verdict for v in result.verdicts] == ["approve", "approve"]
    assert result.as_json() == {
        "conclusion": "success",
        "reason": "approved",
        "verdicts": [
            {"model": A, "verdict": "approve", "findings": []},
            {"model": B, "verdict": "approve", "findings": []},
        ],
    }
    (request_a,) = fake_models.requests_for(A)
    (request_b,) = fake_models.requests_for(B)
    assert prompt.user in request_a.prompt_text
    assert prompt.user in request_b.prompt_text
    assert result.usage.input_tokens > 0


@pytest.mark.slow
def test_one_rejection_fails_with_its_findings(fake_models, prompt):
    fake_models.script(A, APPROVE)
    fake_models.script(B, REJECT)
    result = panel(fake_models, prompt, [A, B], quorum=1)
    assert (result.conclusion, result.reason) == ("failure", "rejected")
    (finding,) = result.findings()
    assert (finding.model, finding.finding.path, finding.finding.line) == (B, "app.py", 2)
    assert result.as_json()["verdicts"][1]["findings"] == [
        {
            "severity": "blocker",
            "path": "app.py",
            "line": 2,
            "reason": "divides by zero when n is 0; guard it",
        }
    ]
    summary = result.summary_markdown()
    assert "failed (rejected)" in summary
    assert "`app.py:2`" in summary


@pytest.mark.slow
def test_a_reviewer_timing_out_leaves_the_panel_incomplete(fake_models, prompt):
    fake_models.script(A, APPROVE)
    fake_models.default(B, delayed(APPROVE, 30))
    started = time.monotonic()
    result = panel(fake_models, prompt, [A, B], timeout_s=1.0)
    assert time.monotonic() - started < 3  # bounded by review.timeout_s, not by the model
    assert (result.conclusion, result.reason) == ("failure", "incomplete")
    verdict_b = result.verdicts[1]
    assert verdict_b.verdict == "incomplete"
    assert verdict_b.error_kind == "timeout"
    assert "timeout_s" in verdict_b.problem or "within" in verdict_b.problem


@pytest.mark.slow
def test_garbage_answers_are_incomplete_never_approval(fake_models, prompt):
    fake_models.script(A, Text("Sure! I approve of this. approve"))
    fake_models.script(B, Malformed())
    fake_models.script(C, Text("VERDICT: APPROVE\n(just kidding)"))
    result = panel(fake_models, prompt, [A, B, C], quorum=1)
    assert (result.conclusion, result.reason) == ("failure", "incomplete")
    assert [v.verdict for v in result.verdicts] == ["incomplete"] * 3
    assert [v.error_kind for v in result.verdicts] == ["unparseable", "malformed", "unparseable"]


@pytest.mark.slow
def test_a_529_storm_is_retried_then_incomplete(fake_models, prompt):
    fake_models.default(A, overloaded(retry_after_ms=10))
    fake_models.script(B, APPROVE)
    result = panel(fake_models, prompt, [A, B])
    assert (result.conclusion, result.reason) == ("failure", "incomplete")
    assert result.verdicts[0].error_kind == "overloaded"
    assert len(fake_models.requests_for(A)) == 3


@pytest.mark.slow
def test_context_max_fails_closed_while_the_scope_reviewer_is_missing(fake_models, prompt):
    fake_models.script(A, APPROVE)
    fake_models.script(B, APPROVE)
    result = panel(fake_models, prompt, [A, B], context="max")
    assert (result.conclusion, result.reason) == ("failure", "incomplete")
    assert result.scope.status == "unavailable"
    assert "Scope review: unavailable" in result.summary_markdown()


@pytest.mark.slow
def test_budget_hook_stops_calls_before_they_are_made(fake_models, prompt):
    fake_models.script(A, APPROVE)

    def before_call(model: str) -> None:
        if model == B:
            raise BudgetExhausted("daily cap of 1.00 USD reached")

    result = panel(fake_models, prompt, [A, B], before_call=before_call)
    assert (result.conclusion, result.reason) == ("failure", "budget")
    assert fake_models.requests_for(B) == []
    assert "daily cap" in result.verdicts[1].problem


class Exploding:
    model_id = "openai:boom"

    def complete(self, system, messages, *, max_tokens, timeout_s) -> Completion:
        raise RuntimeError("client bug")


class Approving:
    model_id = "openai:yes"

    def complete(self, system, messages, *, max_tokens, timeout_s) -> Completion:
        return Completion("VERDICT: APPROVE", Usage(1, 1))


def test_a_client_bug_fails_that_reviewer_closed(prompt):
    result = run_panel(
        [PanelMember("openai:boom", Exploding()), PanelMember("openai:yes", Approving())],
        prompt,
        quorum=2,
        timeout_s=5,
        base_sha="b",
        head_sha="h",
        scope=scope_review_for("low"),
    )
    assert (result.conclusion, result.reason) == ("failure", "incomplete")
    assert result.verdicts[0].error_kind == "internal"
    assert "client bug" in result.verdicts[0].problem


def test_summary_markdown_neutralises_model_text(prompt):
    class Sneaky:
        model_id = "openai:sneaky"

        def complete(self, system, messages, *, max_tokens, timeout_s) -> Completion:
            text = "FINDING major a.py:1 ping @admin | <img src=x> here\nVERDICT: REJECT"
            return Completion(text, Usage())

    result = run_panel(
        [PanelMember("openai:sneaky", Sneaky())],
        prompt,
        quorum=1,
        timeout_s=5,
        base_sha="b",
        head_sha="h",
        scope=scope_review_for("low"),
    )
    summary = result.summary_markdown()
    assert "@admin" not in summary and "\uff20admin" in summary  # read as "@", no mention
    assert "<img" not in summary.replace("\\<img", "")  # escaped: text, not a tag
    assert "&lt;" not in summary and "&#" not in summary  # Markdown escapes, no entities
    assert "\\|" in summary
