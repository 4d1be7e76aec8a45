"""A ticket becomes a tested branch, with real git, real sandboxed tests and the fake model
servers speaking the real wire formats; every failure lands in a legible state."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewers.fake_servers import (
    Text,
    ToolCall,
    append_block,
    delete_block,
    edit_calls,
    edits_reply,
    file_block,
    replace_block,
    server_error,
)
from tests.loop.conftest import ADD_TEST, CALC_TESTS, IMPLEMENTER, PLANNER, PYTEST, Loop

pytestmark = pytest.mark.slow

FIX = replace_block("calc.py", ("    return a - b\n", "    return a + b\n"))
TICKET = "add() subtracts. Make add(a, b) return a + b, with a test."
INSTALL = "".join(f"Install step {n}: run the installer for part {n}.\n" for n in range(1, 257))


def test_a_ticket_becomes_a_branch_whose_tests_pass(loop: Loop):
    base = loop.project()
    loop.models.script(IMPLEMENTER, edits_reply(FIX, append_block("tests/test_calc.py", ADD_TEST)))
    result = loop.run(TICKET)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert result.branch == "ourobot/T-1" and result.tests == "passed"
    assert len(result.iterations) == 1 and result.refusals == []
    assert "return a + b" in loop.branch_file("calc.py")
    assert "class AddTest" in loop.branch_file("tests/test_calc.py")
    trailers = loop.repo.git("log", "-1", "--format=%an%n%B", "ourobot/T-1")
    assert trailers.startswith("ourobot\n")
    assert f"Ourobot-Ticket: T-1\nOurobot-Iteration: 1\nOurobot-Model: {IMPLEMENTER}" in trailers
    # The user's checkout is as it was; the worktree is gone, the branch stays.
    assert loop.repo.git("rev-parse", "HEAD") == base
    assert loop.repo.git("status", "--porcelain") == ""
    assert loop.repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    # What the model saw: the ticket fenced, calc.py whole, the actions offered as tools; then
    # that its submission was green, to which it said DONE.
    request, told = loop.models.requests_for(IMPLEMENTER)
    assert "<<<BEGIN UNTRUSTED ticket" in request.prompt_text
    assert "def add(a, b):\n    return a - b" in request.prompt_text
    assert request.tool_names == [
        "bash", "submit", "done", "write_file", "append_file", "replace_in_file", "delete_file",
    ]  # fmt: skip
    assert "Your submission is green" in told.body["messages"][-1]["content"]
    assert result.as_json() == {
        "outcome": "ready", "branch": "ourobot/T-1", "iterations": 1, "tests": "passed",
        "refusals": [], "review": None,
    }  # fmt: skip


def test_a_test_failure_is_fed_back_and_fixed_in_the_next_iteration(loop: Loop):
    loop.project()
    loop.models.script(
        IMPLEMENTER,
        edits_reply(append_block("tests/test_calc.py", ADD_TEST)),  # the test, not the fix
        edits_reply(FIX),
    )
    result = loop.run(TICKET)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert [record.tests for record in result.iterations] == ["failed", "passed"]
    second = loop.prompts()[1]
    assert "AssertionError: -1 != 5" in second
    assert "ground truth" in second
    assert "<<<BEGIN UNTRUSTED test-output" in second
    assert loop.repo.git("rev-list", "--count", "HEAD..ourobot/T-1") == "2"


def test_a_rewrite_of_a_long_file_is_refused_every_iteration_and_the_file_stays(loop: Loop):
    loop.project(files={"INSTALL.md": INSTALL})
    short = "".join(f"Step {n}.\n" for n in range(1, 201))
    loop.models.script(IMPLEMENTER, *[edits_reply(file_block("INSTALL.md", short))] * 3)
    result = loop.run("Rewrite INSTALL.md to be clearer.")
    assert result.outcome == "blocked" and result.branch is None
    assert result.tests == "not-run"
    # 256 lines become 200 others: 56 removed without replacement, and not one line kept.
    assert [(n, r.rule, r.path, r.reason) for n, r in result.refusals] == [
        (n, "deletions", "INSTALL.md", reason) for n in (1, 2, 3) for reason in (
            "56 of 256 lines removed without replacement, over the limit of 5",
            "rewritten: 0% of its 256 lines kept (0 of the 256 that say something), under the "
            "25% one iteration must keep of a file",
        )
    ]  # fmt: skip
    assert (loop.repo.path / "INSTALL.md").read_text() == INSTALL
    assert loop.repo.git("branch", "--list", "ourobot/*") == ""
    # The blocked explanation names the guard rule that refused the iterations, and why.
    assert result.reason.startswith("no passing, earned result within 3 iteration(s); ")
    assert "every iteration was refused by the guards: deletions (INSTALL.md: 56 of 256 lines " in (
        result.reason
    )
    for prompt in loop.prompts()[1:]:
        assert "INSTALL.md: 56 of 256 lines removed without replacement, over the limit" in prompt
        assert "INSTALL.md: rewritten: 0% of its 256 lines kept" in prompt
        assert "### APPEND:" in prompt and "none of its edits were applied" in prompt
    assert "Install step 256" in loop.prompts()[2]  # shown again, whole


def test_an_append_to_the_long_file_lands_after_a_refused_rewrite(loop: Loop):
    loop.project(files={"INSTALL.md": INSTALL})
    loop.models.script(
        IMPLEMENTER,
        edits_reply(file_block("INSTALL.md", "# Install\nRun make.\n")),
        edits_reply(append_block("INSTALL.md", "## Upgrading\nRun make upgrade.\n")),
    )
    result = loop.run("Document upgrading in INSTALL.md.")
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert {(n, r.rule) for n, r in result.refusals} == {(1, "deletions")}
    assert loop.branch_file("INSTALL.md") == INSTALL + "## Upgrading\nRun make upgrade."


def test_unsafe_symlinked_and_workflow_paths_are_refused_before_commit_then_a_good_edit_lands(
    loop: Loop,
):
    loop.repo.write(".github/workflows/ci.yml", "on: push\n")
    loop.repo.symlink("docs/ci", "../.github/workflows")
    loop.project(budgets="{implementer_iterations: 4, test_timeout_s: 60}")
    loop.models.script(
        IMPLEMENTER,
        edits_reply(file_block("../x", "escaped\n")),
        edits_reply(file_block("docs/ci/deploy.yml", "on: push\njobs: {}\n")),
        edits_reply(file_block(".github/workflows/ci.yml", "on: pull_request_target\n")),
        edits_reply(FIX),
    )
    result = loop.run(TICKET)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert [(n, r.rule, r.path) for n, r in result.refusals] == [
        (1, "unsafe-path", "../x"),
        (2, "symlink", "docs/ci/deploy.yml"),
        (3, "protected-path", ".github/workflows/ci.yml"),
    ]
    assert not (loop.tmp / "x").exists() and not (loop.repo.path.parent / "x").exists()
    assert loop.branch_file(".github/workflows/ci.yml") == "on: push"
    assert loop.repo.git("ls-tree", "-r", "--name-only", "ourobot/T-1").count(".github/") == 2
    assert loop.repo.git("rev-list", "--count", "HEAD..ourobot/T-1") == "1"
    assert "resolves to .github/workflows/deploy.yml" in loop.prompts()[2]


def test_already_satisfied_ends_the_cycle(loop: Loop):
    loop.project()
    loop.models.script(IMPLEMENTER, Text("mul() already multiplies.\n\nALREADY SATISFIED"))
    result = loop.run("mul(a, b) must return a * b.")
    assert result.outcome == "satisfied" and result.branch is None
    assert result.iterations == []  # nothing was submitted
    assert loop.repo.git("branch", "--list", "ourobot/*") == ""


def test_a_reply_without_edits_gets_one_nudge(loop: Loop):
    loop.project()
    loop.models.script(
        IMPLEMENTER, Text("I would change the subtraction."), edits_reply(FIX),
    )  # fmt: skip
    result = loop.run(TICKET)
    assert result.outcome == "ready" and len(result.iterations) == 1
    nudge = loop.models.requests_for(IMPLEMENTER)[1]
    assert nudge.body["messages"][-1]["content"].startswith("Your answer asked for nothing")


def test_a_second_reply_without_edits_ends_the_cycle_as_blocked(loop: Loop):
    loop.project()
    loop.models.script(IMPLEMENTER, Text("Thinking."), Text("Still thinking."))
    result = loop.run(TICKET)
    assert result.outcome == "blocked" and "asked for nothing" in result.reason
    assert result.error_class == "no-edits"


def test_a_malformed_block_is_fed_back_never_a_crash(loop: Loop):
    loop.project()
    loop.models.script(
        IMPLEMENTER,
        Text("### REPLACE: calc.py\n```\nreturn a - b\n```\n"),
        edits_reply(FIX),
    )
    result = loop.run(TICKET)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert [(n, r.rule) for n, r in result.refusals] == [(1, "malformed")]
    assert "expected '<<<<<<< SEARCH'" in loop.prompts()[1]


@pytest.mark.parametrize("model", ["anthropic:claude-tools", "openai:gpt-tools"])
def test_the_same_edits_arrive_as_tool_calls_in_both_wire_formats(loop: Loop, model: str):
    loop.project()
    config = loop.config()
    config = config.model_copy(
        update={"models": config.models.model_copy(update={"implementer": (
            type(config.models.implementer[0]).model_validate(model),)})}
    )  # fmt: skip
    loop.models.script(
        model,
        edit_calls(
            ("replace_in_file", {"path": "calc.py", "search": "a - b", "replace": "a + b"}),
            ("append_file", {"path": "tests/test_calc.py", "content": ADD_TEST}),
        ),
        ToolCall("done", {}),
    )
    result = loop.run(TICKET, config=config)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert "return a + b" in loop.branch_file("calc.py")


def test_the_planner_advises_feature_tickets_and_its_failure_is_no_plan(loop: Loop):
    loop.project()
    plan = "## Goal\nadd adds.\n\n## Files\n- calc.py\n\n## Steps\n1. Replace the minus.\n"
    loop.models.script(PLANNER, Text(plan))
    loop.models.script(IMPLEMENTER, edits_reply(FIX))
    result = loop.run(TICKET, labels=["feature"])
    assert result.outcome == "ready" and result.plan == plan.strip()
    assert "1. Replace the minus." in loop.prompts()[0]
    loop.models.script(IMPLEMENTER, edits_reply(FIX))
    loop.models.script(PLANNER, server_error())
    result = loop.run(TICKET, labels=["feature"], ticket_id="T-2")
    assert result.outcome == "ready" and result.plan is None
    assert any(note.startswith("no plan:") for note in result.notes)
    assert "(No plan.)" in loop.prompts()[2]


def test_a_call_the_spend_cap_refuses_ends_the_cycle_as_budget(loop: Loop):
    loop.project()
    result = loop.run(TICKET, usd=0.0001)
    assert result.outcome == "blocked" and result.execution == "budget"
    assert loop.models.requests_for(IMPLEMENTER) == []
    (call,) = loop.ledger.calls()
    assert call.call.outcome == "budget" and call.call.role == "implementer"


def test_every_model_call_is_metered(loop: Loop):
    loop.project()
    loop.models.script(IMPLEMENTER, edits_reply(append_block("tests/test_calc.py", ADD_TEST)),
                       edits_reply(FIX))  # fmt: skip
    loop.run(TICKET)
    calls = loop.ledger.calls()
    # Two submissions, then the DONE that ends the cycle.
    assert [(c.call.role, c.call.outcome) for c in calls] == [("implementer", "ok")] * 3
    assert all(c.call.cost_micro_usd > 0 and c.call.usage.input_tokens > 0 for c in calls)


def test_a_red_baseline_is_reported_not_blamed(loop: Loop):
    broken = (
        "import unittest\n\nclass B(unittest.TestCase):\n"
        "    def test_b(self):\n        self.fail('broken at the base')\n"
    )
    loop.project(files={"tests/test_broken.py": broken})
    loop.models.script(IMPLEMENTER, *[edits_reply(FIX)] * 3)
    result = loop.run(TICKET)
    assert result.outcome == "blocked"
    assert result.baseline.startswith("failed")
    assert "already failed at the base" in result.reason
    assert any("already fails at the base" in note for note in result.notes)


def test_a_hanging_test_is_killed_at_the_timeout_and_said_so(loop: Loop):
    loop.project(budgets="{implementer_iterations: 1, test_timeout_s: 2}")
    hang = "\nimport subprocess, time\n\nclass Hang(unittest.TestCase):\n" \
           "    def test_hang(self):\n        subprocess.Popen(['sleep', '3599.75'])\n" \
           "        time.sleep(3600)\n"  # fmt: skip
    loop.models.script(IMPLEMENTER, edits_reply(FIX, append_block("tests/test_calc.py", hang)))
    result = loop.run(TICKET)
    assert result.outcome == "blocked"
    assert result.iterations[0].test_summary.startswith("killed after")
    assert result.branch == "ourobot/T-1" and result.tests == "failed"  # kept for a human


def test_deleting_a_test_file_that_passed_at_the_base_is_measured(loop: Loop):
    # The static guards off, so the measurement alone stands between the model and `ready`.
    other = "def test_other():\n    assert True\n"
    loop.project(
        command=PYTEST,
        extra_config="guards: {test_tamper: false, max_deletions_per_iteration: 50}\n",
        budgets="{implementer_iterations: 2, test_timeout_s: 60}",
        files={"tests/test_other.py": other},
    )
    loop.models.script(IMPLEMENTER, *[edits_reply(FIX, delete_block("tests/test_calc.py"))] * 2)
    result = loop.run(TICKET)
    assert result.outcome == "blocked"
    assert {r.rule for _, r in result.refusals} == {"test-tamper"}, (result.refusals, loop.progress)
    assert "do not run any more: tests.test_calc.CalcTest::test_mul" in loop.prompts()[1]
    assert CALC_TESTS == (loop.repo.path / "tests/test_calc.py").read_text()


def test_a_halt_stops_a_running_test_and_the_cycle(loop: Loop):
    loop.project()
    hang = "\nimport subprocess, time\n\nclass Hang(unittest.TestCase):\n" \
           "    def test_hang(self):\n        subprocess.Popen(['sleep', '3599.65'])\n" \
           "        time.sleep(3600)\n"  # fmt: skip
    loop.models.script(IMPLEMENTER, edits_reply(FIX, append_block("tests/test_calc.py", hang)))
    halted = {"now": False}

    def cancel() -> bool:  # the halt arrives once the model has answered
        halted["now"] = halted["now"] or bool(loop.models.requests_for(IMPLEMENTER))
        return halted["now"]

    result = loop.run(TICKET, cancel=cancel)
    assert result.outcome == "blocked" and result.error_class == "halted"
    assert result.elapsed_s < 30
    assert running(b"3599.65") == []


def running(marker: bytes) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            continue  # exited while we looked
    return found


def test_light_mode_writes_nothing_and_asks_no_model(loop: Loop):
    loop.project(extra_config="mode: light\n")
    result = loop.run(TICKET)
    assert result.outcome == "blocked" and "mode is light" in result.reason
    assert loop.models.requests == [] and result.branch is None


def test_the_same_engine_runs_from_a_bare_mirror(loop: Loop):
    loop.project()
    mirror = loop.tmp / "mirror.git"
    loop.repo.git("clone", "-q", "--bare", str(loop.repo.path), str(mirror))
    loop.repo.path = mirror  # the cycle is given the mirror, as a GitHub job will be
    loop.models.script(IMPLEMENTER, edits_reply(FIX))
    result = loop.run(TICKET)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert "return a + b" in loop.repo.git("show", "ourobot/T-1:calc.py")


def test_the_blocked_reason_counts_refused_iterations_and_names_each_rule_once():
    from app.loop.apply import Refusal
    from app.loop.records import IterationRecord, refused_by

    first, second, third = (IterationRecord(n, "implement") for n in (1, 2, 3))
    first.refusals = [Refusal("deletions", None, "40 lines deleted, over the limit of 5")]
    third.refusals = [
        Refusal("deletions", None, "41 lines deleted"),
        Refusal("symlink", "docs/\x1blink", "points out of the worktree"),
    ]
    said = refused_by([first, second, third])
    assert said.startswith("; 2 of 3 iteration(s) were refused by the guards: ")
    assert "deletions (40 lines deleted, over the limit of 5)" in said
    assert "41 lines" not in said and "symlink (docs/" in said and "\x1b" not in said
    assert refused_by([second]) == ""


def test_a_long_refusal_in_the_blocked_reason_keeps_the_limit_it_broke():
    from app.loop.apply import Refusal
    from app.loop.records import IterationRecord, refused_by

    record = IterationRecord(1, "implement")
    files = ", ".join(f"src/package/module_{n}.py {n}" for n in range(6))
    reason = f"30 lines removed without replacement ({files}), over the limit of 5"
    record.refusals = [Refusal("deletions", None, reason)]
    said = refused_by([record])
    assert "deletions (30 lines removed without replacement (src/package/module_0.py" in said
    assert said.endswith(", over the limit of 5)") and " ... " in said
    assert len(said) < len(reason) + 60
