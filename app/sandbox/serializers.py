"""GitHub-shaped JSON for the sandbox's objects.

Shapes follow GitHub's REST responses and webhook payloads (the union of both where they share an
object, since extra keys are harmless and missing ones are not). The test suite holds them to
githubkit's own typed models. URLs point at the sandbox itself: the API lives at the root and the
"web" pages share the same host.
"""

from __future__ import annotations

import base64
import zlib
from typing import Any

from app.sandbox.gitops import CommitInfo, FileChange, TreeEntry
from app.sandbox.state import (
    AppRecord,
    Attempt,
    CheckRun,
    Comment,
    CommitStatus,
    Installation,
    Issue,
    Label,
    Pull,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    SandboxState,
    User,
    WorkflowRun,
    iso,
    level_at_least,
)

JSON = dict[str, Any]

REACTION_KEYS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
ROLE_TO_LEGACY = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}


def node_id(kind: str, ident: int) -> str:
    return base64.b64encode(f"0:{kind}{ident}".encode()).decode().rstrip("=")


# ----- users, Apps, installations ----------------------------------------------------------------
def user_json(state: SandboxState, user: User) -> JSON:
    api = f"{state.base_url}/users/{user.login}"
    return {
        "login": user.login,
        "id": user.id,
        "node_id": node_id("User", user.id),
        "avatar_url": f"{state.base_url}/avatars/u/{user.id}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{state.base_url}/{user.login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": user.type,
        "user_view_type": "public",
        "site_admin": False,
    }


def private_user_json(state: SandboxState, user: User) -> JSON:
    """`GET /user` for a person's own token."""
    created = iso(user.created_at)
    return {
        **user_json(state, user),
        "name": user.name,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "twitter_username": None,
        "notification_email": None,
        "public_repos": 0,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": created,
        "updated_at": created,
        "private_gists": 0,
        "total_private_repos": 0,
        "owned_private_repos": 0,
        "disk_usage": 0,
        "collaborators": 0,
        "two_factor_authentication": False,
        "plan": {"name": "free", "space": 976562499, "private_repos": 10000, "collaborators": 0},
    }


def app_json(state: SandboxState, app: AppRecord) -> JSON:
    created = iso(app.created_at)
    return {
        "id": app.id,
        "slug": app.slug,
        "node_id": node_id("Integration", app.id),
        "client_id": app.client_id,
        "owner": user_json(state, app.owner),
        "name": app.name,
        "description": "A GitHub App served by the local sandbox",
        "external_url": f"{state.base_url}/apps/{app.slug}",
        "html_url": f"{state.base_url}/apps/{app.slug}",
        "created_at": created,
        "updated_at": created,
        "permissions": dict(app.permissions),
        "events": list(app.events),
        "installations_count": len(state.installations),
    }


def installation_json(state: SandboxState, inst: Installation) -> JSON:
    created = iso(inst.created_at)
    api = f"{state.base_url}/app/installations/{inst.id}"
    return {
        "id": inst.id,
        "client_id": inst.app.client_id,
        "account": user_json(state, inst.account),
        "repository_selection": "selected",
        "access_tokens_url": f"{api}/access_tokens",
        "repositories_url": f"{state.base_url}/installation/repositories",
        "html_url": f"{state.base_url}/settings/installations/{inst.id}",
        "app_id": inst.app.id,
        "app_slug": inst.app.slug,
        "target_id": inst.account.id,
        "target_type": "Organization" if inst.account.type == "Organization" else "User",
        "permissions": dict(inst.app.permissions),
        "events": list(inst.app.events),
        "created_at": created,
        "updated_at": created,
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_by": None,
        "suspended_at": None,
    }


def simple_installation_json(inst: Installation) -> JSON:
    """The `installation` key every App webhook carries."""
    return {"id": inst.id, "node_id": node_id("Installation", inst.id)}


