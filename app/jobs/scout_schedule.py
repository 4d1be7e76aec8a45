"""The scout's schedule: which repositories are due a scheduled scout run now.

Off by default: a repository is due only when its config at the default branch sets
`scout.every_hours`. Time is cut into UTC slots of that many hours counted from the epoch, and
each slot has one run key (`scout:<repo>:every.<h>.<slot>`), so however often the sweep runs,
on however many workers, and however often a job is delivered, a slot gets one run.

The sweep (the workers' beat calls it every `OUROBOT_SCOUT_SWEEP_INTERVAL_S`) lists the App's
installations and their repositories, skips halted installations, archived repositories and
slots already run, reads each remaining repository's config (one request), and returns a
`scout` job for each one that is due. Sending them is the caller's (`tasks/`): a job of its
own could only run them one after the other.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.controls.halt import HaltRegistry
from app.errors import ConfigError
from app.jobs.context import JobContext, effect_done
from app.jobs.gate_snapshot import RAW
from app.jobs.registry import Job
from app.jobs.scout import schedule_run_key
from app.repo_config import DEFAULT_SOURCE, RepoConfig, load_repo_config

log = logging.getLogger(__name__)

PER_PAGE = 100
MAX_PAGES = 20
HOUR_S = 3600


def slot_of(now: datetime, every_hours: int) -> int:
    """The UTC slot of `every_hours` hours that `now` falls in, counted from the epoch."""
    return int(now.timestamp()) // (every_hours * HOUR_S)


def due_scouts(ctx: JobContext, *, now: datetime | None = None) -> list[Job]:
    """A `scout` job for every repository whose current slot has not had its run."""
    if not ctx.settings.has_app_credentials():
        return []
    moment = now or datetime.now(UTC)
    halts = HaltRegistry(ctx.store, ctx.redis)
    due: list[Job] = []
    app = ctx.github.app()
    for installation_id in _installations(app):
        if halts.active(installation_id) is not None:
            continue
        try:
            github = ctx.github.installation(installation_id)
            for repo in _repositories(github):
                planned = _due(ctx, github, installation_id, repo, moment)
                if planned is not None:
                    due.append(planned)
        except (RequestFailed, ConfigError) as exc:  # one installation failing stops no other
            log.warning("scout schedule: installation %s skipped: %s", installation_id, exc)
    return due


def _due(
    ctx: JobContext, github: GitHub[Any], installation_id: int, repo: Any, now: datetime
) -> Job | None:
    if getattr(repo, "archived", False) or getattr(repo, "disabled", False):
        return None
    config = _config(github, str(repo.full_name), str(repo.default_branch))
    every = config.scout.every_hours if config is not None else None
    if every is None:
        return None
    run_key = schedule_run_key(str(repo.full_name), every, slot_of(now, every))
    if effect_done(ctx, run_key):
        return None
    return Job(
        "scout",
        {
            "installation_id": installation_id,
            "repo": str(repo.full_name),
            "run_key": run_key,
            "every_hours": every,
        },
    )


def _config(github: GitHub[Any], full_name: str, branch: str) -> RepoConfig | None:
    """The config at the default branch; None (not scheduled) when it is invalid."""
    url = f"/repos/{full_name}/contents/{DEFAULT_SOURCE}"
    try:
        answer = github.request("GET", url, params={"ref": branch}, headers=RAW)
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return None
        raise
    try:
        return load_repo_config(answer.text, source=f"{full_name}:{DEFAULT_SOURCE}")
    except ConfigError as exc:
        log.warning("scout schedule: %s", exc)
        return None


def _installations(app: GitHub[Any]) -> Iterator[int]:
    for page in range(1, MAX_PAGES + 1):
        items = app.rest.apps.list_installations(per_page=PER_PAGE, page=page).parsed_data
        yield from (int(item.id) for item in items)
        if len(items) < PER_PAGE:
            return


def _repositories(github: GitHub[Any]) -> Iterator[Any]:
    for page in range(1, MAX_PAGES + 1):
        listed = github.rest.apps.list_repos_accessible_to_installation(
            per_page=PER_PAGE, page=page
        ).parsed_data
        yield from listed.repositories
        if len(listed.repositories) < PER_PAGE:
            return
