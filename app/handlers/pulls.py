"""pull_request opened/synchronize/reopened/ready_for_review -> one `guards_check` job per head.

Every pull request is routed, whoever wrote it: whether the guards apply (`guards.apply_to`)
is written in the base branch's config, which only the job reads. The handler passes on what
the job needs to decide it (head branch, author login and whether the author is an App's bot)
and the head SHA of this event, so each push is judged on its own commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from app.commands.actors import login_of
from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings
from app.workspace.git import is_object_id

# The pull_request actions that bring a head to judge (a new one, or one to look at again).
NEW_HEAD_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")


def register(router: Router, settings: Settings) -> None:
    for action in NEW_HEAD_ACTIONS:
        router.add("pull_request", action, partial(on_pull_request, settings=settings))


def on_pull_request(event: Event, *, settings: Settings) -> list[Job]:
    pull = event.payload.get("pull_request")
    if not isinstance(pull, Mapping) or pull.get("state", "open") != "open":
        return []
    head, base = _branch(pull.get("head")), _branch(pull.get("base"))
    number = pull.get("number", event.payload.get("number"))
    installation_id, repo = event.installation_id, event.repo_full_name
    if head is None or base is None or installation_id is None or repo is None:
        return []
    if not isinstance(number, int) or isinstance(number, bool) or not is_object_id(head[1]):
        return []
    user = pull.get("user")
    return [
        Job(
            "guards_check",
            {
                "installation_id": installation_id,
                "repo": repo,
                "number": number,
                "head_sha": head[1],
                "base_ref": base[0],
                "head_ref": head[0],
                "author_login": login_of(user) or "",
                "author_is_bot": isinstance(user, Mapping) and user.get("type") == "Bot",
            },
        )
    ]


def _branch(side: Any) -> tuple[str, str] | None:
    """(ref, sha) of a pull request's head or base, if the payload carries both."""
    if not isinstance(side, Mapping):
        return None
    ref, sha = side.get("ref"), side.get("sha")
    if not isinstance(ref, str) or not ref or not isinstance(sha, str):
        return None
    return ref, sha
