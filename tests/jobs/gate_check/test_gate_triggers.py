"""Which delivered events ask for a gate evaluation, with the payloads the sandbox really sends,
and that the gate's own check run never asks for one (no loop)."""

from __future__ import annotations

from typing import Any

import pytest

from app.jobs.registry import Job
from tests.jobs.gate_check.conftest import GateWorld

pytestmark = pytest.mark.slow


def gate_jobs(gate: GateWorld, event: str, action: str | None, where: Any) -> list[Job]:
    delivered = gate.world.sink.wait_for_one(event, action, where)
    jobs = gate.world.router.route(event, delivered.payload.get("action") or "",
                                   delivered.payload, delivery_id="t")  # fmt: skip
    return [job for job in jobs if job.name.startswith("gate_")]


def evaluates(gate: GateWorld, jobs: list[Job]) -> bool:
    return [(j.name, j.kwargs.get("number")) for j in jobs] == [("gate_evaluate", gate.number)]


def test_reviews_labels_pushes_and_checks_ask_for_an_evaluation(gate: GateWorld) -> None:
    gate.review()
    assert evaluates(gate, gate_jobs(gate, "pull_request_review", "submitted", lambda d: True))
    gate.bot.rest.issues.add_labels(gate.o, gate.r, gate.number, labels=["ourobot:hold"])
    assert evaluates(gate, gate_jobs(gate, "pull_request", "labeled", lambda d: True))
    old = gate.head
    gate.push({"calc/extra.py": "X = 9\n"})
    assert evaluates(gate, gate_jobs(gate, "pull_request", "synchronize",
                                     lambda d: d.payload["before"] == old))  # fmt: skip
    run_id = gate.run("ourobot/guards")
    assert evaluates(gate, gate_jobs(gate, "check_run", "completed",
                                     lambda d: d.payload["check_run"]["id"] == run_id))  # fmt: skip
    sandbox = gate.world.sandbox
    foreign = sandbox.control.actions_check_run(gate.o, gate.r, gate.head, "build")
    suite = gate_jobs(gate, "check_suite", "completed",
                      lambda d: d.payload["check_suite"]["app"]["id"] == foreign["app_id"])
    assert evaluates(gate, suite)
    gate.status()
    [status] = gate_jobs(gate, "status", None, lambda d: d.payload["sha"] == gate.head)
    assert status.name == "gate_for_commit"
    assert status.kwargs["branches"] == [f"ourobot/issue-{gate.ticket}"]


def test_the_gates_own_check_run_and_suite_ask_for_nothing(gate: GateWorld) -> None:
    gate.green()
    gate.evaluate()
    run_id = gate.gate_run().id
    own = gate_jobs(gate, "check_run", "completed",
                    lambda d: d.payload["check_run"]["id"] == run_id)  # fmt: skip
    assert own == []
    app_id = gate.world.sandbox.app.id
    suites = gate.world.sink.of("check_suite", "completed")
    ours = [d for d in suites if d.payload["check_suite"]["app"]["id"] == app_id]
    assert ours
    for delivered in ours:
        jobs = gate.world.router.route("check_suite", "completed", delivered.payload,
                                       delivery_id="t")  # fmt: skip
        assert [j for j in jobs if j.name.startswith("gate_")] == []


def test_a_push_to_the_base_asks_for_every_pull_request_into_it(gate: GateWorld) -> None:
    moved = gate.move_base({"docs/y.md": "y\n"})
    [job] = gate_jobs(gate, "push", None, lambda d: d.payload["after"] == moved
                      and d.payload["ref"] == "refs/heads/main")  # fmt: skip
    assert job.name == "gate_base_moved" and job.kwargs["base_ref"] == "main"
    gate.green()
    gate.review()
    gate.world.run(job)  # evaluates #number: behind the base, so ourobot updates its branch
    assert gate.pull().head.sha != gate.head
