"""The gate end to end on the sandbox: what merges (exactly H, its tree, with a ledger row) and
the races around it (a push after the approval, a push during the merge call, the base moving,
two events at once), and a merge whose run died before it finished."""

from __future__ import annotations

import threading

import pytest

from tests.jobs.gate_check.conftest import GateWorld

pytestmark = pytest.mark.slow


def test_everything_met_merges_h_with_its_tree_and_a_ledger_row(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    result = gate.evaluate()
    assert result.step == "merge"
    assert result.merge is not None and result.merge.status == "merged"
    merged = result.merge.merged_sha
    assert gate.merge_calls() == 1
    assert gate.pull().merged
    assert gate.main_sha() == merged
    assert result.merge.tree_matches
    head_tree = gate.bot.rest.git.get_commit(gate.o, gate.r, gate.head).parsed_data.tree.sha
    assert result.merge.head_tree == result.merge.merged_tree == head_tree
    # The ledger row: merged SHA, both trees, every condition's evidence.
    [row] = [e for e in gate.merges_in_ledger() if e.outcome.artifact == "merged"]
    assert (row.outcome.execution, row.outcome.objective) == ("ok", "met")
    assert row.head_sha == gate.head and row.error_class is None
    assert row.detail["merged_sha"] == merged and row.detail["tree_matches"] is True
    conditions = {c["condition"]: c for c in row.detail["conditions"]}
    assert len(conditions) == 11 and all(c["met"] for c in conditions.values())
    assert "approver (write) approved" in conditions["approval"]["reason"]
    # The gate said success on H before the merge; the ticket is done and closed; branch gone.
    run = gate.gate_run()
    assert run.conclusion == "success" and "Merged as" in (run.output.summary or "")
    ticket = gate.bot.rest.issues.get(gate.o, gate.r, gate.ticket).parsed_data
    assert ticket.state == "closed"
    assert "ourobot:done" in [label.name for label in ticket.labels]
    refs = gate.world.sandbox.git("ls-remote", gate.world.repo.clone_url, cwd=gate.world.tmp_path,
                                  token=gate.world.repo.owner_token).stdout  # fmt: skip
    assert f"refs/heads/ourobot/issue-{gate.ticket}" not in refs
    comments = gate.bot.rest.issues.list_comments(gate.o, gate.r, gate.number).parsed_data
    assert any("the tree that was tested" in (c.body or "") for c in comments)
    # A second evaluation (a redelivered event) merges nothing and writes no second row.
    again = gate.evaluate()
    assert again.skipped == "the pull request is merged"
    assert gate.merge_calls() == 1
    assert len([e for e in gate.merges_in_ledger() if e.outcome.artifact == "merged"]) == 1


def test_a_merge_whose_run_died_is_finished_later_with_the_commit_it_made(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    # The merge call went through as ourobot, but its answer died with the run that made it.
    made = gate.bot.rest.pulls.merge(gate.o, gate.r, gate.number, sha=gate.head,
                                     merge_method="squash").parsed_data.sha  # fmt: skip
    # ourobot speaks 2026-03-10, where a pull request no longer names its merge commit.
    assert "merge_commit_sha" not in gate.bot.rest.pulls.get(gate.o, gate.r, gate.number).json()
    result = gate.evaluate()
    assert result.skipped == "the pull request is merged" and gate.merge_calls() == 1
    [row] = [e for e in gate.merges_in_ledger() if e.outcome.artifact == "merged"]
    assert row.detail["message"] == "merged (finished later)"
    assert row.detail["merged_sha"] == made and row.detail["tree_matches"] is True
    assert (row.outcome.objective, row.error_class) == ("met", None)
    comments = gate.bot.rest.issues.list_comments(gate.o, gate.r, gate.number).parsed_data
    assert any(f"as `{made}`" in (c.body or "") for c in comments)
    ticket = gate.bot.rest.issues.get(gate.o, gate.r, gate.ticket).parsed_data
    assert ticket.state == "closed"


def test_a_push_after_the_approval_waits_for_a_new_approval_of_the_new_head(
    gate: GateWorld,
) -> None:
    gate.green()
    gate.review()
    first = gate.head
    gate.push({"calc/extra.py": "X = 2\n"})
    gate.green()
    result = gate.evaluate()
    assert result.step == "wait" and gate.merge_calls() == 0
    run = gate.gate_run()
    assert run.conclusion == "failure" and run.output.title == "Not mergeable yet: approval"
    assert f"approver approved {first[:12]}, not the head {gate.head[:12]}" in run.output.summary
    gate.review()
    assert gate.evaluate().merge.status == "merged"  # type: ignore[union-attr]
    assert gate.pull().merged


def test_a_push_during_the_merge_call_is_a_409_and_nothing_lands(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    before = gate.main_sha()
    decided = gate.head
    # GitHub holds the merge call for a moment; a push lands meanwhile.
    gate.world.sandbox.control.add_fault("latency", method="PUT", path=r"/merge$", delay_s=1.5)
    pushed = threading.Event()

    def push_when_merging() -> None:
        while gate.merge_calls() == 0:
            threading.Event().wait(0.02)
        gate.push({"calc/extra.py": "X = 3\n"})
        pushed.set()

    pusher = threading.Thread(target=push_when_merging)
    pusher.start()
    result = gate.evaluate()
    pusher.join(30)
    assert pushed.is_set()
    assert result.merge is not None and result.merge.status == "head-moved"
    assert result.merge.head_sha == decided
    assert not gate.pull().merged and gate.main_sha() == before
    assert not [e for e in gate.merges_in_ledger() if e.outcome.artifact == "merged"]
    attempts = [e for e in gate.merges_in_ledger() if e.outcome.objective == "unmet"]
    assert attempts and attempts[0].detail["status"] == "head-moved"


def test_the_base_moving_after_every_check_passed_updates_ourobots_branch_not_the_merge(
    gate: GateWorld,
) -> None:
    gate.green()
    gate.review()
    stale = gate.head
    gate.move_base({"docs/other.md": "moved on\n"})
    result = gate.evaluate()
    assert result.step == "update-branch" and gate.merge_calls() == 0
    assert any("merged the base branch into its own branch" in n for n in result.notes)
    run = gate.gate_run(stale)
    assert run.conclusion == "failure" and "up-to-date" in run.output.title
    new_head = gate.pull().head.sha
    assert new_head != stale
    comparison = gate.bot.rest.repos.compare_commits(gate.o, gate.r, f"main...{new_head}")
    assert comparison.parsed_data.behind_by == 0
    # The new head starts over: nothing of the old head counts for it.
    gate.head = new_head
    again = gate.evaluate()
    assert again.step == "wait"
    missing = {c.name for c in again.decision.missing}  # type: ignore[union-attr]
    assert {"guards", "review", "approval", "ci"} <= missing
    gate.green()
    gate.review()
    done = gate.evaluate()
    assert done.merge is not None and done.merge.status == "merged" and done.merge.tree_matches


def test_two_events_at_once_make_at_most_one_merge_call(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    gate.world.sandbox.control.add_fault("latency", method="PUT", path=r"/merge$", delay_s=0.5)
    errors: list[BaseException] = []

    def evaluate() -> None:
        try:
            gate.evaluate()
        except AssertionError:
            pass  # this one folded into the other's run
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=evaluate) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert gate.merge_calls() == 1
    assert gate.pull().merged
