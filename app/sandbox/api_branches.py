"""REST routes about branches: a branch with its protection, comparing two commits, and
bringing a pull request's branch up to date with its base.

As on GitHub: `GET /branches/{branch}` shows the required status checks to any reader;
`compare/{base}...{head}` counts `ahead_by`/`behind_by` from the merge base; `update-branch`
merges the base into the head branch (a new head commit, a push and `synchronize`), refusing
with 422 when `expected_head_sha` is not the head any more.
"""

from __future__ import annotations

from starlette.routing import Route

from app.sandbox import pushes
from app.sandbox.api_pulls import find_pull
from app.sandbox.gitops import MergeConflict, RefConflict, RefUpdate
from app.sandbox.protection import protection_json
from app.sandbox.routing import (
    ApiError,
    Call,
    Reply,
    Services,
    actor,
    find_repo,
    not_found,
    rest_route,
)
from app.sandbox.serializers import commit_json, diff_entry_json

MAX_COMPARE_COMMITS = 250


# ----- routes -------------------------------------------------------------------------------------
def get_branch(call: Call) -> Reply:
    repo = find_repo(call)
    branch = call.params["branch"]
    git = call.sb.git(repo)
    sha = git.resolve(f"refs/heads/{branch}")
    if sha is None:
        raise ApiError(404, "Branch not found")
    api = f"{call.state.base_url}/repos/{repo.full_name}"
    body = {
        "name": branch,
        "commit": commit_json(call.state, repo, git.commit_info(sha)),
        "_links": {
            "self": f"{api}/branches/{branch}",
            "html": f"{call.state.base_url}/{repo.full_name}/tree/{branch}",
        },
        "protected": branch in repo.protections,
        "protection": protection_json(call.state, repo, branch),
        "protection_url": f"{api}/branches/{branch}/protection",
    }
    return Reply(body=body)


def compare(call: Call) -> Reply:
    repo = find_repo(call)
    base_name, sep, head_name = call.params["basehead"].partition("...")
    if not sep:
        raise not_found()
    git = call.sb.git(repo)
    base = git.resolve(base_name.rpartition(":")[2])
    head = git.resolve(head_name.rpartition(":")[2])
    if base is None or head is None:
        raise not_found()
    merge_base = git.merge_base(base, head)
    if merge_base is None:
        raise ApiError(404, f"No common ancestor between {base_name} and {head_name}.")
    ahead = git.commits_between(base, head)
    behind = len(git.commits_between(head, base))
    status = (
        "identical"
        if not ahead and not behind
        else "ahead"
        if not behind
        else "behind"
        if not ahead
        else "diverged"
    )
    api = f"{call.state.base_url}/repos/{repo.full_name}"
    html = f"{call.state.base_url}/{repo.full_name}"
    spec = call.params["basehead"]
    body = {
        "url": f"{api}/compare/{spec}",
        "html_url": f"{html}/compare/{spec}",
        "permalink_url": f"{html}/compare/{base}...{head}",
        "diff_url": f"{html}/compare/{spec}.diff",
        "patch_url": f"{html}/compare/{spec}.patch",
        "base_commit": commit_json(call.state, repo, git.commit_info(base)),
        "merge_base_commit": commit_json(call.state, repo, git.commit_info(merge_base)),
        "status": status,
        "ahead_by": len(ahead),
        "behind_by": behind,
        "total_commits": len(ahead),
        "commits": [commit_json(call.state, repo, c) for c in ahead[:MAX_COMPARE_COMMITS]],
        "files": [diff_entry_json(call.state, repo, head, c) for c in git.compare(base, head)],
    }
    return Reply(body=body)


def update_branch(call: Call) -> Reply:
    """Merge the base branch into the pull request's head branch, as the update button does."""
    repo = find_repo(call, "write")
    issue, pull = find_pull(call, repo)
    sender = actor(call)
    expected = call.json_field("expected_head_sha")
    if expected is not None and expected != pull.head_sha:
        raise ApiError(422, "expected head sha didn't match current head ref.")
    if issue.state != "open":
        raise ApiError(422, "Pull request is closed.")
    git = call.sb.git(repo)
    base_tip = git.resolve(f"refs/heads/{pull.base_ref}")
    if base_tip is None or git.merge_base(base_tip, pull.head_sha) == base_tip:
        raise ApiError(422, "There are no new commits on the base branch.")
    head_ref = f"refs/heads/{pull.head_ref}"
    try:
        new = git.merged_commit(
            pull.head_sha,
            base_tip,
            "merge",
            title=f"Merge branch '{pull.base_ref}' into {pull.head_ref}",
            author=(sender.login, sender.email),
        )
        git.update_ref(head_ref, new, pull.head_sha)
    except MergeConflict as exc:
        raise ApiError(422, "merge conflict between base and head") from exc
    except RefConflict as exc:
        raise ApiError(422, "expected head sha didn't match current head ref.") from exc
    pushes.refs_moved(call.sb, repo, [RefUpdate(head_ref, pull.head_sha, new)], sender)
    url = f"{call.state.base_url}/{repo.full_name}/pull/{issue.number}"
    return Reply(202, {"message": "Updating pull request branch.", "url": url})


def routes(sb: Services) -> list[Route]:
    base = "/repos/{owner}/{repo}"
    return [
        rest_route(sb, "GET", base + "/branches/{branch:path}", get_branch),
        rest_route(sb, "GET", base + "/compare/{basehead:path}", compare),
        rest_route(sb, "PUT", base + "/pulls/{number}/update-branch", update_branch),
    ]
