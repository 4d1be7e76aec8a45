"""`/ourobot revert` on a pull request ourobot merged: a revert pull request, not a revert.

The revert is made with real git on the repository's mirror (the base branch as it is now, so
the revert applies to today's tree): a merge commit is reverted against its first parent, a
squash commit as itself, a rebase merge as its run of commits (in one revert commit). It is
pushed to ourobot's own branch `ourobot/revert-<n>` and opened as a pull request, so it goes
through the guards, the review and the gate like any change: the rollback path has no back
door. Asking again finds the revert pull request already open.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from githubkit import GitHub

from app.controls.halt import check_halt
from app.gate.merge import merge_commit_of
from app.guards.result import markdown_cell
from app.jobs.context import JobContext
from app.jobs.gate_snapshot import PullRef
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.git import GitError, git
from app.workspace.mirror import MirrorError, RepoMirror


class RevertRefused(Exception):
    """Why no revert pull request was opened (the reply says it)."""


def revert_branch(number: int) -> str:
    return f"{BOT_BRANCH_PREFIX}revert-{number}"


def open_revert(
    ctx: JobContext,
    github: GitHub[Any],
    installation_id: int | None,
    pull: PullRef,
    data: Any,
    *,
    login: str,
    bot: str,
) -> str:
    """Open (or find) the revert pull request of merged `pull`; the reply's text."""
    if not data.merged:
        raise RevertRefused(f"#{pull.number} is not merged: there is nothing to revert")
    if not data.merged_by or data.merged_by.login.lower() != bot.lower():
        raise RevertRefused(f"#{pull.number} was not merged by ourobot: revert it as it was merged")
    branch = revert_branch(pull.number)
    existing = github.rest.pulls.list(
        pull.owner, pull.name, state="open", head=f"{pull.owner}:{branch}"
    ).parsed_data
    if existing:
        return f"The revert of #{pull.number} is already open: #{existing[0].number}."
    merged = merge_commit_of(github, pull.owner, pull.name, pull.number)
    if merged is None:
        raise RevertRefused("GitHub does not say which commit the merge made")
    base = data.base.ref
    repository = github.rest.repos.get(pull.owner, pull.name).parsed_data
    token = ctx.github.git_token(installation_id)
    mirror = RepoMirror(ctx.settings.data_dir, pull.full_name)
    try:
        tip = mirror.fetch_branch(repository.clone_url, base, token=token)
        commits = _reverted_commits(mirror, merged, tip, data.base.sha)
        check_halt(ctx, installation_id)
        _make_and_push(mirror, repository.clone_url, token, tip, commits, branch, pull.number)
    except (MirrorError, GitError) as exc:
        raise RevertRefused(f"git could not make the revert: {exc}") from None
    body = (
        f"Reverts #{pull.number} (merged as `{merged}`), as @{markdown_cell(login)} asked.\n\n"
        "This pull request goes through the guards, the review and the merge gate like any "
        "other: it merges only when every condition holds on its head."
    )
    made = github.rest.pulls.create(
        pull.owner, pull.name, title=f"Revert #{pull.number}: {data.title}"[:250],
        head=branch, base=base, body=body,
    ).parsed_data  # fmt: skip
    return f"Opened #{made.number} to revert #{pull.number}; it goes through every gate."


def _reverted_commits(mirror: RepoMirror, merged: str, tip: str, before: str) -> list[str]:
    """The commits the merge put on the base branch, newest first: from the base as it was
    before the merge (`before`) to the merged commit along first parents. One for a merge or a
    squash; a rebase merge's replayed run otherwise."""
    env = {"GIT_DIR": str(mirror.path)}
    try:
        git(["merge-base", "--is-ancestor", merged, tip], env=env)
    except GitError:
        raise RevertRefused(f"`{merged[:12]}` is no longer on the base branch") from None
    try:
        git(["merge-base", "--is-ancestor", before, merged], env=env)
    except GitError:
        return [merged]
    listed = git(["rev-list", "--first-parent", f"{before}..{merged}"], env=env).stdout.split()
    return listed or [merged]


def _make_and_push(
    mirror: RepoMirror,
    clone_url: str,
    token: str,
    tip: str,
    commits: list[str],
    branch: str,
    number: int,
) -> None:
    with mirror.locked(), tempfile.TemporaryDirectory(prefix="ourobot-revert-") as tmp:
        work = Path(tmp) / "work"
        git(["clone", "--quiet", "--shared", "--no-checkout", str(mirror.path), str(work)])
        git(["checkout", "--quiet", "--detach", tip], cwd=work)
        for sha in commits:
            parents = git(["rev-list", "--parents", "-n", "1", sha], cwd=work).stdout.split()[1:]
            mainline = ["-m", "1"] if len(parents) > 1 else []
            git(["revert", "--no-edit", *mainline, sha], cwd=work)
        if len(commits) > 1:
            git(["reset", "--soft", tip], cwd=work)
            git(["commit", "--quiet", "-m", f"Revert #{number}"], cwd=work)
        git(["push", "--quiet", clone_url, f"HEAD:refs/heads/{branch}"], cwd=work, token=token)
