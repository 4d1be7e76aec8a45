"""The `ourobot/guards` check run end to end: pull requests on the sandbox, the router, the
job in-process, a real git mirror, and what GitHub then shows on each head SHA."""

from __future__ import annotations

import pytest
from sqlalchemy import delete

from app.controls.halt import Halted, installation_scope
from app.store.schema import effects
from tests.jobs.guards_check.conftest import (
    BIG_FILE,
    CONFIG_PATH,
    GuardsWorld,
    WorldFactory,
    big_text,
)

CLEAN = {"calc/ops.py": "def add(a: int, b: int) -> int:\n    return a + b\n\n\nX = 1\n"}
WORKFLOW = {".github/workflows/x.yml": "on: push\njobs: {}\n"}
CUT_300 = {BIG_FILE: big_text(100)}  # the 400-line guide loses 300 lines
CREATE_RUN = "POST /repos/{owner}/{repo}/check-runs"
UPDATE_RUN = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"


def head_of(payload: dict) -> str:
    return str(payload["pull_request"]["head"]["sha"])


def writes(world: GuardsWorld) -> int:
    return world.request_count(CREATE_RUN) + world.request_count(UPDATE_RUN)


# ---- verdicts ----------------------------------------------------------------------------------


def test_clean_bot_pull_gets_success_on_its_head_in_progress_first(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    payload = world.bot_pull(CLEAN)
    head = head_of(payload)

    assert len(world.handle(payload)) == 1

    run = world.only_run(head)
    assert (run.status, run.conclusion, run.head_sha) == ("completed", "success", head)
    assert run.output.title == f"No violations on {head[:12]}"
    assert f"head commit `{head}`" in run.output.summary
    assert "Pull request #1 (ourobot/issue-1 into main)" in run.output.summary
    assert "No violations." in run.output.summary
    assert run.external_id.startswith(f"guards:{head}:")
    assert world.annotations(run.id) == []
    created = world.sink.wait_for("check_run", "created")
    guards_created = [d for d in created if d.payload["check_run"]["name"] == "ourobot/guards"]
    assert [d.payload["check_run"]["status"] for d in guards_created] == ["in_progress"]
    world.sink.wait_for("check_run", "completed")


def test_bot_pull_deleting_300_lines_fails_with_a_deletions_annotation(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    payload = world.bot_pull(CUT_300)
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    assert "deletions" in run.output.title
    assert "300 lines deleted, over the limit of 200" in run.output.summary
    notes = world.annotations(run.id)
    assert [(n.path, n.title, n.annotation_level) for n in notes] == [
        (BIG_FILE, "deletions", "failure")
    ]
    assert "shrinks from 400 to 100 lines" in notes[0].message


def test_bot_pull_touching_a_workflow_fails_protected_path(make_world: WorldFactory) -> None:
    world = make_world()
    payload = world.bot_pull(WORKFLOW)
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    notes = world.annotations(run.id)
    assert [(n.path, n.title) for n in notes] == [(".github/workflows/x.yml", "protected-path")]


def test_a_pull_relaxing_the_config_in_its_head_is_judged_by_the_base_config(
    make_world: WorldFactory,
) -> None:
    world = make_world(config="version: 1\nguards:\n  max_deleted_lines: 200\n")
    relaxed = (
        "version: 1\nguards:\n  max_deleted_lines: null\n  max_file_shrink_percent: null\n"
        "  protected_paths: []\n"
    )
    payload = world.bot_pull({CONFIG_PATH: relaxed, **CUT_300})
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    rules = {n.title for n in world.annotations(run.id)}
    assert rules == {"deletions", "protected-path"}
    base = payload["pull_request"]["base"]["sha"]
    assert f"with the config .github/ourobot.yml@{base[:12]}" in run.output.summary


def test_a_human_pull_gets_no_check_unless_the_base_says_apply_to_all(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    feature = world.human_pull(CUT_300)
    # A person naming a branch `ourobot/...` does not make the PR ourobot's.
    imposter = world.human_pull(CUT_300, branch="ourobot/issue-9")
    for payload in (feature, imposter):
        assert len(world.handle(payload)) == 1  # routed: only the job can read apply_to
        assert world.guards_runs(head_of(payload)) == []
    assert writes(world) == 0


def test_apply_to_all_on_the_base_checks_a_human_pull(make_world: WorldFactory) -> None:
    world = make_world(config="version: 1\nguards:\n  apply_to: all\n")
    payload = world.human_pull(CUT_300)
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    assert "Pull request #1 (feature into main)" in run.output.summary


def test_invalid_base_config_fails_the_check_with_the_error_line(
    make_world: WorldFactory,
) -> None:
    world = make_world(config="version: 1\nguards:\n  max_delete_lines: 5\n")
    payload = world.bot_pull(CLEAN)
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    assert run.output.title == "Invalid .github/ourobot.yml on the base branch"
    first_line = run.output.summary.splitlines()[0]
    assert first_line.startswith(".github/ourobot.yml")
    assert "guards.max\\_delete\\_lines: unknown key" in first_line
    assert world.annotations(run.id) == []


def test_a_diff_over_the_size_limit_cannot_pass(make_world: WorldFactory) -> None:
    world = make_world(config="version: 1\nguards:\n  max_diff_bytes: 100\n")
    payload = world.bot_pull({"notes.txt": "a fairly long line of notes\n" * 20})
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    assert "size" in run.output.title


def test_more_than_50_annotations_go_in_batches_and_all_arrive(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    many = {f".github/workflows/w{n:02}.yml": "on: push\n" for n in range(60)}
    payload = world.bot_pull(many)
    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    notes = world.annotations(run.id)
    assert len(notes) == 60
    assert {n.title for n in notes} == {"protected-path"}
    # one create, one batch of 50 while in progress, the last 10 with the conclusion
    assert (world.request_count(CREATE_RUN), world.request_count(UPDATE_RUN)) == (1, 2)


# ---- one run per head SHA, never two -------------------------------------------------------------


def test_each_push_gets_its_own_run_and_the_old_verdict_stays_on_the_old_sha(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    token = world.installation_token()
    branch = world.push_branch("ourobot/issue-2", CLEAN, token=token)
    opened = world.open_pull(world.installation(), branch)
    old = head_of(opened)
    world.commit(branch, WORKFLOW, message="touch a workflow")
    synced = world.pull_event("synchronize", 1, branch.head)
    new = head_of(synced)
    assert new != old

    # The first event is handled only now, after the head moved: still judged on its own SHA.
    world.handle(opened)
    world.handle(synced)

    first, second = world.only_run(old), world.only_run(new)
    assert first.id != second.id
    assert (first.head_sha, first.conclusion) == (old, "success")
    assert (second.head_sha, second.conclusion) == (new, "failure")
    assert f"`{old}`" in first.output.summary
    assert f"`{new}`" in second.output.summary


def test_a_force_pushed_away_head_is_still_fetched_and_judged(make_world: WorldFactory) -> None:
    world = make_world()
    branch = world.push_branch("ourobot/issue-3", WORKFLOW, token=world.installation_token())
    opened = world.open_pull(world.installation(), branch)
    old = head_of(opened)
    world.commit(branch, CLEAN, message="replace", force=True)
    world.pull_event("synchronize", 1, branch.head)

    world.handle(opened)

    run = world.only_run(old)
    assert run.conclusion == "failure"  # the old commit's workflow change, not the new head
    assert {n.title for n in world.annotations(run.id)} == {"protected-path"}


def test_running_the_job_twice_posts_one_run(make_world: WorldFactory) -> None:
    world = make_world()
    payload = world.bot_pull(CUT_300)
    world.handle(payload)
    after_first = writes(world)

    world.handle(payload)  # a redelivered event: the local effect record says done
    with world.store.session() as session:
        session.execute(delete(effects))
    world.handle(payload)  # the record is lost: the completed run's external_id says done

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    assert len(world.annotations(run.id)) == 1
    assert writes(world) == after_first == 2


def test_a_502_on_creating_the_run_is_retried_and_one_run_results(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    payload = world.bot_pull(CLEAN)
    world.sandbox.control.add_fault("502", method="POST", path="/check-runs", times=1)

    world.handle(payload)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "success"
    assert world.request_count(CREATE_RUN) == 2  # the 502, then the retry
    fired = [f["fired"] for f in world.sandbox.control.stats()["faults"]]
    assert fired == [1]


# ---- refusing to act -----------------------------------------------------------------------------


def test_a_halted_installation_gets_no_check(make_world: WorldFactory) -> None:
    world = make_world()
    payload = world.bot_pull(CLEAN)
    world.halts.set(installation_scope(world.installation_id), reason="test", set_by="admin")

    with pytest.raises(Halted):
        world.handle(payload)

    assert world.guards_runs(head_of(payload)) == []
    assert writes(world) == 0


def test_a_base_that_cannot_be_fetched_fails_closed_and_is_retried_later(
    make_world: WorldFactory,
) -> None:
    world = make_world()
    payload = world.bot_pull(CLEAN)
    broken = {**payload, "pull_request": {**payload["pull_request"]}}
    broken["pull_request"]["base"] = {**payload["pull_request"]["base"], "ref": "gone"}

    world.handle(broken)

    run = world.only_run(head_of(payload))
    assert run.conclusion == "failure"
    assert run.output.title == "The change could not be evaluated"
    assert "gone" in run.output.summary
    token_free = run.output.summary.lower()
    assert "x-access-token" not in token_free and "authorization" not in token_free

    world.handle(payload)  # not recorded as done: the next delivery replaces the verdict
    run = world.only_run(head_of(payload))
    assert run.conclusion == "success"

    # A later failure to reach the base does not overwrite a verdict computed on this commit.
    before = writes(world)
    world.handle(broken)
    assert world.only_run(head_of(payload)).conclusion == "success"
    assert writes(world) == before
