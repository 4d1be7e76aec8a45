"""check_run.completed: ourobot's own `ourobot/review` or `ourobot/guards` failing on one of
ourobot's pull requests -> a `fix_round` job for that head.

Pure. Only runs of ourobot's own App count (a check run of that name from any other App is
someone else's opinion), and only on branches `ourobot/issue-N`; the job checks again that
the pull request is ourobot's, and bounds the rounds by `review.rounds`. This is the one way
something ourobot wrote leads to more work, and it is counted and capped.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.git import is_object_id

FIXED_CHECKS = {"ourobot/review": "review", "ourobot/guards": "guards"}


def register(router: Router, settings: Settings) -> None:
    router.add("check_run", "completed", partial(on_check_run, settings=settings))


def on_check_run(event: Event, *, settings: Settings) -> list[Job]:
    run = event.payload.get("check_run")
    if not isinstance(run, Mapping) or run.get("conclusion") != "failure":
        return []
    source = FIXED_CHECKS.get(str(run.get("name")))
    app = run.get("app")
    if source is None or not isinstance(app, Mapping) or settings.app_id is None:
        return []
    if app.get("id") != settings.app_id:
        return []
    head_sha = run.get("head_sha")
    if not isinstance(head_sha, str) or not is_object_id(head_sha):
        return []
    jobs = []
    for pull in run.get("pull_requests") or []:
        if not isinstance(pull, Mapping) or not isinstance(pull.get("number"), int):
            continue
        head = pull.get("head")
        ref = head.get("ref") if isinstance(head, Mapping) else None
        if isinstance(ref, str) and not ref.startswith(BOT_BRANCH_PREFIX):
            continue
        jobs.append(
            Job(
                "fix_round",
                {
                    "installation_id": event.installation_id,
                    "repo": event.repo_full_name,
                    "number": int(pull["number"]),
                    "head_sha": head_sha,
                    "source": source,
                    "check_run_id": run.get("id") if isinstance(run.get("id"), int) else None,
                },
            )
        )
    return jobs if event.repo_full_name else []
