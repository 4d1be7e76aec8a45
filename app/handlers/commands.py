"""issue_comment.created -> one `command` job per visible `/ourobot` line from a person.

`/ourobot panic` and `/ourobot resume` are not routed: the receiver handles them inline,
before any queue, so a stop cannot wait behind the work it is meant to stop.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from app.commands.actors import is_automation, login_of
from app.commands.slash import parse_commands
from app.handlers.issue_fields import label_names, text_of
from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings

INLINE_VERBS = frozenset({"panic", "resume"})


def register(router: Router, settings: Settings) -> None:
    router.add("issue_comment", "created", partial(on_comment_created, settings=settings))


def on_comment_created(event: Event, *, settings: Settings) -> list[Job]:
    comment = event.payload.get("comment")
    issue = event.payload.get("issue")
    if not isinstance(comment, Mapping) or not isinstance(issue, Mapping):
        return []
    if is_automation(comment.get("user"), comment):
        return []
    login = login_of(comment.get("user"))
    installation_id = event.installation_id
    repo = event.repo_full_name
    if login is None or repo is None:
        return []
    jobs = []
    for command in parse_commands(comment.get("body")):
        if command.verb in INLINE_VERBS:
            continue
        jobs.append(
            Job(
                "command",
                {
                    "installation_id": installation_id,
                    "repo": repo,
                    "number": int(issue["number"]),
                    "comment_id": int(comment["id"]),
                    "login": login,
                    "verb": command.verb,
                    "args": list(command.args),
                    "is_pull_request": "pull_request" in issue,
                    # The issue's text at trigger time: what `/ourobot implement` works on.
                    "title": text_of(issue.get("title")),
                    "issue_body": text_of(issue.get("body")),
                    "labels": label_names(issue.get("labels")),
                },
            )
        )
    return jobs
