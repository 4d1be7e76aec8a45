"""What a pull request is, in git terms: its current base, its file list and sizes, whether it
merges cleanly. Results are cached by commit shas (content addresses, so they never go stale).
"""

from __future__ import annotations

import functools
from pathlib import Path

from app.sandbox.gitops import BareRepo, CommitInfo, FileChange, GitError
from app.sandbox.serializers import JSON, pull_json
from app.sandbox.state import Issue, Pull, Repo, SandboxState

FILES_CAP = 3000  # GitHub's files API stops here


@functools.lru_cache(maxsize=256)
def _compare(path: Path, base: str, head: str) -> tuple[FileChange, ...]:
    try:
        return tuple(BareRepo(path).compare(base, head))
    except GitError:
        return ()


@functools.lru_cache(maxsize=256)
def _commits(path: Path, base: str, head: str) -> tuple[CommitInfo, ...]:
    try:
        return tuple(BareRepo(path).commits_between(base, head))
    except GitError:
        return ()


@functools.lru_cache(maxsize=256)
def _mergeable(path: Path, base: str, head: str) -> bool:
    try:
        return BareRepo(path).mergeable(base, head)
    except GitError:
        return False


def base_sha(repo: Repo, issue: Issue, pull: Pull) -> str:
    """The base tip an open PR is compared with; frozen once it is closed or merged."""
    if issue.state == "open":
        current = BareRepo(repo.path).resolve(f"refs/heads/{pull.base_ref}")
        if current is not None:
            return current
    return pull.base_sha


def files(repo: Repo, issue: Issue, pull: Pull) -> tuple[FileChange, ...]:
    return _compare(repo.path, base_sha(repo, issue, pull), pull.head_sha)


def files_at(repo: Repo, issue: Issue, pull: Pull, head: str) -> tuple[FileChange, ...]:
    """The PR's files as they were at an earlier head (what a review on that commit sees)."""
    return _compare(repo.path, base_sha(repo, issue, pull), head)


def commits(repo: Repo, issue: Issue, pull: Pull) -> tuple[CommitInfo, ...]:
    return _commits(repo.path, base_sha(repo, issue, pull), pull.head_sha)


def mergeable(repo: Repo, issue: Issue, pull: Pull) -> bool | None:
    if issue.state != "open" or pull.merged:
        return None
    return _mergeable(repo.path, base_sha(repo, issue, pull), pull.head_sha)


def full_json(state: SandboxState, repo: Repo, issue: Issue) -> JSON:
    """The full pull request object of `GET /pulls/{n}` and `pull_request` webhooks."""
    pull = issue.pull
    assert pull is not None
    changes = files(repo, issue, pull)
    sizes = (
        len(commits(repo, issue, pull)),
        sum(c.additions for c in changes),
        sum(c.deletions for c in changes),
        len(changes),
    )
    pull.base_sha = base_sha(repo, issue, pull)
    return pull_json(state, repo, issue, pull, mergeable=mergeable(repo, issue, pull), sizes=sizes)


def open_pulls_with_head(repo: Repo, branch: str) -> list[Issue]:
    return [
        issue
        for issue in repo.issues.values()
        if issue.pull is not None and issue.state == "open" and issue.pull.head_ref == branch
    ]
