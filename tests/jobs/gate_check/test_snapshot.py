"""The snapshot read from GitHub (the sandbox): what `decide` gets for a real pull request, with
how many API calls, and what is left out when GitHub cannot say."""

from __future__ import annotations

import json
from typing import Any

import pytest
from githubkit import GitHub

from app.gate import decide, parse_state
from app.jobs.gate_snapshot import PullRef, base_config, build_state
from app.repo_config import load_repo_config
from tests.plugins.sandbox import SandboxHandle
from tests.sandbox.test_pull_rules import Pusher

pytestmark = pytest.mark.slow

OUTPUT = {"title": "t", "summary": "s"}


class World:
    def __init__(self, sandbox: SandboxHandle) -> None:
        self.sandbox = sandbox
        self.repo = sandbox.create_repo()
        assert self.repo.installation_id is not None
        self.pusher = Pusher(sandbox, self.repo)
        self.bot: GitHub[Any] = sandbox.github_installation(self.repo.installation_id)
        sandbox.create_user("alice")
        sandbox.control.set_permission(self.repo.owner, self.repo.name, "alice", "maintain")
        self.alice: GitHub[Any] = sandbox.github_user("alice")

    @property
    def o(self) -> str:
        return self.repo.owner

    @property
    def r(self) -> str:
        return self.repo.name

    def pull(self, files: dict[str, str] | None = None) -> tuple[PullRef, str]:
        head = self.pusher.branch("feature", files or {"a.txt": "a\n"})
        made = self.bot.rest.pulls.create(self.o, self.r, title="A", head="feature", base="main")
        return PullRef(self.o, self.r, made.parsed_data.number), head

    def green(self, head: str) -> None:
        for name in ("ourobot/guards", "ourobot/review"):
            self.bot.rest.checks.create(self.o, self.r, name=name, head_sha=head,
                                        conclusion="success", output=OUTPUT)  # fmt: skip
        self.bot.rest.repos.create_commit_status(self.o, self.r, head, state="success",
                                                 context="ci/lint")  # fmt: skip

    def calls(self) -> int:
        return int(self.sandbox.control.stats()["total"])


@pytest.fixture
def world(sandbox: SandboxHandle) -> World:
    return World(sandbox)


def snapshot(world: World, pull: PullRef, config: str | None = None) -> dict[str, Any]:
    return build_state(world.bot, pull, app_id=world.sandbox.app.id, halted=False,
                       config=load_repo_config(config))  # fmt: skip


def test_a_ready_pull_request_reads_as_merge_in_a_handful_of_calls(world: World) -> None:
    pull, head = world.pull()
    world.green(head)
    world.alice.rest.pulls.create_review(world.o, world.r, pull.number, commit_id=head,
                                         event="APPROVE")  # fmt: skip
    world.bot.rest.pulls.get(world.o, world.r, pull.number)  # the token is minted before
    before = world.calls()
    state = snapshot(world, pull)
    spent = world.calls() - before
    # pull, check runs, combined status, reviews, alice's permission, branch, compare.
    assert spent == 7
    decision = decide(state)
    assert decision.merge, decision.missing
    assert state["pr"]["head_sha"] == head and state["pr"]["behind_by"] == 0
    assert state["reviews"][0]["permission"] == "maintain"  # the role, not the legacy "write"
    # The snapshot is the state format: saved, it reads back to the same decision.
    assert decide(parse_state(json.dumps(state))).to_dict() == decision.to_dict()


def test_config_decides_which_calls_are_needed(world: World) -> None:
    pull, head = world.pull()
    world.green(head)
    world.bot.rest.pulls.get(world.o, world.r, pull.number)
    before = world.calls()
    config = "version: 1\nmerge: {required_checks: [ci/lint], require_up_to_date: false}\n"
    state = snapshot(world, pull, config)
    # No approval yet, so no permission to read; no branch, no compare.
    assert world.calls() - before == 4
    assert [c.name for c in decide(state).missing] == ["approval"]


def test_an_approval_of_an_earlier_head_reads_as_missing(world: World) -> None:
    pull, first = world.pull()
    world.alice.rest.pulls.create_review(world.o, world.r, pull.number, commit_id=first,
                                         event="APPROVE")  # fmt: skip
    head = world.pusher.branch("feature", {"a.txt": "a2\n"}, start="feature")
    world.green(head)
    state = snapshot(world, pull)
    assert state["pr"]["head_sha"] == head
    reason = decide(state).condition("approval").reason
    assert f"approved {first[:12]}, not the head" in reason


def test_base_moving_reads_as_behind_and_protection_as_required_checks(world: World) -> None:
    pull, head = world.pull()
    world.green(head)
    world.pusher.branch("main", {"b.txt": "b\n"})
    world.sandbox.control.set_branch_protection(world.o, world.r, "main", ["ci/test"])
    state = snapshot(world, pull)
    assert state["pr"]["behind_by"] == 1
    assert state["branch_protection_required_checks"] == ["ci/test"]
    missing = {c.name: c.reason for c in decide(state).missing}
    assert "ci/test not reported" in missing["ci"]
    assert "1 commit behind" in missing["up-to-date"]


def test_pro_mode_reads_the_file_list_for_protected_paths(world: World) -> None:
    pull, head = world.pull({".github/workflows/ci.yml": "on: push\n"})
    world.green(head)
    world.alice.rest.pulls.create_review(world.o, world.r, pull.number, commit_id=head,
                                         event="APPROVE")  # fmt: skip
    state = snapshot(world, pull, "version: 1\nmode: pro\n")
    assert state["pr"]["touches_protected"] is True
    reason = decide(state).condition("owner-approval").reason
    assert "alice has maintain access" in reason


def test_the_base_config_is_read_from_the_base_commit(world: World) -> None:
    pull, _ = world.pull()
    assert base_config(world.bot, pull, world.repo.head_sha).merge.required_checks is None
    world.pusher.branch("main", {".github/ourobot.yml": "version: 1\nmerge: {method: rebase}\n"})
    tip = world.bot.rest.repos.get_commit(world.o, world.r, "main").parsed_data.sha
    assert base_config(world.bot, pull, tip).merge.method == "rebase"
    assert base_config(world.bot, pull, "main").merge.method == "rebase"
