"""One missing condition at a time on the sandbox: no merge call, and `ourobot/gate` on H fails
naming the condition and its reason."""

from __future__ import annotations

from typing import Any

import pytest

from app.controls.halt import Halted, installation_scope
from app.jobs.gate_check import MergeabilityPending
from app.jobs.registry import registered_jobs
from tests.jobs.gate_check.conftest import PEOPLE, GateWorld
from tests.jobs.guards_check.conftest import HUMAN, WorldFactory

pytestmark = pytest.mark.slow


def assert_waits(gate: GateWorld, condition: str, reason: str) -> Any:
    result = gate.evaluate()
    assert result.step == "wait" and gate.merge_calls() == 0
    assert not gate.pull().merged
    run = gate.gate_run()
    assert run.conclusion == "failure"
    assert condition in (run.output.title or "").removeprefix("Not mergeable yet: ").split(", ")
    row = next(line for line in (run.output.summary or "").splitlines() if f"`{condition}`" in line)
    assert "❌" in row and reason in row, row
    return run


def test_ci_missing(gate: GateWorld) -> None:
    gate.run("ourobot/guards")
    gate.run("ourobot/review")
    gate.review()
    assert_waits(gate, "ci", "no check run or status")


def test_ci_failing(gate: GateWorld) -> None:
    gate.green()
    gate.status("ci/test", "failure")
    gate.review()
    assert_waits(gate, "ci", "ci/test status failure")


def test_guards_failed(gate: GateWorld) -> None:
    gate.run("ourobot/guards", conclusion="failure")
    gate.run("ourobot/review")
    gate.status()
    gate.review()
    assert_waits(gate, "guards", "concluded failure")


def test_review_missing(gate: GateWorld) -> None:
    gate.run("ourobot/guards")
    gate.status()
    gate.review()
    assert_waits(gate, "review", "no ourobot/review check run")


def test_a_spoofed_guards_status_or_another_apps_run_never_counts(gate: GateWorld) -> None:
    gate.run("ourobot/review")
    gate.status()
    gate.status("ourobot/guards", "success")  # anyone with write access can post this
    sandbox = gate.world.sandbox
    other = sandbox.control.actions_check_run(gate.o, gate.r, gate.head, "ourobot/guards")
    gate.review()
    run = assert_waits(gate, "guards", "never counts")
    assert f"created by App {other['app_id']}" in (run.output.summary or "")


def test_approval_missing(gate: GateWorld) -> None:
    gate.green()
    assert_waits(gate, "approval", "no approval of")


@pytest.mark.parametrize("login", ["triager", "approver"])
def test_approval_by_someone_who_does_not_count(gate: GateWorld, login: str) -> None:
    gate.green()
    if login == "triager":
        gate.review("triager")
        assert_waits(gate, "approval", "triager has triage access")
    else:
        gate.review("approver", head=gate.world.repo.head_sha)  # an approval of another commit
        assert_waits(gate, "approval", "not the head")


