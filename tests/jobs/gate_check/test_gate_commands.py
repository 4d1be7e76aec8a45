"""The gate's slash commands through the real comment -> router -> command job path on the
sandbox: override (maintain, this head only), merge on request, hold and unhold, revert."""

from __future__ import annotations

import pytest

from app.controls.ledger import Ledger
from tests.jobs.gate_check.conftest import GateWorld

pytestmark = pytest.mark.slow


def guards_runs(gate: GateWorld) -> list:
    listed = gate.bot.rest.checks.list_for_ref(
        gate.o, gate.r, gate.head, check_name="ourobot/guards", filter_="all"
    ).parsed_data
    return list(listed.check_runs)


def test_an_override_by_a_triage_user_is_refused(gate: GateWorld) -> None:
    gate.run("ourobot/guards", conclusion="failure")
    before = len(guards_runs(gate))
    reply = gate.command("triager", "/ourobot override guards it is fine")
    assert "needs **maintain**" in reply and "you have **triage**" in reply
    assert len(guards_runs(gate)) == before
    assert Ledger(gate.world.store).entries(kind="override") == []


def test_an_override_by_a_maintainer_passes_that_check_on_this_head_only(gate: GateWorld) -> None:
    gate.run("ourobot/guards", conclusion="failure")
    gate.run("ourobot/review")
    gate.status()
    gate.review()
    gate.bot.rest.issues.add_labels(gate.o, gate.r, gate.number, labels=["ourobot:hold"])
    reply = gate.command("maint", "/ourobot override guards the 300 deleted lines were generated")
    assert f"overridden by @maint on `{gate.head}` only" in reply
    latest = max(guards_runs(gate), key=lambda r: r.id)
    assert latest.conclusion == "success" and latest.app.id == gate.world.sandbox.app.id
    assert "@maint" in latest.output.summary and "generated" in latest.output.summary
    [row] = Ledger(gate.world.store).entries(kind="override")
    assert row.detail["by"] == "maint" and row.head_sha == gate.head
    assert "generated" in row.detail["reason"]
    held = gate.evaluate()
    assert {c.name for c in held.decision.missing} == {"hold"}  # type: ignore[union-attr]
    # A push: the new head starts without the override.
    gate.push({"calc/extra.py": "X = 5\n"})
    gate.run("ourobot/guards", conclusion="failure")
    gate.run("ourobot/review")
    gate.status()
    gate.review()
    later = gate.evaluate()
    missing = {c.name for c in later.decision.missing}  # type: ignore[union-attr]
    assert "guards" in missing and gate.merge_calls() == 0


def test_override_needs_a_check_and_a_reason(gate: GateWorld) -> None:
    assert "needs a reason" in gate.command("maint", "/ourobot override guards")
    assert "only `guards` or `review`" in gate.command("maint", "/ourobot override ci flaky")
    assert Ledger(gate.world.store).entries(kind="override") == []


def test_merge_on_request_says_what_is_missing_then_merges(gate: GateWorld) -> None:
    gate.green()
    reply = gate.command("approver", "/ourobot merge")
    assert "not merged" in reply and "- `approval`:" in reply
    assert gate.merge_calls() == 0
    gate.review()
    reply = gate.command("approver", "/ourobot merge")
    assert reply.startswith(f"Merged `{gate.head}` as ")
    assert gate.pull().merged and gate.merge_calls() == 1


def test_merge_needs_write(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    reply = gate.command("triager", "/ourobot merge")
    assert "needs **write**" in reply and gate.merge_calls() == 0


def test_hold_and_unhold(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    assert "Held by @triager" in gate.command("triager", "/ourobot hold")
    labels = [label.name for label in gate.pull().labels]
    assert "ourobot:hold" in labels
    assert {c.name for c in gate.evaluate().decision.missing} == {"hold"}  # type: ignore[union-attr]
    assert "needs **write**" in gate.command("triager", "/ourobot unhold")
    assert "Hold lifted" in gate.command("approver", "/ourobot unhold")
    assert "ourobot:hold" not in [label.name for label in gate.pull().labels]
    assert gate.evaluate().merge.status == "merged"  # type: ignore[union-attr]


def test_revert_opens_a_pull_request_that_goes_through_the_gates(gate: GateWorld) -> None:
    gate.green()
    gate.review()
    merged = gate.evaluate().merge
    assert merged is not None and merged.status == "merged"
    reply = gate.command("approver", "/ourobot revert")
    assert reply.startswith("Opened #")
    number = int(reply.removeprefix("Opened #").split(" ", 1)[0])
    revert = gate.bot.rest.pulls.get(gate.o, gate.r, number).parsed_data
    assert revert.head.ref == f"ourobot/revert-{gate.number}" and revert.base.ref == "main"
    # The commit it reverts is the one the merge made, though 2026-03-10 pulls do not name it.
    assert f"(merged as `{merged.merged_sha}`)" in (revert.body or "")
    files = gate.bot.rest.pulls.list_files(gate.o, gate.r, number).parsed_data
    assert [(f.filename, f.status) for f in files] == [("calc/extra.py", "removed")]
    # Asking again finds it; the revert itself waits for every check like any change.
    assert f"already open: #{number}" in gate.command("approver", "/ourobot revert")
    revert_gate = GateWorld(gate.world, 0, number, revert.head.sha, None)
    result = revert_gate.evaluate()
    assert result.step == "wait"
    missing = {c.name for c in result.decision.missing}  # type: ignore[union-attr]
    assert {"guards", "review", "approval", "ci"} <= missing


def test_revert_of_a_pull_request_ourobot_did_not_merge_is_refused(gate: GateWorld) -> None:
    assert "is not merged" in gate.command("approver", "/ourobot revert")
