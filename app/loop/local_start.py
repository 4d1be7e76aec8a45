"""What `ourobot cycle` reads and checks before anything runs: the repository's default branch
and its head, the ticket, the config (with `--model` applied), and that every model the cycle
will call can be called (`local_models.check_models`).

Its imports are light on purpose: bad input (a missing key, a dead endpoint, a broken config)
is one line within a second, before the cycle's machinery (the store, the model SDKs, the
workspace and the cage) is loaded by `app.loop.local`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.controls.pricing import PriceTable
from app.errors import UserError
from app.loop.local_models import check_models, with_model
from app.loop.ticket import Ticket, read_ticket_file
from app.repo_config import ModelRef, RepoConfig
from app.settings import Settings
from app.workspace.git import GitError, git, repo_env
from app.workspace.worktree import common_git_dir
from reviewers.local_review import load_config
from reviewers.providers import ProviderCredentials


@dataclass(frozen=True)
class LocalStart:
    """A cycle's checked input: where it starts, what it works, under which config."""

    repo: Path
    git_dir: Path
    branch: str
    base_sha: str
    ticket: Ticket
    config: RepoConfig


def start_local_cycle(
    repo: Path,
    ticket_file: Path,
    *,
    config_file: Path | None,
    env: Mapping[str, str],
    settings: Settings,
    progress: Callable[[str], None],
    model: ModelRef | None = None,
) -> LocalStart:
    """The checked input of a cycle on `repo`, or a `UserError`; nothing is spent or written.
    `model` replaces the config's implementer and planner."""
    git_dir = common_git_dir(repo)
    branch = default_branch(git_dir)
    base_sha = git_text(git_dir, "rev-parse", "--verify", f"refs/heads/{branch}^{{commit}}")
    ticket = read_ticket_file(ticket_file, repo_key=f"local:{repo.resolve()}")
    config = with_model(load_config(repo, base_sha.strip(), config_file).capped(settings), model)
    check_models(config, ticket, ProviderCredentials.from_env(env),
                 PriceTable.from_settings(settings), progress)  # fmt: skip
    return LocalStart(repo, git_dir, branch, base_sha.strip(), ticket, config)


def default_branch(git_dir: Path) -> str:
    """origin/HEAD's branch, else main, else master, else the branch checked out."""
    candidates = []
    try:
        origin = git_text(git_dir, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD").strip()
        candidates.append(origin.removeprefix("refs/remotes/origin/"))
    except UserError:
        pass
    candidates += ["main", "master"]
    with contextlib.suppress(UserError):
        candidates.append(git_text(git_dir, "symbolic-ref", "--quiet", "--short", "HEAD").strip())
    for name in candidates:
        if name and branch_exists(git_dir, name):
            return name
    raise UserError(f"--repo {git_dir}: no default branch (no main, master or checked-out branch)")


def branch_exists(git_dir: Path, name: str) -> bool:
    try:
        git_text(git_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}^{{commit}}")
    except UserError:
        return False
    return True


def git_text(git_dir: Path, *args: str) -> str:
    """git's output in the repository `git_dir` names; a failure is a `UserError`."""
    try:
        return git(list(args), cwd=git_dir, env=repo_env(git_dir)).stdout
    except GitError as exc:
        raise UserError(str(exc)) from None
