"""The SHA-pinned merge and ourobot's own branch update, over a GitHub client.

`merge_exact` merges only the head the decision was about: `PUT .../merge` with `sha=H`, so a
push during the decision makes GitHub answer 409 and nothing lands. `sha=` pins the head, not
the base; the decision's `up-to-date` condition pins the base (H contains its tip), and after
the merge the merged commit's tree is compared with H's tree: equal means the tree that landed
is the tree that was tested. A difference is recorded as an alarm, never hidden.

`update_own_branch` brings ourobot's own branch up to date with `expected_head_sha=H`, so a push
in between makes GitHub refuse (422) instead of merging the base into a head nobody looked at;
the new head then goes through every check again.

`merge_commit_of` names the commit a merged pull request made, for a merge whose answer is
gone (a crash after the merge call) and for `/ourobot revert` later on.

These functions hold no policy: whether to merge is `app.gate.decide`'s answer, and when to
update the branch is `app.gate.next_step`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from githubkit import GitHub
from githubkit.exception import RequestFailed

MergeStatus = Literal["merged", "head-moved", "not-mergeable", "refused"]
UpdateStatus = Literal["updated", "refused"]
MergeMethod = Literal["merge", "squash", "rebase"]

# The API version whose pull request still names its merge commit. ourobot speaks 2026-03-10
# (githubkit's), which removed `merge_commit_sha`; GitHub serves 2022-11-28 for at least 24
# months after 2026-03-10 came out, and answers 400, not a wrong commit, once it stops.
MERGE_COMMIT_API_VERSION = "2022-11-28"


@dataclass(frozen=True)
class MergeResult:
    status: MergeStatus
    message: str
    head_sha: str
    merged_sha: str | None = None
    head_tree: str | None = None
    merged_tree: str | None = None

    @property
    def tree_matches(self) -> bool:
        """The tree that landed is H's tree (False until known)."""
        return self.head_tree is not None and self.head_tree == self.merged_tree

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "head_sha": self.head_sha,
            "merged_sha": self.merged_sha,
            "head_tree": self.head_tree,
            "merged_tree": self.merged_tree,
            "tree_matches": self.tree_matches,
        }


@dataclass(frozen=True)
class UpdateResult:
    status: UpdateStatus
    message: str


def _message(exc: RequestFailed) -> str:
    try:
        body = exc.response.json()
    except ValueError:
        return exc.response.text[:200]
    message = body.get("message") if isinstance(body, dict) else None
    return str(message) if message else f"HTTP {exc.response.status_code}"


def tree_of(github: GitHub[Any], owner: str, repo: str, sha: str) -> str:
    return str(github.rest.git.get_commit(owner, repo, sha).parsed_data.tree.sha)


def merge_commit_of(github: GitHub[Any], owner: str, repo: str, number: int) -> str | None:
    """The commit merged pull request `number` made on its base, or None if GitHub names none.

    Asked with `X-GitHub-Api-Version: 2022-11-28` for this one call. The other two places
    GitHub still gives it do not reach these callers: the merge call's answer (`sha`) is
    used right after the merge, but it is exactly what a crash loses; the `pull_request.closed`
    webhook arrives once, to the App only, while a revert comes later and may run in the
    Action, and a recovery may be started by any event. This call answers for any merged pull
    request at any time, in the App and in the Action alike."""
    answer = github.rest.pulls.get(
        owner, repo, number, headers={"X-GitHub-Api-Version": MERGE_COMMIT_API_VERSION}
    )
    raw = answer.json()
    found = raw.get("merge_commit_sha") if isinstance(raw, dict) and raw.get("merged") else None
    return found if isinstance(found, str) and found else None


def merge_exact(
    github: GitHub[Any], owner: str, repo: str, number: int, head_sha: str, method: MergeMethod
) -> MergeResult:
    """Merge pull request `number` only if its head is still `head_sha`, then compare trees.

    409 (the head moved) and 405 (GitHub will not merge it now) are answers, not errors: the
    caller re-evaluates. Other failures raise, for the caller's retry policy."""
    try:
        answer = github.rest.pulls.merge(owner, repo, number, sha=head_sha, merge_method=method)
    except RequestFailed as exc:
        code = exc.response.status_code
        if code == 409:
            return MergeResult("head-moved", _message(exc), head_sha)
        if code == 405:
            return MergeResult("not-mergeable", _message(exc), head_sha)
        if code in (403, 422):
            return MergeResult("refused", _message(exc), head_sha)
        raise
    merged = answer.parsed_data
    if not merged.merged:
        return MergeResult("refused", merged.message, head_sha)
    head_tree = tree_of(github, owner, repo, head_sha)
    merged_tree = tree_of(github, owner, repo, merged.sha)
    return MergeResult("merged", merged.message, head_sha, merged.sha, head_tree, merged_tree)


def update_own_branch(
    github: GitHub[Any], owner: str, repo: str, number: int, head_sha: str
) -> UpdateResult:
    """Merge the base into the pull request's branch, only if its head is still `head_sha`."""
    try:
        answer = github.rest.pulls.update_branch(owner, repo, number, expected_head_sha=head_sha)
    except RequestFailed as exc:
        if exc.response.status_code in (403, 422):
            return UpdateResult("refused", _message(exc))
        raise
    return UpdateResult("updated", str(answer.parsed_data.message or "updating"))