# ----- repositories -------------------------------------------------------------------------------
def _repo_urls(state: SandboxState, repo: Repo) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}"
    html = f"{state.base_url}/{repo.full_name}"
    return {
        "html_url": html,
        "url": api,
        "forks_url": f"{api}/forks",
        "keys_url": f"{api}/keys{{/key_id}}",
        "collaborators_url": f"{api}/collaborators{{/collaborator}}",
        "teams_url": f"{api}/teams",
        "hooks_url": f"{api}/hooks",
        "issue_events_url": f"{api}/issues/events{{/number}}",
        "events_url": f"{api}/events",
        "assignees_url": f"{api}/assignees{{/user}}",
        "branches_url": f"{api}/branches{{/branch}}",
        "tags_url": f"{api}/tags",
        "blobs_url": f"{api}/git/blobs{{/sha}}",
        "git_tags_url": f"{api}/git/tags{{/sha}}",
        "git_refs_url": f"{api}/git/refs{{/sha}}",
        "trees_url": f"{api}/git/trees{{/sha}}",
        "statuses_url": f"{api}/statuses/{{sha}}",
        "languages_url": f"{api}/languages",
        "stargazers_url": f"{api}/stargazers",
        "contributors_url": f"{api}/contributors",
        "subscribers_url": f"{api}/subscribers",
        "subscription_url": f"{api}/subscription",
        "commits_url": f"{api}/commits{{/sha}}",
        "git_commits_url": f"{api}/git/commits{{/sha}}",
        "comments_url": f"{api}/comments{{/number}}",
        "issue_comment_url": f"{api}/issues/comments{{/number}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "merges_url": f"{api}/merges",
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "downloads_url": f"{api}/downloads",
        "issues_url": f"{api}/issues{{/number}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "milestones_url": f"{api}/milestones{{/number}}",
        "notifications_url": f"{api}/notifications{{?since,all,participating}}",
        "labels_url": f"{api}/labels{{/name}}",
        "releases_url": f"{api}/releases{{/id}}",
        "deployments_url": f"{api}/deployments",
        "git_url": f"{state.base_url.replace('http', 'git', 1)}/{repo.full_name}.git",
        "ssh_url": f"git@127.0.0.1:{repo.full_name}.git",
        "clone_url": f"{state.base_url}/{repo.full_name}.git",
        "svn_url": html,
        "mirror_url": None,
        "homepage": None,
    }


def repo_permissions_json(level: str) -> JSON:
    return {
        "admin": level_at_least(level, "admin"),
        "maintain": level_at_least(level, "maintain"),
        "push": level_at_least(level, "write"),
        "triage": level_at_least(level, "triage"),
        "pull": level_at_least(level, "read"),
    }


