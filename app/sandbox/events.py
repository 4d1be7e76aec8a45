"""Webhook payloads shaped like GitHub's, handed to the dispatcher.

Every event about a repository goes to the sandbox App only if the App is installed on that
repository (as on GitHub), and carries `installation`, `repository` and `sender`. Callers hold the
state lock, which fixes the delivery order.
"""

from __future__ import annotations

from typing import Any

from app.sandbox import pulls
from app.sandbox.gitops import ZERO_SHA, BareRepo, CommitInfo, GitError, RefUpdate
from app.sandbox.routing import Services
from app.sandbox.serializers import (
    JSON,
    check_run_json,
    comment_json,
    commit_json,
    installation_json,
    issue_json,
    label_json,
    repo_json,
    review_json,
    simple_installation_json,
    status_json,
    user_for_email,
    user_json,
)
from app.sandbox.state import (
    CheckRun,
    Comment,
    CommitStatus,
    Installation,
    Issue,
    Label,
    MergeGroup,
    Repo,
    Review,
    User,
    iso,
)

PUSH_COMMITS_LIMIT = 20


def _send(sb: Services, event: str, repo: Repo, sender: User, payload: JSON) -> None:
    inst = sb.state.installation_for(repo)
    if inst is None:
        return
    payload = {
        **payload,
        "repository": repo_json(sb.state, repo),
        "sender": user_json(sb.state, sender),
        "installation": simple_installation_json(inst),
    }
    sb.hooks.emit(event, payload, installation_id=inst.id, repository_id=repo.id)


def issues(sb: Services, action: str, repo: Repo, issue: Issue, sender: User, **extra: Any) -> None:
    """`issues.*`, or `pull_request.*` when the issue is a pull request (as GitHub does)."""
    if issue.pull is not None:
        pull_request(sb, action, repo, issue, sender, **extra)
        return
    payload = {"action": action, "issue": issue_json(sb.state, repo, issue), **extra}
    _send(sb, "issues", repo, sender, payload)


def labeled(
    sb: Services, action: str, repo: Repo, issue: Issue, label: Label, sender: User
) -> None:
    issues(sb, action, repo, issue, sender, label=label_json(sb.state, repo, label))


def issue_comment(
    sb: Services,
    action: str,
    repo: Repo,
    issue: Issue,
    comment: Comment,
    sender: User,
    **extra: Any,
) -> None:
    payload = {
        "action": action,
        "issue": issue_json(sb.state, repo, issue),
        "comment": comment_json(sb.state, repo, comment),
        **extra,
    }
    _send(sb, "issue_comment", repo, sender, payload)


def pull_request(
    sb: Services, action: str, repo: Repo, issue: Issue, sender: User, **extra: Any
) -> None:
    payload = {
        "action": action,
        "number": issue.number,
        "pull_request": pulls.full_json(sb.state, repo, issue),
        **extra,
    }
    _send(sb, "pull_request", repo, sender, payload)


def pull_request_review(
    sb: Services, action: str, repo: Repo, issue: Issue, review: Review, sender: User
) -> None:
    body = review_json(sb.state, repo, issue, review)
    # Webhooks spell review states in lower case ("approved"), unlike REST ("APPROVED").
    body["state"] = review.state.lower()
    payload = {
        "action": action,
        "review": body,
        "pull_request": pulls.full_json(sb.state, repo, issue),
    }
    _send(sb, "pull_request_review", repo, sender, payload)


def suite_node_id(suite_id: int) -> str:
    """The same node id in `check_run` and `check_suite` events (GitHub's schema: a string)."""
    return f"CS_{suite_id}"


