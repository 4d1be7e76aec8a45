"""issues.labeled `ourobot:ticket` -> a `ticket` job (the job checks the labeler's permission).

Pure: the labeler is never judged by name; an App's bot (ourobot included) starts nothing,
and whether a person may is the job's to ask GitHub. The issue's title, body and labels travel
with the job as the event carried them (text at trigger time), and the delivery names the run,
so a redelivery or a retry is the same run and a second label is another one.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from app.commands.actors import is_automation, login_of
from app.handlers.issue_fields import label_names, text_of
from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings

TICKET_LABEL = "ourobot:ticket"


def register(router: Router, settings: Settings) -> None:
    router.add("issues", "labeled", partial(on_issue_labeled, settings=settings))


def on_issue_labeled(event: Event, *, settings: Settings) -> list[Job]:
    label = event.payload.get("label")
    issue = event.payload.get("issue")
    sender = event.payload.get("sender")
    if not isinstance(label, Mapping) or label.get("name") != TICKET_LABEL:
        return []
    if not isinstance(issue, Mapping) or "pull_request" in issue or is_automation(sender):
        return []
    login = login_of(sender)
    if login is None or event.repo_full_name is None:
        return []
    return [
        Job(
            "ticket",
            {
                "installation_id": event.installation_id,
                "repo": event.repo_full_name,
                "number": int(issue["number"]),
                "login": login,
                "run_key": f"label:{event.delivery_id}",
                "title": text_of(issue.get("title")),
                "body": text_of(issue.get("body")),
                "labels": label_names(issue.get("labels")),
            },
        )
    ]
