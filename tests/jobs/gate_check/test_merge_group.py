"""GitHub's merge queue: `merge_group.checks_requested` -> ourobot's guards and review on the
queue's own commit, so the queue merges only what they passed."""

from __future__ import annotations

import pytest

from app.jobs.gate_merge_group import queued_pull
from tests.jobs.gate_check.conftest import GateWorld

pytestmark = pytest.mark.slow


def queue(gate: GateWorld) -> tuple[str, dict]:
    control = gate.world.sandbox.control
    control.set_branch_protection(gate.o, gate.r, "main", ["ourobot/guards", "ourobot/review"])
    group = control.enqueue(gate.o, gate.r, gate.number)
    delivered = gate.world.sink.wait_for_one(
        "merge_group", "checks_requested",
        lambda d: d.payload["merge_group"]["head_sha"] == group["head_sha"],
    )  # fmt: skip
    jobs = gate.world.router.route("merge_group", "checks_requested", delivered.payload,
                                   delivery_id="t")  # fmt: skip
    assert [j.name for j in jobs] == ["merge_group_checks"]
    for job in jobs:
        gate.world.run(job)
    runs = gate.bot.rest.checks.list_for_ref(gate.o, gate.r, group["head_sha"]).parsed_data
    by_name = {run.name: run for run in runs.check_runs}
    return group["head_sha"], by_name


def test_a_reviewed_up_to_date_head_passes_in_the_queue_and_merges(gate: GateWorld) -> None:
    gate.run("ourobot/review")
    sha, runs = queue(gate)
    assert runs["ourobot/guards"].conclusion == "success"
    assert runs["ourobot/guards"].app.id == gate.world.sandbox.app.id
    review = runs["ourobot/review"]
    assert review.conclusion == "success" and "Same tree" in review.output.title
    assert gate.world.sandbox.control.complete_merge_group(gate.o, gate.r, sha)
    assert gate.main_sha() == sha


def test_a_queue_commit_with_a_tree_nobody_reviewed_fails_the_review(gate: GateWorld) -> None:
    gate.run("ourobot/review")
    gate.move_base({"docs/other.md": "moved on\n"})
    sha, runs = queue(gate)
    assert runs["ourobot/guards"].conclusion == "success"  # the guards ran on this commit
    review = runs["ourobot/review"]
    assert review.conclusion == "failure" and "not the reviewed tree" in review.output.title
    assert not gate.world.sandbox.control.complete_merge_group(gate.o, gate.r, sha)
    assert not gate.pull().merged


def test_no_review_on_the_head_means_none_in_the_queue(gate: GateWorld) -> None:
    sha, runs = queue(gate)
    assert runs["ourobot/review"].conclusion == "failure"
    assert not gate.world.sandbox.control.complete_merge_group(gate.o, gate.r, sha)


def test_the_queue_ref_names_the_pull_request() -> None:
    assert queued_pull("refs/heads/gh-readonly-queue/main/pr-12-" + "a" * 40) == 12
    assert queued_pull("refs/heads/gh-readonly-queue/release/1.x/pr-3-" + "b" * 40) == 3
    assert queued_pull("refs/heads/main") is None
    assert queued_pull("refs/heads/gh-readonly-queue/main/pr-x-" + "a" * 40) is None