def check_run(sb: Services, action: str, repo: Repo, run: CheckRun, sender: User) -> None:
    body = check_run_json(sb.state, repo, run)
    body["check_suite"] = {
        "id": run.suite_id,
        "node_id": suite_node_id(run.suite_id),
        "head_branch": None,
        "head_sha": run.head_sha,
        "status": run.status,
        "conclusion": run.conclusion,
        "app": body["app"],
        "pull_requests": body["pull_requests"],
        "created_at": iso(run.started_at),
        "updated_at": iso(run.completed_at or run.started_at),
        "url": f"{sb.state.base_url}/repos/{repo.full_name}/check-suites/{run.suite_id}",
        "before": None,
        "after": run.head_sha,
    }
    _send(sb, "check_run", repo, sender, {"action": action, "check_run": body})


# A suite's conclusion is its worst run's, in GitHub's order.
_SUITE_ORDER = (
    "action_required",
    "cancelled",
    "timed_out",
    "failure",
    "stale",
    "neutral",
    "skipped",
    "success",
)


def check_suite_completed(sb: Services, repo: Repo, run: CheckRun, sender: User) -> None:
    """`check_suite.completed`, when the last of a suite's runs (one App, one commit) completes."""
    runs = [r for r in repo.check_runs.values() if r.suite_id == run.suite_id]
    if any(r.status != "completed" for r in runs):
        return
    conclusions = {r.conclusion for r in runs}
    conclusion = next((c for c in _SUITE_ORDER if c in conclusions), None)
    body = check_run_json(sb.state, repo, run)
    info = BareRepo(repo.path).commit_info(run.head_sha)
    api = f"{sb.state.base_url}/repos/{repo.full_name}"
    suite = {
        "id": run.suite_id,
        "node_id": suite_node_id(run.suite_id),
        "head_branch": None,
        "head_sha": run.head_sha,
        "status": "completed",
        "conclusion": conclusion,
        "url": f"{api}/check-suites/{run.suite_id}",
        "check_runs_url": f"{api}/check-suites/{run.suite_id}/check-runs",
        "before": None,
        "after": run.head_sha,
        "app": body["app"],
        "pull_requests": body["pull_requests"],
        "latest_check_runs_count": len({r.name for r in runs}),
        "created_at": iso(min(r.started_at for r in runs)),
        "updated_at": iso(max(r.completed_at or r.started_at for r in runs)),
        "head_commit": {
            "id": info.sha,
            "tree_id": info.tree_sha,
            "message": info.message,
            "timestamp": info.committer_date,
            "author": {"name": info.author_name, "email": info.author_email},
            "committer": {"name": info.committer_name, "email": info.committer_email},
        },
    }
    _send(sb, "check_suite", repo, sender, {"action": "completed", "check_suite": suite})


def status(sb: Services, repo: Repo, record: CommitStatus, sender: User) -> None:
    git = BareRepo(repo.path)
    info = git.commit_info(record.sha)
    branches = [
        {
            "name": ref.removeprefix("refs/heads/"),
            "commit": {
                "sha": sha,
                "url": f"{sb.state.base_url}/repos/{repo.full_name}/commits/{sha}",
            },
            "protected": False,
        }
        for ref, sha in git.refs().items()
        if ref.startswith("refs/heads/") and sha == record.sha
    ]
    body = status_json(sb.state, repo, record)
    payload = {
        "id": record.id,
        "sha": record.sha,
        "name": repo.full_name,
        "target_url": record.target_url,
        "avatar_url": body["avatar_url"],
        "context": record.context,
        "description": record.description,
        "state": record.state,
        "commit": commit_json(sb.state, repo, info),
        "branches": branches,
        "created_at": body["created_at"],
        "updated_at": body["updated_at"],
    }
    _send(sb, "status", repo, sender, payload)


