"""What the merge gate reads and calls on GitHub, as the sandbox answers it: compare's
`behind_by`, update-branch pinned by `expected_head_sha`, branch protection's required checks
(shown on the branch, enforced on merge, strict = up to date) and the merge queue's
`merge_group` events."""

from __future__ import annotations

from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink
from tests.sandbox.test_pull_rules import Pusher

pytestmark = pytest.mark.slow

World = tuple[SeededRepo, Pusher, GitHub[Any]]


@pytest.fixture
def world(sandbox: SandboxHandle) -> World:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    return repo, Pusher(sandbox, repo), sandbox.github_installation(repo.installation_id)


def _status(excinfo: pytest.ExceptionInfo[RequestFailed]) -> tuple[int, str]:
    response = excinfo.value.response
    return response.status_code, response.json()["message"]


def _pull(bot: GitHub[Any], repo: SeededRepo, branch: str) -> int:
    made = bot.rest.pulls.create(repo.owner, repo.name, title=branch, head=branch, base="main")
    return made.parsed_data.number


def test_compare_counts_commits_on_each_side_of_the_merge_base(world: World) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    head = pusher.branch("feature", {"a.txt": "a\n"})
    same = bot.rest.repos.compare_commits(o, r, f"{head}...{head}").parsed_data
    assert (same.status, same.ahead_by, same.behind_by) == ("identical", 0, 0)
    ahead = bot.rest.repos.compare_commits(o, r, f"main...{head}").parsed_data
    assert (ahead.status, ahead.ahead_by, ahead.behind_by) == ("ahead", 1, 0)
    assert [f.filename for f in ahead.files or []] == ["a.txt"]
    pusher.branch("main", {"b.txt": "b\n"})
    pusher.branch("main", {"c.txt": "c\n"}, start="main")
    moved = bot.rest.repos.compare_commits(o, r, f"main...{head}").parsed_data
    assert (moved.status, moved.ahead_by, moved.behind_by) == ("diverged", 1, 2)
    assert moved.merge_base_commit.sha == repo.head_sha
    behind = bot.rest.repos.compare_commits(o, r, f"main...{repo.head_sha}").parsed_data
    assert (behind.status, behind.behind_by) == ("behind", 2)
    with pytest.raises(RequestFailed) as unknown:
        bot.rest.repos.compare_commits(o, r, f"main...{'f' * 40}")
    assert _status(unknown)[0] == 404