def repo_json(state: SandboxState, repo: Repo, *, level: str | None = None) -> JSON:
    """A full repository; `level` adds the caller's `permissions` object, as REST does."""
    open_issues = sum(1 for i in repo.issues.values() if i.state == "open")
    out: JSON = {
        "id": repo.id,
        "node_id": node_id("Repository", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
        "owner": user_json(state, repo.owner),
        "description": repo.description,
        "fork": False,
        **_repo_urls(state, repo),
        "created_at": iso(repo.created_at),
        "updated_at": iso(repo.pushed_at),
        "pushed_at": iso(repo.pushed_at),
        "size": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "language": None,
        "has_issues": True,
        "has_projects": False,
        "has_downloads": True,
        "has_wiki": False,
        "has_pages": False,
        "has_discussions": False,
        "forks_count": 0,
        "archived": False,
        "disabled": False,
        "open_issues_count": open_issues,
        "license": None,
        "allow_forking": True,
        "is_template": False,
        "web_commit_signoff_required": False,
        "topics": [],
        "visibility": "private" if repo.private else "public",
        "forks": 0,
        "open_issues": open_issues,
        "watchers": 0,
        "default_branch": repo.default_branch,
        "allow_squash_merge": True,
        "allow_merge_commit": True,
        "allow_rebase_merge": True,
        "allow_auto_merge": False,
        "delete_branch_on_merge": False,
        "allow_update_branch": False,
        "use_squash_pr_title_as_default": False,
        "squash_merge_commit_title": "COMMIT_OR_PR_TITLE",
        "squash_merge_commit_message": "COMMIT_MESSAGES",
        "merge_commit_title": "MERGE_MESSAGE",
        "merge_commit_message": "PR_TITLE",
        "custom_properties": {},
        "network_count": 0,
        "subscribers_count": 0,
    }
    if level is not None:
        out["permissions"] = repo_permissions_json(level)
    return out


def minimal_repo_json(state: SandboxState, repo: Repo) -> JSON:
    """The short repository object inside combined statuses and installation events."""
    return {
        "id": repo.id,
        "node_id": node_id("Repository", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
    }


def author_association(state: SandboxState, repo: Repo, user: User) -> str:
    if user.id == repo.owner.id:
        return "OWNER"
    if state.permission(repo, user) != "none":
        return "COLLABORATOR"
    return "NONE"


# ----- labels, reactions, comments, issues --------------------------------------------------------
def label_json(state: SandboxState, repo: Repo, label: Label) -> JSON:
    return {
        "id": label.id,
        "node_id": node_id("Label", label.id),
        "url": f"{state.base_url}/repos/{repo.full_name}/labels/{label.name}",
        "name": label.name,
        "description": label.description,
        "color": label.color,
        "default": label.default,
        "archived_at": None,
        "archived_by": None,
    }


def reactions_rollup(url: str, reactions: list[Reaction]) -> JSON:
    counts = {key: sum(1 for r in reactions if r.content == key) for key in REACTION_KEYS}
    return {"url": url, "total_count": len(reactions), **counts}


def reaction_json(state: SandboxState, reaction: Reaction) -> JSON:
    return {
        "id": reaction.id,
        "node_id": node_id("Reaction", reaction.id),
        "user": user_json(state, reaction.user),
        "content": reaction.content,
        "created_at": iso(reaction.created_at),
    }


def comment_json(state: SandboxState, repo: Repo, comment: Comment) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}/issues/comments/{comment.id}"
    html = f"{state.base_url}/{repo.full_name}/issues/{comment.issue_number}"
    return {
        "id": comment.id,
        "node_id": node_id("IssueComment", comment.id),
        "url": api,
        "html_url": f"{html}#issuecomment-{comment.id}",
        "issue_url": f"{state.base_url}/repos/{repo.full_name}/issues/{comment.issue_number}",
        "body": comment.body,
        "user": user_json(state, comment.user),
        "created_at": iso(comment.created_at),
        "updated_at": iso(comment.updated_at),
        "author_association": author_association(state, repo, comment.user),
        "performed_via_github_app": app_json(state, comment.app) if comment.app else None,
        "reactions": reactions_rollup(f"{api}/reactions", comment.reactions),
        "pin": None,
    }


def issue_json(state: SandboxState, repo: Repo, issue: Issue) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}/issues/{issue.number}"
    kind = "pull" if issue.pull else "issues"
    out: JSON = {
        "id": issue.id,
        "node_id": node_id("Issue", issue.id),
        "url": api,
        "repository_url": f"{state.base_url}/repos/{repo.full_name}",
        "labels_url": f"{api}/labels{{/name}}",
        "comments_url": f"{api}/comments",
        "events_url": f"{api}/events",
        "html_url": f"{state.base_url}/{repo.full_name}/{kind}/{issue.number}",
        "number": issue.number,
        "state": issue.state,
        "state_reason": issue.state_reason,
        "title": issue.title,
        "body": issue.body,
        "user": user_json(state, issue.user),
        "labels": [label_json(state, repo, label) for label in issue.labels],
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "active_lock_reason": None,
        "comments": len(issue.comment_ids),
        "closed_at": iso(issue.closed_at) if issue.closed_at else None,
        "created_at": iso(issue.created_at),
        "updated_at": iso(issue.updated_at),
        "closed_by": user_json(state, issue.closed_by) if issue.closed_by else None,
        "author_association": author_association(state, repo, issue.user),
        "performed_via_github_app": None,
        "reactions": reactions_rollup(f"{api}/reactions", issue.reactions),
        "timeline_url": f"{api}/timeline",
        "draft": issue.pull.draft if issue.pull else False,
    }
    if issue.pull:
        pulls = f"{state.base_url}/repos/{repo.full_name}/pulls/{issue.number}"
        html = f"{state.base_url}/{repo.full_name}/pull/{issue.number}"
        out["pull_request"] = {
            "url": pulls,
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "merged_at": iso(issue.pull.merged_at) if issue.pull.merged_at else None,
        }
    return out


# ----- pull requests ------------------------------------------------------------------------------
def _branch_json(state: SandboxState, repo: Repo, ref: str, sha: str) -> JSON:
    return {
        "label": f"{repo.owner.login}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": user_json(state, repo.owner),
        "repo": repo_json(state, repo),
    }


def _pull_links(state: SandboxState, repo: Repo, issue: Issue, head_sha: str) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}"
    return {
        "self": {"href": f"{api}/pulls/{issue.number}"},
        "html": {"href": f"{state.base_url}/{repo.full_name}/pull/{issue.number}"},
        "issue": {"href": f"{api}/issues/{issue.number}"},
        "comments": {"href": f"{api}/issues/{issue.number}/comments"},
        "review_comments": {"href": f"{api}/pulls/{issue.number}/comments"},
        "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
        "commits": {"href": f"{api}/pulls/{issue.number}/commits"},
        "statuses": {"href": f"{api}/statuses/{head_sha}"},
    }