def test_changes_requested(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    gate.review("maint", "REQUEST_CHANGES")
    assert_waits(gate, "changes-requested", "maint (maintain) requested changes")


def test_hold(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    gate.bot.rest.issues.add_labels(gate.o, gate.r, gate.number, labels=["ourobot:hold"])
    assert_waits(gate, "hold", "ourobot:hold label is set")


def test_halt_stops_the_gate_before_anything(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    gate.world.halts.set(installation_scope(gate.world.installation_id), reason="panic",
                         set_by="root")  # fmt: skip
    with pytest.raises(Halted):
        gate.evaluate()
    assert gate.merge_calls() == 0 and not gate.pull().merged
    assert gate.gate_runs() == []  # a halt refuses every write, the gate's own included


def test_not_mergeable_and_behind(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    gate.move_base({"calc/extra.py": "X = 'conflict'\n"})
    run = assert_waits(gate, "mergeable", "does not merge cleanly")
    assert "up-to-date" in (run.output.title or "")


def people_world(make_world: WorldFactory, config: str | None = None) -> Any:
    world = make_world(config)
    for login, level in PEOPLE.items():
        world.sandbox.create_user(login)
        world.sandbox.control.set_permission("octo", "demo", login, level)
    return world


def test_up_to_date_missing_on_a_persons_pull_request_waits(make_world: WorldFactory) -> None:
    world = people_world(make_world)
    payload = world.human_pull({"calc/extra.py": "X = 1\n"})
    branch = world.push_branch("side", {"docs/x.md": "x\n"}, token=world.repo.owner_token)
    world.sandbox.git("push", "-q", "origin", "side:main", cwd=branch.path,
                      token=world.repo.owner_token)  # fmt: skip
    gate = GateWorld(world, 0, payload["pull_request"]["number"],
                     payload["pull_request"]["head"]["sha"], None)  # fmt: skip
    gate.green()
    gate.review()
    # A person's branch is theirs: ourobot does not push to it, and /ourobot merge waits too.
    assert_waits(gate, "up-to-date", "1 commit behind")
    assert gate.evaluate(merge_requested_by="approver").step == "wait"
    assert gate.pull().head.sha == gate.head


def test_a_persons_ready_pull_request_merges_only_when_asked(make_world: WorldFactory) -> None:
    world = people_world(make_world)
    payload = world.human_pull({"calc/extra.py": "X = 1\n"})
    gate = GateWorld(world, 0, payload["pull_request"]["number"],
                     payload["pull_request"]["head"]["sha"], None)  # fmt: skip
    gate.green()
    gate.review()
    assert gate.evaluate().step == "wait" and gate.gate_run().conclusion == "success"
    assert gate.merge_calls() == 0
    assert gate.pull().user.login == HUMAN
    asked = gate.evaluate(merge_requested_by="approver")
    assert asked.merge is not None and asked.merge.status == "merged"


def test_draft(make_world: WorldFactory) -> None:
    world = people_world(make_world)
    branch = world.push_branch("ourobot/issue-9", {"calc/extra.py": "X = 1\n"},
                               token=world.installation_token())  # fmt: skip
    made = world.installation().rest.pulls.create(
        "octo", "demo", title="Draft", head=branch.name, base="main", draft=True
    ).parsed_data
    gate = GateWorld(world, 0, made.number, branch.head, branch)
    gate.green()
    gate.review()
    assert_waits(gate, "draft", "is a draft")


def test_owner_approval_in_pro_mode(make_world: WorldFactory) -> None:
    world = people_world(make_world, "version: 1\nmode: pro\n")
    branch = world.push_branch("ourobot/issue-9", {".github/workflows/ci.yml": "on: push\n"},
                               token=world.installation_token())  # fmt: skip
    payload = world.open_pull(world.installation(), branch)
    gate = GateWorld(world, 0, payload["pull_request"]["number"], branch.head, branch)
    gate.green()
    gate.review()
    assert_waits(gate, "owner-approval", "pro mode and a protected path changed")
    gate.review("root")
    assert gate.evaluate().merge.status == "merged"  # type: ignore[union-attr]


def test_mergeability_not_computed_yet_waits_and_asks_to_be_run_again(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    gate.world.sandbox.control.set_mergeable_unknown(gate.o, gate.r, gate.number, 1)
    job = registered_jobs()["gate_evaluate"]
    kwargs = {"installation_id": gate.world.installation_id, "repo": gate.world.repo.full_name,
              "number": gate.number}  # fmt: skip
    with pytest.raises(MergeabilityPending) as pending:
        job(gate.world.ctx, **kwargs)
    assert pending.value.retry_after_s > 0 and gate.merge_calls() == 0
    assert "not computed" in (gate.gate_run().output.summary or "")
    job(gate.world.ctx, **kwargs)  # the retry: GitHub has computed it now
    assert gate.pull().merged
