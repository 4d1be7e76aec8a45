"""What happens when refs move (a git push, a merge, a ref deleted over REST): the `push`
webhook, open pull requests whose head branch moved (`synchronize`, head sha, CI) or vanished
(closed), and who may clone or push over git smart HTTP in the first place.
"""

from __future__ import annotations

import contextlib

from app.sandbox import auth, events, pulls
from app.sandbox.auth import ANONYMOUS, AuthError
from app.sandbox.git_http import AuthDecision
from app.sandbox.gitops import ZERO_SHA, GitError, RefUpdate
from app.sandbox.routing import Services
from app.sandbox.state import Issue, Repo, User, level_at_least


def authorize(sb: Services, owner: str, name: str, token: str | None, write: bool) -> AuthDecision:
    """GitHub's rules for git over HTTPS: unknown or unreadable private repos look absent to
    signed-in callers, anonymous callers are asked to sign in, and readers cannot push."""
    state = sb.state
    with state.lock:
        repo = state.repo(owner, name)
        if repo is None:
            return "not_found"
        try:
            identity = ANONYMOUS if token is None else auth.token_identity(state, token)
        except AuthError:
            sb.faults.count("GIT", "receive-pack" if write else "upload-pack", "bad-credentials")
            return "unauthenticated"
        sb.faults.count("GIT", "receive-pack" if write else "upload-pack", identity.key)
        level = auth.repo_level(state, identity, repo)
        anonymous = identity.kind == "anonymous"
        if not level_at_least(level, "read"):
            return "unauthenticated" if anonymous else "not_found"
        if write and not level_at_least(level, "write"):
            return "unauthenticated" if anonymous else "forbidden"
        return "ok"


def on_push(sb: Services, owner: str, name: str, token: str, updates: list[RefUpdate]) -> None:
    """Called by the git HTTP server after a receive-pack updated refs."""
    state = sb.state
    with state.lock:
        repo = state.repo(owner, name)
        if repo is None:
            return
        try:
            sender = auth.token_identity(state, token).user
        except AuthError:
            sender = None
        refs_moved(sb, repo, updates, sender or repo.owner)


def refs_moved(sb: Services, repo: Repo, updates: list[RefUpdate], sender: User) -> None:
    """Emit `push` for each update and bring open pull requests in line. Hold the state lock."""
    repo.pushed_at = sb.state.now()
    for update in updates:
        events.push(sb, repo, update, sender)
        if update.ref.startswith("refs/heads/"):
            branch = update.ref.removeprefix("refs/heads/")
            for issue in pulls.open_pulls_with_head(repo, branch):
                _head_moved(sb, repo, issue, update, sender)


def _head_moved(sb: Services, repo: Repo, issue: Issue, update: RefUpdate, sender: User) -> None:
    pull = issue.pull
    assert pull is not None
    now = sb.state.now()
    if update.after == ZERO_SHA:
        # GitHub closes a pull request whose head branch is deleted.
        pull.base_sha = pulls.base_sha(repo, issue, pull)
        issue.state, issue.closed_at, issue.updated_at = "closed", now, now
        events.pull_request(sb, "closed", repo, issue, sender)
        return
    if update.after == pull.head_sha:
        return
    before = pull.head_sha
    pull.head_sha = update.after
    issue.updated_at = now
    # The pull ref is a convenience for fetchers; the PR itself has moved on either way.
    with contextlib.suppress(GitError):
        sb.git(repo).update_ref(f"refs/pull/{issue.number}/head", update.after)
    events.pull_request(sb, "synchronize", repo, issue, sender, before=before, after=update.after)
    sb.ci.trigger(repo, update.after)