def pull_simple_json(state: SandboxState, repo: Repo, issue: Issue, pull: Pull) -> JSON:
    """The pull request object of list responses (no merge or size details)."""
    api = f"{state.base_url}/repos/{repo.full_name}"
    html = f"{state.base_url}/{repo.full_name}/pull/{issue.number}"
    return {
        "url": f"{api}/pulls/{issue.number}",
        "id": pull.id,
        "node_id": node_id("PullRequest", pull.id),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{issue.number}",
        "commits_url": f"{api}/pulls/{issue.number}/commits",
        "review_comments_url": f"{api}/pulls/{issue.number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{issue.number}/comments",
        "statuses_url": f"{api}/statuses/{pull.head_sha}",
        "number": issue.number,
        "state": issue.state,
        "locked": False,
        "title": issue.title,
        "user": user_json(state, issue.user),
        "body": issue.body,
        "labels": [label_json(state, repo, label) for label in issue.labels],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": iso(issue.created_at),
        "updated_at": iso(issue.updated_at),
        "closed_at": iso(issue.closed_at) if issue.closed_at else None,
        "merged_at": iso(pull.merged_at) if pull.merged_at else None,
        "merge_commit_sha": pull.merge_commit_sha,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": _branch_json(state, repo, pull.head_ref, pull.head_sha),
        "base": _branch_json(state, repo, pull.base_ref, pull.base_sha),
        "_links": _pull_links(state, repo, issue, pull.head_sha),
        "author_association": author_association(state, repo, issue.user),
        "auto_merge": None,
        "draft": pull.draft,
    }


def pull_json(
    state: SandboxState,
    repo: Repo,
    issue: Issue,
    pull: Pull,
    *,
    mergeable: bool | None,
    sizes: tuple[int, int, int, int],
) -> JSON:
    """A full pull request. `sizes` is (commits, additions, deletions, changed_files)."""
    commits, additions, deletions, changed = sizes
    if pull.merged or issue.state == "closed" or mergeable is None:
        mergeable_state = "unknown"
    else:
        mergeable_state = "clean" if mergeable else "dirty"
    return {
        **pull_simple_json(state, repo, issue, pull),
        "merged": pull.merged,
        "mergeable": mergeable,
        "rebaseable": mergeable,
        "mergeable_state": mergeable_state,
        "merged_by": user_json(state, pull.merged_by) if pull.merged_by else None,
        "comments": len(issue.comment_ids),
        "review_comments": sum(len(r.comments) for r in pull.reviews),
        "maintainer_can_modify": pull.maintainer_can_modify,
        "commits": commits,
        "additions": additions,
        "deletions": deletions,
        "changed_files": changed,
    }


def review_json(state: SandboxState, repo: Repo, issue: Issue, review: Review) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}/pulls/{issue.number}"
    html = f"{state.base_url}/{repo.full_name}/pull/{issue.number}"
    out: JSON = {
        "id": review.id,
        "node_id": node_id("PullRequestReview", review.id),
        "user": user_json(state, review.user),
        "body": review.body,
        "state": review.state,
        "html_url": f"{html}#pullrequestreview-{review.id}",
        "pull_request_url": api,
        "_links": {
            "html": {"href": f"{html}#pullrequestreview-{review.id}"},
            "pull_request": {"href": api},
        },
        "commit_id": review.commit_id,
        "author_association": author_association(state, repo, review.user),
    }
    if review.submitted_at is not None:
        out["submitted_at"] = iso(review.submitted_at)
    return out


