"""pull_request opened/synchronize/reopened/ready_for_review -> one `review_check` job, and
ourobot's own `ourobot/guards` check run completing -> one per pull request it lists.

Pure: the job reads the config at the base branch and decides whether this PR is reviewed
(`guards.apply_to`), so nothing here needs GitHub. Draft pull requests wait for
`ready_for_review`. The PR's title and body travel with the job as the event carried them: the
text a review uses is the text at trigger time. Cheap first: where the guards apply, the job
started by the pull request event waits for them; the guards completing starts it again (a
check run event carries no PR text, so that job reads the title and body when it runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from app.handlers.pulls import NEW_HEAD_ACTIONS
from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings
from app.workspace.git import is_object_id

GUARDS_CHECK = "ourobot/guards"


def register(router: Router, settings: Settings) -> None:
    for action in NEW_HEAD_ACTIONS:
        router.add("pull_request", action, partial(on_pull_request, settings=settings))
    router.add("check_run", "completed", partial(on_guards_completed, settings=settings))


def on_guards_completed(event: Event, *, settings: Settings) -> list[Job]:
    """Our `ourobot/guards` run finished on a head: review the pull requests it lists."""
    run = event.payload.get("check_run")
    repo = event.repo_full_name
    if not isinstance(run, Mapping) or repo is None or run.get("name") != GUARDS_CHECK:
        return []
    app = run.get("app")
    if settings.app_id is None or not isinstance(app, Mapping) or app.get("id") != settings.app_id:
        return []  # another App's run of that name is not our guards
    head_sha = run.get("head_sha")
    pulls = run.get("pull_requests")
    if not isinstance(head_sha, str) or not is_object_id(head_sha) or not isinstance(pulls, list):
        return []
    numbers = [p.get("number") for p in pulls if isinstance(p, Mapping)]
    return [
        Job(
            "review_check",
            {
                "installation_id": event.installation_id,
                "repo": repo,
                "number": number,
                "head_sha": head_sha,
                "trigger": "guards",
            },
        )
        for number in dict.fromkeys(numbers)
        if isinstance(number, int) and not isinstance(number, bool) and number > 0
    ]


def on_pull_request(event: Event, *, settings: Settings) -> list[Job]:
    pull = event.payload.get("pull_request")
    repo = event.repo_full_name
    if not isinstance(pull, Mapping) or repo is None:
        return []
    head = pull.get("head")
    head_sha = head.get("sha") if isinstance(head, Mapping) else None
    number = pull.get("number")
    if not isinstance(head_sha, str) or not is_object_id(head_sha) or not isinstance(number, int):
        return []
    if pull.get("state") not in (None, "open"):
        return []
    if pull.get("draft") is True and event.action != "ready_for_review":
        return []
    title, body = pull.get("title"), pull.get("body")
    return [
        Job(
            "review_check",
            {
                "installation_id": event.installation_id,
                "repo": repo,
                "number": number,
                "head_sha": head_sha,
                "trigger": "pull_request",
                "title": title if isinstance(title, str) else None,
                "body": body if isinstance(body, str) else "",
            },
        )
    ]
