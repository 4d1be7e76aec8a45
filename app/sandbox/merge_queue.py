"""GitHub's merge queue, reduced to what a required check sees: a pull request enters the
queue as a merge group (the base tip merged with the pull request, on a read-only
`gh-readonly-queue/<base>/pr-<n>-<base sha>` branch) and `merge_group.checks_requested` asks
for checks on that commit. Completing the group merges it only when branch protection's
required checks are green on the group's commit; otherwise the group is destroyed unmerged.

GitHub drives the queue itself (enqueueing is GraphQL-only), so these are setup operations
(`SandboxControl.enqueue`, `.complete_merge_group`), not REST routes.
"""

from __future__ import annotations

from app.sandbox import events, pushes
from app.sandbox.gitops import MergeConflict, RefUpdate
from app.sandbox.protection import merge_refusal
from app.sandbox.routing import Services
from app.sandbox.state import Issue, MergeGroup, Repo, User


class QueueError(Exception):
    """The pull request cannot enter the queue, or the group is unknown."""


def enqueue(sb: Services, repo: Repo, issue: Issue, sender: User) -> MergeGroup:
    pull = issue.pull
    if pull is None or issue.state != "open" or pull.merged:
        raise QueueError(f"#{issue.number} is not an open pull request")
    git = sb.git(repo)
    base_ref = f"refs/heads/{pull.base_ref}"
    base_sha = git.resolve(base_ref)
    if base_sha is None:
        raise QueueError(f"the base branch {pull.base_ref} does not exist")
    try:
        head_sha = git.merged_commit(
            base_sha,
            pull.head_sha,
            "merge",
            title=f"Merge pull request #{issue.number} from {repo.owner.login}/{pull.head_ref}",
            author=(sender.login, sender.email),
        )
    except MergeConflict as exc:
        raise QueueError(f"#{issue.number} does not merge cleanly: {exc}") from exc
    head_ref = f"refs/heads/gh-readonly-queue/{pull.base_ref}/pr-{issue.number}-{base_sha}"
    git.update_ref(head_ref, head_sha)
    group = MergeGroup(head_sha, head_ref, base_sha, base_ref, issue.number)
    repo.merge_groups.append(group)
    events.merge_group(sb, "checks_requested", repo, group, sender)
    sb.ci.trigger(repo, head_sha)
    return group


def complete(sb: Services, repo: Repo, head_sha: str, sender: User) -> bool:
    """Merge the group (fast-forward the base to its commit) if its required checks are green
    and the base has not moved; else destroy it. True when it merged."""
    group = next((g for g in repo.merge_groups if g.head_sha == head_sha), None)
    if group is None:
        raise QueueError(f"no merge group at {head_sha}")
    repo.merge_groups.remove(group)
    git = sb.git(repo)
    issue = repo.issues[group.pull_number]
    base_branch = group.base_ref.removeprefix("refs/heads/")
    refusal = merge_refusal(git, repo, base_branch, group.head_sha)
    current = git.resolve(group.base_ref)
    git.delete_ref(group.head_ref)
    if refusal is not None or current != group.base_sha or issue.pull is None:
        events.merge_group(sb, "destroyed", repo, group, sender, reason="invalidated")
        return False
    git.update_ref(group.base_ref, group.head_sha, group.base_sha)
    pull, now = issue.pull, sb.state.now()
    pull.base_sha, pull.merged, pull.merged_at, pull.merged_by = group.base_sha, True, now, sender
    pull.merge_commit_sha = group.head_sha
    issue.state, issue.closed_at, issue.closed_by, issue.updated_at = "closed", now, sender, now
    events.merge_group(sb, "destroyed", repo, group, sender, reason="merged")
    events.pull_request(sb, "closed", repo, issue, sender)
    update = RefUpdate(group.base_ref, group.base_sha, group.head_sha)
    pushes.refs_moved(sb, repo, [update], sender)
    return True
