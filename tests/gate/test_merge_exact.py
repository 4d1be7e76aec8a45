"""The SHA-pinned merge and ourobot's branch update, over githubkit against the sandbox: exactly
H merges (409 when the head moved, 405 when GitHub will not), the merged tree is compared with
H's tree, and update-branch is pinned to the head it was decided on."""

from __future__ import annotations

from typing import Any

import pytest
from githubkit import GitHub

from app.gate import decide, next_step
from app.gate.merge import merge_exact, update_own_branch
from tests.gate.states import edit, good
from tests.plugins.sandbox import SandboxHandle, SeededRepo
from tests.sandbox.test_pull_rules import Pusher

World = tuple[SeededRepo, Pusher, GitHub[Any]]


@pytest.fixture
def world(sandbox: SandboxHandle) -> World:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    return repo, Pusher(sandbox, repo), sandbox.github_installation(repo.installation_id)


def _pull(bot: GitHub[Any], repo: SeededRepo, branch: str) -> int:
    made = bot.rest.pulls.create(repo.owner, repo.name, title=branch, head=branch, base="main")
    return made.parsed_data.number


MERGE_ROUTE = "PUT /repos/{owner}/{repo}/pulls/{number}/merge"


def _merge_calls(sandbox: SandboxHandle) -> int:
    return int(sandbox.control.stats()["routes"].get(MERGE_ROUTE, 0))


@pytest.mark.slow
@pytest.mark.parametrize("method", ["squash", "merge", "rebase"])
def test_an_up_to_date_head_merges_and_the_merged_tree_is_the_heads_tree(
    world: World, method: Any
) -> None:
    repo, pusher, bot = world
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    result = merge_exact(bot, repo.owner, repo.name, number, head, method)
    assert result.status == "merged" and result.merged_sha
    assert result.tree_matches and result.head_tree == result.merged_tree
    main = bot.rest.repos.get_commit(repo.owner, repo.name, "main").parsed_data
    assert main.sha == result.merged_sha


@pytest.mark.slow
def test_a_push_after_the_decision_makes_the_merge_a_409_and_nothing_lands(
    sandbox: SandboxHandle, world: World
) -> None:
    repo, pusher, bot = world
    decided = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    pusher.branch("feature", {"a.txt": "sneaked in\n"}, start="feature")
    result = merge_exact(bot, repo.owner, repo.name, number, decided, "squash")
    assert result.status == "head-moved" and "Head branch was modified" in result.message
    assert (result.merged_sha, result.tree_matches) == (None, False)
    pull = bot.rest.pulls.get(repo.owner, repo.name, number).parsed_data
    assert (pull.state, pull.merged) == ("open", False)
    assert bot.rest.repos.get_commit(repo.owner, repo.name, "main").parsed_data.sha == repo.head_sha
    assert _merge_calls(sandbox) == 1


@pytest.mark.slow
def test_a_pull_request_github_will_not_merge_is_405(world: World) -> None:
    repo, pusher, bot = world
    head = pusher.branch("feature", {"README.md": "mine\n"})
    number = _pull(bot, repo, "feature")
    pusher.branch("main", {"README.md": "theirs\n"})
    result = merge_exact(bot, repo.owner, repo.name, number, head, "squash")
    assert result.status == "not-mergeable"


@pytest.mark.slow
def test_a_stale_tree_is_detected_after_a_merge_that_skipped_the_up_to_date_check(
    world: World,
) -> None:
    # What `sha=` alone lets through: the base moved, the head is still H, GitHub merges a tree
    # nobody tested. The gate never merges a head that is behind; this shows the check after
    # the merge sees it when something else did.
    repo, pusher, bot = world
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    pusher.branch("main", {"b.txt": "b\n"})
    result = merge_exact(bot, repo.owner, repo.name, number, head, "squash")
    assert result.status == "merged"
    assert result.head_tree and result.merged_tree and not result.tree_matches


@pytest.mark.slow
def test_update_own_branch_is_pinned_to_the_decided_head(world: World) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    pusher.branch("main", {"b.txt": "b\n"})
    stale = update_own_branch(bot, o, r, number, repo.head_sha)
    assert stale.status == "refused" and "expected head sha" in stale.message
    assert bot.rest.pulls.get(o, r, number).parsed_data.head.sha == head
    done = update_own_branch(bot, o, r, number, head)
    assert done.status == "updated"
    new = bot.rest.pulls.get(o, r, number).parsed_data.head.sha
    assert new != head
    assert bot.rest.repos.compare_commits(o, r, f"main...{new}").parsed_data.behind_by == 0
    # The new head is up to date: merging it lands exactly its tree.
    result = merge_exact(bot, o, r, number, new, "squash")
    assert result.status == "merged" and result.tree_matches


# ----- next_step (pure) ---------------------------------------------------------------------------
def test_next_step_merges_only_ourobots_pull_requests_or_on_request() -> None:
    decision = decide(good())
    assert next_step(decision, ourobot_pr=True, merge_requested=False) == "merge"
    assert next_step(decision, ourobot_pr=False, merge_requested=True) == "merge"
    assert next_step(decision, ourobot_pr=False, merge_requested=False) == "wait"


def test_next_step_updates_only_ourobots_own_branch_when_only_up_to_date_is_missing() -> None:
    behind = decide(edit(good(), "pr.behind_by", 2))
    assert next_step(behind, ourobot_pr=True, merge_requested=False) == "update-branch"
    assert next_step(behind, ourobot_pr=False, merge_requested=True) == "wait"
    unknown = decide(edit(good(), "pr.behind_by", None))
    assert next_step(unknown, ourobot_pr=True, merge_requested=False) == "update-branch"
    also_unapproved = decide(edit(edit(good(), "pr.behind_by", 2), "reviews", []))
    assert next_step(also_unapproved, ourobot_pr=True, merge_requested=True) == "wait"