def review_comment_json(
    state: SandboxState, repo: Repo, issue: Issue, comment: ReviewComment
) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}/pulls/comments/{comment.id}"
    pull_api = f"{state.base_url}/repos/{repo.full_name}/pulls/{issue.number}"
    html = f"{state.base_url}/{repo.full_name}/pull/{issue.number}#discussion_r{comment.id}"
    return {
        "url": api,
        "pull_request_review_id": comment.review_id,
        "id": comment.id,
        "node_id": node_id("PullRequestReviewComment", comment.id),
        "diff_hunk": comment.diff_hunk,
        "path": comment.path,
        # Comments are made on the head they name and never replied to here, so the original
        # place is the place, and there is no `in_reply_to_id` (GitHub leaves it out).
        "position": comment.position,
        "original_position": comment.position,
        "commit_id": comment.commit_id,
        "original_commit_id": comment.commit_id,
        "user": user_json(state, comment.user),
        "body": comment.body,
        "created_at": iso(comment.created_at),
        "updated_at": iso(comment.created_at),
        "html_url": html,
        "pull_request_url": pull_api,
        "author_association": author_association(state, repo, comment.user),
        "_links": {
            "self": {"href": api},
            "html": {"href": html},
            "pull_request": {"href": pull_api},
        },
        "start_line": comment.start_line,
        "original_start_line": comment.start_line,
        "start_side": comment.side if comment.start_line else None,
        "line": comment.line,
        "original_line": comment.line,
        "side": comment.side,
        "subject_type": "line",
        "reactions": reactions_rollup(f"{api}/reactions", []),
    }


# ----- checks and statuses ------------------------------------------------------------------------
def pull_minimal_json(state: SandboxState, repo: Repo, issue: Issue, pull: Pull) -> JSON:
    short_repo = {
        "id": repo.id,
        "url": f"{state.base_url}/repos/{repo.full_name}",
        "name": repo.name,
    }
    return {
        "id": pull.id,
        "number": issue.number,
        "url": f"{state.base_url}/repos/{repo.full_name}/pulls/{issue.number}",
        "head": {"ref": pull.head_ref, "sha": pull.head_sha, "repo": short_repo},
        "base": {"ref": pull.base_ref, "sha": pull.base_sha, "repo": short_repo},
    }


def check_run_json(state: SandboxState, repo: Repo, run: CheckRun) -> JSON:
    """A check run; `pull_requests` lists the open PRs whose head is the run's sha, as GitHub's
    does for same-repository pull requests."""
    api = f"{state.base_url}/repos/{repo.full_name}/check-runs/{run.id}"
    return {
        "id": run.id,
        "name": run.name,
        "node_id": node_id("CheckRun", run.id),
        "head_sha": run.head_sha,
        "external_id": run.external_id,
        "url": api,
        "html_url": f"{state.base_url}/{repo.full_name}/runs/{run.id}",
        "details_url": run.details_url,
        "status": run.status,
        "conclusion": run.conclusion,
        "started_at": iso(run.started_at),
        "completed_at": iso(run.completed_at) if run.completed_at else None,
        "output": {
            "title": run.output.get("title"),
            "summary": run.output.get("summary"),
            "text": run.output.get("text"),
            "annotations_count": len(run.annotations),
            "annotations_url": f"{api}/annotations",
        },
        "check_suite": {"id": run.suite_id},
        "app": app_json(state, run.app),
        "pull_requests": [
            pull_minimal_json(state, repo, issue, issue.pull)
            for issue in repo.issues.values()
            if issue.pull is not None
            and issue.state == "open"
            and issue.pull.head_sha == run.head_sha
        ],
    }


def status_json(state: SandboxState, repo: Repo, status: CommitStatus) -> JSON:
    stamp = iso(status.created_at)
    return {
        "url": f"{state.base_url}/repos/{repo.full_name}/statuses/{status.sha}",
        "avatar_url": f"{state.base_url}/avatars/u/{status.creator.id}?v=4",
        "id": status.id,
        "node_id": node_id("StatusContext", status.id),
        "state": status.state,
        "description": status.description,
        "target_url": status.target_url,
        "context": status.context,
        "created_at": stamp,
        "updated_at": stamp,
        "creator": user_json(state, status.creator),
    }


# ----- webhook deliveries -------------------------------------------------------------------------
def delivery_item_json(attempt: Attempt) -> JSON:
    return {
        "id": attempt.id,
        "guid": attempt.guid,
        "delivered_at": iso(attempt.delivered_at or attempt.created_at),
        "redelivery": attempt.redelivery,
        "duration": round(attempt.duration_s, 3),
        "status": attempt.status,
        "status_code": attempt.status_code,
        "event": attempt.event,
        "action": attempt.action,
        "installation_id": attempt.installation_id,
        "repository_id": attempt.repository_id,
        "throttled_at": None,
    }


