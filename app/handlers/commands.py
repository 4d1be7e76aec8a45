"""issue_comment.created -> one `command` job per visible `/ourobot` line from a person.

`/ourobot panic` and `/ourobot resume` are not routed: the receiver handles them inline,
before any queue, so a stop cannot wait behind the work it is meant to stop.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from app.commands.actors import is_automation, login_of
from app.commands.slash import parse_commands
from app.handlers.issue_fields import label_names
from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings

INLINE_VERBS = frozenset({"panic", "resume"})
TRIGGER_TEXT_VERBS = frozenset({"plan", "implement"})


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
                    **_trigger_text(command.verb, issue),
                },
            )
        )
    return jobs


def _trigger_text(verb: str, issue: Mapping[str, object]) -> dict[str, str | list[str] | None]:
    """The issue's title and body as the event carried them, for the verbs that show them to a
    model (the text used is the text at trigger time); other verbs' jobs stay small."""
    if verb not in TRIGGER_TEXT_VERBS:
        return {}
    title, body = issue.get("title"), issue.get("body")
    return {
        "issue_title": title if isinstance(title, str) else None,
        "issue_body": body if isinstance(body, str) else "",
        "issue_labels": label_names(issue.get("labels")),
    }
