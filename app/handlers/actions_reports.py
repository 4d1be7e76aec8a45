"""check_run.completed `ourobot/cycle`: a repository's Actions run reporting the cycle the App
dispatched (`implementer.runs_on: actions`) -> an `actions_report` job.

Pure. Only a check run a workflow made (GitHub Actions' App) or the App itself made counts, and
only with a run key for its `external_id`; the job reads the check run back from GitHub and
checks the report against the run it dispatched before it believes a word of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from app.handlers.router import Event, Router
from app.jobs.actions_contract import ACTIONS_APP_SLUG, CHECK_NAME, valid_run_key
from app.jobs.registry import Job
from app.settings import Settings


def register(router: Router, settings: Settings) -> None:
    router.add("check_run", "completed", partial(on_check_run, settings=settings))


def on_check_run(event: Event, *, settings: Settings) -> list[Job]:
    run = event.payload.get("check_run")
    if not isinstance(run, Mapping) or run.get("name") != CHECK_NAME:
        return []
    app = run.get("app")
    if not isinstance(app, Mapping):
        return []
    ours = settings.app_id is not None and app.get("id") == settings.app_id
    if app.get("slug") != ACTIONS_APP_SLUG and not ours:
        return []
    run_key, check_run_id = run.get("external_id"), run.get("id")
    if not valid_run_key(run_key) or type(check_run_id) is not int or not event.repo_full_name:
        return []
    return [
        Job(
            "actions_report",
            {
                "installation_id": event.installation_id,
                "repo": event.repo_full_name,
                "check_run_id": check_run_id,
                "run_key": str(run_key),
            },
        )
    ]