# ----- git objects --------------------------------------------------------------------------------
def user_for_email(state: SandboxState, email: str) -> User | None:
    """A commit's GitHub user, recognised by the users.noreply address the sandbox hands out."""
    local, _, domain = email.partition("@")
    if domain != "users.noreply.github.com" or "+" not in local:
        return None
    user = state.user(local.split("+", 1)[1])
    return user if user is not None and user.email == email else None


def commit_json(
    state: SandboxState,
    repo: Repo,
    info: CommitInfo,
    *,
    changes: list[FileChange] | None = None,
) -> JSON:
    """A commit as `GET /repos/{o}/{r}/commits/{ref}` shows it; `changes` adds files and stats."""
    api = f"{state.base_url}/repos/{repo.full_name}"
    html = f"{state.base_url}/{repo.full_name}"
    author = user_for_email(state, info.author_email)
    committer = user_for_email(state, info.committer_email)
    out: JSON = {
        "url": f"{api}/commits/{info.sha}",
        "sha": info.sha,
        "node_id": node_id("Commit", int(info.sha[:12], 16)),
        "html_url": f"{html}/commit/{info.sha}",
        "comments_url": f"{api}/commits/{info.sha}/comments",
        "commit": {
            "url": f"{api}/git/commits/{info.sha}",
            "author": {
                "name": info.author_name,
                "email": info.author_email,
                "date": info.author_date,
            },
            "committer": {
                "name": info.committer_name,
                "email": info.committer_email,
                "date": info.committer_date,
            },
            "message": info.message,
            "tree": {"sha": info.tree_sha, "url": f"{api}/git/trees/{info.tree_sha}"},
            "comment_count": 0,
            "verification": {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            },
        },
        "author": user_json(state, author) if author else None,
        "committer": user_json(state, committer) if committer else None,
        "parents": [
            {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/commit/{p}"}
            for p in info.parents
        ],
    }
    if changes is not None:
        additions = sum(c.additions for c in changes)
        deletions = sum(c.deletions for c in changes)
        out["stats"] = {
            "total": additions + deletions,
            "additions": additions,
            "deletions": deletions,
        }
        out["files"] = [diff_entry_json(state, repo, info.sha, c) for c in changes]
    return out


def git_commit_json(state: SandboxState, repo: Repo, info: CommitInfo) -> JSON:
    """A commit as the git database shows it (`GET /git/commits/{sha}`): tree, parents, no files."""
    api = f"{state.base_url}/repos/{repo.full_name}"
    html = f"{state.base_url}/{repo.full_name}"
    return {
        "sha": info.sha,
        "node_id": node_id("Commit", int(info.sha[:12], 16)),
        "url": f"{api}/git/commits/{info.sha}",
        "html_url": f"{html}/commit/{info.sha}",
        "author": {"name": info.author_name, "email": info.author_email, "date": info.author_date},
        "committer": {
            "name": info.committer_name,
            "email": info.committer_email,
            "date": info.committer_date,
        },
        "message": info.message,
        "tree": {"sha": info.tree_sha, "url": f"{api}/git/trees/{info.tree_sha}"},
        "parents": [
            {"sha": p, "url": f"{api}/git/commits/{p}", "html_url": f"{html}/commit/{p}"}
            for p in info.parents
        ],
        "verification": {
            "verified": False,
            "reason": "unsigned",
            "signature": None,
            "payload": None,
            "verified_at": None,
        },
    }


def diff_entry_json(state: SandboxState, repo: Repo, head_sha: str, change: FileChange) -> JSON:
    """One entry of a PR's or commit's file list."""
    api = f"{state.base_url}/repos/{repo.full_name}"
    html = f"{state.base_url}/{repo.full_name}"
    out: JSON = {
        "sha": change.blob_sha,
        "filename": change.filename,
        "status": change.status,
        "additions": change.additions,
        "deletions": change.deletions,
        "changes": change.additions + change.deletions,
        "blob_url": f"{html}/blob/{head_sha}/{change.filename}",
        "raw_url": f"{html}/raw/{head_sha}/{change.filename}",
        "contents_url": f"{api}/contents/{change.filename}?ref={head_sha}",
    }
    if change.patch is not None:
        out["patch"] = change.patch
    if change.previous_filename is not None:
        out["previous_filename"] = change.previous_filename
    return out


def git_ref_json(state: SandboxState, repo: Repo, ref: str, sha: str) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}"
    return {
        "ref": ref,
        "node_id": node_id("Ref", zlib.crc32(f"{repo.id}:{ref}".encode())),
        "url": f"{api}/git/{ref}",
        "object": {"type": "commit", "sha": sha, "url": f"{api}/git/commits/{sha}"},
    }


