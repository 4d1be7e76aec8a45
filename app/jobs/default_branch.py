"""A repository's default branch in ourobot's bare mirror, and what is read from it there.

The planner and the scout work from the default branch's head: the config, the constitution
and the prompt overrides are read at that commit (never from a pull request's head), and the
map and history the roles are shown come from the same commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from githubkit import GitHub

from app.jobs.context import JobContext
from app.jobs.review_check import FetchFailed
from app.repo_config import RepoConfig, load_repo_config
from app.workspace.mirror import MirrorError, RepoMirror
from reviewers.git_source import CONFIG_PATH, read_file_at


@dataclass(frozen=True)
class DefaultBranch:
    repo: str
    branch: str
    git_dir: Path  # the bare mirror
    base_sha: str  # the branch's head as fetched


def fetch_default_branch(
    ctx: JobContext, github: GitHub[Any], installation_id: int | None, repo: str
) -> DefaultBranch:
    """The default branch fetched into the mirror; `FetchFailed` (retried) when git cannot."""
    owner, name = repo.split("/", 1)
    data = github.rest.repos.get(owner, name).parsed_data
    mirror = RepoMirror(ctx.settings.data_dir, repo)
    token = ctx.github.git_token(installation_id)
    try:
        sha = mirror.fetch_branch(str(data.clone_url), str(data.default_branch), token=token)
    except MirrorError as exc:
        raise FetchFailed(str(exc)) from exc
    return DefaultBranch(repo, str(data.default_branch), mirror.path, sha)


def config_at(base: DefaultBranch, ctx: JobContext) -> RepoConfig:
    """`.github/ourobot.yml` at the base, within the operator's caps; `UserError` if invalid."""
    text = read_file_at(base.git_dir, base.base_sha, CONFIG_PATH, what="repo config")
    config = load_repo_config(text, source=f"{base.base_sha[:12]}:{CONFIG_PATH}")
    return config.capped(ctx.settings)