def test_update_branch_merges_the_base_into_the_head_pinned_to_the_expected_head(
    world: World, webhook_sink: WebhookSink
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    with pytest.raises(RequestFailed) as nothing_new:
        bot.rest.pulls.update_branch(o, r, number, expected_head_sha=head)
    assert _status(nothing_new) == (422, "There are no new commits on the base branch.")
    tip = pusher.branch("main", {"b.txt": "b\n"})
    with pytest.raises(RequestFailed) as stale:
        bot.rest.pulls.update_branch(o, r, number, expected_head_sha=repo.head_sha)
    assert _status(stale) == (422, "expected head sha didn't match current head ref.")
    assert bot.rest.pulls.get(o, r, number).parsed_data.head.sha == head
    answer = bot.rest.pulls.update_branch(o, r, number, expected_head_sha=head)
    assert answer.status_code == 202
    pull = bot.rest.pulls.get(o, r, number).parsed_data
    new = pull.head.sha
    commit = bot.rest.repos.get_commit(o, r, new).parsed_data
    assert [p.sha for p in commit.parents] == [head, tip]
    assert bot.rest.repos.compare_commits(o, r, f"main...{new}").parsed_data.behind_by == 0
    sync = webhook_sink.wait_for_one(
        "pull_request", "synchronize", lambda d: d.payload["after"] == new
    )
    assert sync.payload["before"] == head


def test_update_branch_with_a_conflict_is_refused_and_changes_nothing(world: World) -> None:
    repo, pusher, bot = world
    head = pusher.branch("feature", {"README.md": "mine\n"})
    number = _pull(bot, repo, "feature")
    pusher.branch("main", {"README.md": "theirs\n"})
    with pytest.raises(RequestFailed) as conflict:
        bot.rest.pulls.update_branch(repo.owner, repo.name, number, expected_head_sha=head)
    assert _status(conflict) == (422, "merge conflict between base and head")
    assert bot.rest.pulls.get(repo.owner, repo.name, number).parsed_data.head.sha == head


def test_update_branch_needs_write_access(sandbox: SandboxHandle, world: World) -> None:
    repo, pusher, bot = world
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    pusher.branch("main", {"b.txt": "b\n"})
    sandbox.create_user("reader")
    sandbox.control.set_permission(repo.owner, repo.name, "reader", "read")
    reader = sandbox.github_user("reader")
    with pytest.raises(RequestFailed) as refused:
        reader.rest.pulls.update_branch(repo.owner, repo.name, number, expected_head_sha=head)
    assert _status(refused)[0] == 403


def test_branch_protection_is_shown_on_the_branch_and_enforced_on_merge(
    sandbox: SandboxHandle, world: World
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    unprotected = bot.rest.repos.get_branch(o, r, "main").parsed_data
    assert not unprotected.protected
    assert unprotected.protection.required_status_checks
    assert unprotected.protection.required_status_checks.contexts == []
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    sandbox.control.set_branch_protection(o, r, "main", ["ci/test", "lint"], strict=True)
    branch = bot.rest.repos.get_branch(o, r, "main").parsed_data
    checks = branch.protection.required_status_checks
    assert branch.protected and checks and checks.contexts == ["ci/test", "lint"]
    with pytest.raises(RequestFailed) as waiting:
        bot.rest.pulls.merge(o, r, number, sha=head)
    assert _status(waiting) == (405, 'Required status check "ci/test" is expected.')
    bot.rest.checks.create(o, r, name="ci/test", head_sha=head, conclusion="success",
                           output={"title": "t", "summary": "s"})  # fmt: skip
    bot.rest.repos.create_commit_status(o, r, head, state="failure", context="lint")
    with pytest.raises(RequestFailed) as failing:
        bot.rest.pulls.merge(o, r, number, sha=head)
    assert _status(failing) == (405, 'Required status check "lint" is expected.')
    bot.rest.repos.create_commit_status(o, r, head, state="success", context="lint")
    pusher.branch("main", {"b.txt": "b\n"})
    with pytest.raises(RequestFailed) as behind:
        bot.rest.pulls.merge(o, r, number, sha=head)
    assert _status(behind) == (405, "Head branch is not up to date with the base branch.")
    sandbox.control.set_branch_protection(o, r, "main", ["ci/test", "lint"], strict=False)
    assert bot.rest.pulls.merge(o, r, number, sha=head).parsed_data.merged


def test_a_merge_group_asks_for_checks_on_its_own_commit_and_merges_only_when_green(
    sandbox: SandboxHandle, world: World, webhook_sink: WebhookSink
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    head = pusher.branch("feature", {"a.txt": "a\n"})
    number = _pull(bot, repo, "feature")
    sandbox.control.set_branch_protection(o, r, "main", ["ourobot/guards"])
    group = sandbox.control.enqueue(o, r, number)
    event = webhook_sink.wait_for("merge_group", "checks_requested")[0].payload["merge_group"]
    assert event["head_sha"] == group["head_sha"] != head
    assert event["base_sha"] == repo.head_sha and event["base_ref"] == "refs/heads/main"
    assert event["head_ref"].startswith("refs/heads/gh-readonly-queue/main/pr-")
    parents = bot.rest.repos.get_commit(o, r, group["head_sha"]).parsed_data.parents
    assert [p.sha for p in parents] == [repo.head_sha, head]
    # A check on the pull request's head is not a check on the group.
    bot.rest.checks.create(o, r, name="ourobot/guards", head_sha=head, conclusion="success",
                           output={"title": "t", "summary": "s"})  # fmt: skip
    assert not sandbox.control.complete_merge_group(o, r, group["head_sha"])
    destroyed = webhook_sink.wait_for("merge_group", "destroyed")[0].payload
    assert destroyed["reason"] == "invalidated"
    again = sandbox.control.enqueue(o, r, number)
    bot.rest.checks.create(o, r, name="ourobot/guards", head_sha=again["head_sha"],
                           conclusion="success", output={"title": "t", "summary": "s"})  # fmt: skip
    assert sandbox.control.complete_merge_group(o, r, again["head_sha"])
    assert bot.rest.repos.get_commit(o, r, "main").parsed_data.sha == again["head_sha"]
    done = bot.rest.pulls.get(o, r, number).parsed_data
    assert done.merged and done.state == "closed"