def content_entry_json(
    state: SandboxState, repo: Repo, ref: str, entry: TreeEntry, content: bytes | None = None
) -> JSON:
    """A file, directory, symlink or submodule as the contents API lists it; `content` (a file's
    bytes, or a symlink's target) turns it into the single-object answer for that path."""
    api = f"{state.base_url}/repos/{repo.full_name}"
    html = f"{state.base_url}/{repo.full_name}"
    kind = entry.type
    git_kind = "trees" if kind == "dir" else ("commits" if kind == "submodule" else "blobs")
    page = "tree" if kind == "dir" else "blob"
    self_url = f"{api}/contents/{entry.path}?ref={ref}"
    git_url = f"{api}/git/{git_kind}/{entry.sha}"
    html_url = f"{html}/{page}/{ref}/{entry.path}"
    out: JSON = {
        "type": kind,
        "size": entry.size if kind == "file" else 0,
        "name": entry.name,
        "path": entry.path,
        "sha": entry.sha,
        "url": self_url,
        "git_url": git_url,
        "html_url": html_url,
        "download_url": f"{html}/raw/{ref}/{entry.path}" if kind == "file" else None,
        "_links": {"self": self_url, "git": git_url, "html": html_url},
    }
    if content is not None and kind == "file":
        encoded = base64.encodebytes(content).decode()
        out.update({"content": encoded, "encoding": "base64"})
    elif content is not None and kind == "symlink":
        out["target"] = content.decode("utf-8", "replace")
    elif kind == "submodule":
        out["submodule_git_url"] = ""
    return out


# ----- Actions ------------------------------------------------------------------------------------
def _run_repo_json(state: SandboxState, repo: Repo) -> JSON:
    """The repository inside a workflow run (GitHub's minimal repository, with its owner)."""
    return {
        "id": repo.id,
        "node_id": node_id("Repository", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
        "owner": user_json(state, repo.owner),
        "description": repo.description,
        "fork": False,
        **_repo_urls(state, repo),
    }


def workflow_run_json(state: SandboxState, repo: Repo, run: WorkflowRun, head: CommitInfo) -> JSON:
    """A workflow run as `GET /repos/{o}/{r}/actions/runs/{id}` shows it."""
    api = f"{state.base_url}/repos/{repo.full_name}"
    here = f"{api}/actions/runs/{run.id}"
    return {
        "id": run.id,
        "name": run.name,
        "node_id": node_id("WorkflowRun", run.id),
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "path": run.path,
        "display_title": run.name,
        "run_number": run.run_number,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "workflow_id": run.workflow_id,
        "url": here,
        "html_url": f"{state.base_url}/{repo.full_name}/actions/runs/{run.id}",
        "pull_requests": [],
        "created_at": iso(run.created_at),
        "updated_at": iso(run.updated_at),
        "actor": user_json(state, run.actor),
        "triggering_actor": user_json(state, run.actor),
        "run_attempt": run.run_attempt,
        "referenced_workflows": [],
        "run_started_at": iso(run.run_started_at or run.created_at),
        "jobs_url": f"{here}/jobs",
        "logs_url": f"{here}/logs",
        "check_suite_url": f"{api}/check-suites/{run.id}",
        "artifacts_url": f"{here}/artifacts",
        "cancel_url": f"{here}/cancel",
        "rerun_url": f"{here}/rerun",
        "previous_attempt_url": None,
        "workflow_url": f"{api}/actions/workflows/{run.workflow_id}",
        "head_commit": {
            "id": head.sha,
            "tree_id": head.tree_sha,
            "message": head.message,
            "timestamp": head.committer_date,
            "author": {"name": head.author_name, "email": head.author_email},
            "committer": {"name": head.committer_name, "email": head.committer_email},
        },
        "repository": _run_repo_json(state, repo),
        "head_repository": _run_repo_json(state, repo),
        "head_repository_id": repo.id,
    }


def workflow_dispatch_json(state: SandboxState, repo: Repo, run: WorkflowRun) -> JSON:
    """What a dispatch answers when it says which run it started."""
    return {
        "workflow_run_id": run.id,
        "run_url": f"{state.base_url}/repos/{repo.full_name}/actions/runs/{run.id}",
        "html_url": f"{state.base_url}/{repo.full_name}/actions/runs/{run.id}",
    }