def _push_commit(sb: Services, repo: Repo, git: BareRepo, info: CommitInfo) -> JSON:
    try:
        parent = info.parents[0] if info.parents else None
        changes = git.compare(parent, info.sha) if parent else []
    except GitError:
        changes = []
    author = user_for_email(sb.state, info.author_email)
    committer = user_for_email(sb.state, info.committer_email)
    return {
        "id": info.sha,
        "tree_id": info.tree_sha,
        "distinct": True,
        "message": info.message,
        "timestamp": info.committer_date,
        "url": f"{sb.state.base_url}/{repo.full_name}/commit/{info.sha}",
        "author": {
            "name": info.author_name,
            "email": info.author_email,
            **({"username": author.login} if author else {}),
        },
        "committer": {
            "name": info.committer_name,
            "email": info.committer_email,
            **({"username": committer.login} if committer else {}),
        },
        "added": [c.filename for c in changes if c.status == "added"],
        "removed": [c.filename for c in changes if c.status == "removed"],
        "modified": [c.filename for c in changes if c.status not in ("added", "removed")],
    }


def push(sb: Services, repo: Repo, update: RefUpdate, sender: User) -> None:
    git = BareRepo(repo.path)
    created, deleted = update.before == ZERO_SHA, update.after == ZERO_SHA
    commits: list[CommitInfo] = []
    forced = False
    if not deleted:
        try:
            if created:
                base = git.resolve(f"refs/heads/{repo.default_branch}")
                commits = git.commits_between(base, update.after) if base else []
            else:
                forced = git.merge_base(update.before, update.after) != update.before
                commits = git.commits_between(update.before, update.after)
        except GitError:
            commits = []
    shown = [_push_commit(sb, repo, git, c) for c in commits[-PUSH_COMMITS_LIMIT:]]
    head = None if deleted else _push_commit(sb, repo, git, git.commit_info(update.after))
    repository = repo_json(sb.state, repo)
    # Push payloads carry the owner's name/email and epoch timestamps, unlike other events.
    repository["owner"] = {
        **repository["owner"],
        "name": repo.owner.login,
        "email": repo.owner.email,
    }
    repository["created_at"] = int(repo.created_at)
    repository["pushed_at"] = int(repo.pushed_at)
    repository["master_branch"] = repo.default_branch
    repository["stargazers"] = 0
    compare = (
        f"{sb.state.base_url}/{repo.full_name}/compare/{update.before[:12]}...{update.after[:12]}"
    )
    payload = {
        "ref": update.ref,
        "before": update.before,
        "after": update.after,
        "created": created,
        "deleted": deleted,
        "forced": forced,
        "base_ref": None,
        "compare": compare,
        "commits": shown,
        "head_commit": head,
        "pusher": {"name": sender.login, "email": sender.email},
    }
    inst = sb.state.installation_for(repo)
    if inst is None:
        return
    payload.update(
        repository=repository,
        sender=user_json(sb.state, sender),
        installation=simple_installation_json(inst),
    )
    sb.hooks.emit("push", payload, installation_id=inst.id, repository_id=repo.id)


def installation_created(sb: Services, inst: Installation, sender: User) -> None:
    repos = [r for r in sb.state.repos.values() if r.id in inst.repo_ids]
    payload = {
        "action": "created",
        "installation": installation_json(sb.state, inst),
        "repositories": [
            {
                "id": r.id,
                "node_id": repo_json(sb.state, r)["node_id"],
                "name": r.name,
                "full_name": r.full_name,
                "private": r.private,
            }
            for r in repos
        ],
        "requester": None,
        "sender": user_json(sb.state, sender),
    }
    sb.hooks.emit("installation", payload, installation_id=inst.id, repository_id=None)


def merge_group(
    sb: Services, action: str, repo: Repo, group: MergeGroup, sender: User, **extra: Any
) -> None:
    info = BareRepo(repo.path).commit_info(group.head_sha)
    payload = {
        "action": action,
        "merge_group": {
            "head_sha": group.head_sha,
            "head_ref": group.head_ref,
            "base_sha": group.base_sha,
            "base_ref": group.base_ref,
            "head_commit": {
                "id": info.sha,
                "tree_id": info.tree_sha,
                "message": info.message,
                "timestamp": info.committer_date,
                "author": {"name": info.author_name, "email": info.author_email},
                "committer": {"name": info.committer_name, "email": info.committer_email},
            },
        },
        **extra,
    }
    _send(sb, "merge_group", repo, sender, payload)
