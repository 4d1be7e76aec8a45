"""The one status comment of a ticket: what the loop is doing, edited in place.

The run holding the ticket's lease writes the phase (working, the pull request, blocked, ...).
A trigger that finds the ticket busy adds a note ("already in progress") instead: notes are kept
in the store and every render shows them under the phase, so neither writer erases the other.
The comment is found once by its hidden marker; after that its id is used directly, so a cycle
does not list the thread's comments again for each edit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.commands.status_comment import find_marked, render, upsert_comment
from app.store import Store
from app.store.kv import get_value, set_value

STATUS_KEY = "status"
NOTES_MARK = "<!-- ourobot:notes -->"
MAX_NOTES = 10


def _notes_key(repo: str, number: int) -> str:
    return f"loop-notes:{repo.lower()}#{number}"


def notes(store: Store, repo: str, number: int) -> list[str]:
    with store.read_session() as session:
        raw = get_value(session, _notes_key(repo, number))
    return list(json.loads(raw)) if raw else []


def add_note(store: Store, repo: str, number: int, note: str) -> list[str]:
    with store.session() as session:
        raw = get_value(session, _notes_key(repo, number))
        found = list(json.loads(raw)) if raw else []
        if note not in found:
            found = [*found, note][-MAX_NOTES:]
            set_value(session, _notes_key(repo, number), json.dumps(found))
    return found


def compose(phase: str, noted: list[str]) -> str:
    if not noted:
        return phase.rstrip()
    return phase.rstrip() + "\n\n" + NOTES_MARK + "\n" + "\n".join(f"- {n}" for n in noted)


class StatusBoard:
    """The status comment of one issue, written by the run that holds its lease."""

    def __init__(
        self,
        github: GitHub[Any],
        store: Store,
        *,
        repo: str,
        number: int,
        bot_login: str,
        comment_id: int | None = None,
    ) -> None:
        self.github = github
        self.store = store
        self.repo = repo
        self.number = number
        self.bot_login = bot_login
        self.comment_id = comment_id
        self.last: str | None = None

    def post(self, phase: str) -> int:
        body = compose(phase, notes(self.store, self.repo, self.number))
        if body == self.last and self.comment_id is not None:
            return self.comment_id
        owner, name = self.repo.split("/", 1)
        if self.comment_id is not None:
            try:
                self.github.rest.issues.update_comment(
                    owner, name, self.comment_id, body=render(STATUS_KEY, body)
                )
                self.last = body
                return self.comment_id
            except RequestFailed as exc:
                if exc.response.status_code != 404:  # deleted by someone: find or post again
                    raise
        self.comment_id = upsert_comment(
            self.github,
            repo=self.repo,
            number=self.number,
            key=STATUS_KEY,
            body=body,
            bot_login=self.bot_login,
        )
        self.last = body
        return self.comment_id


def note_busy(
    github: GitHub[Any], store: Store, *, repo: str, number: int, bot_login: str, note: str
) -> None:
    """Add `note` under the phase of the status comment (posting one if there is none)."""
    noted = add_note(store, repo, number, note)
    owner, name = repo.split("/", 1)
    comments: Iterable[Any] = github.rest.paginate(
        github.rest.issues.list_comments,
        owner=owner,
        repo=name,
        issue_number=number,
        per_page=100,
    )
    existing = find_marked(comments, STATUS_KEY, bot_login)
    phase = ""
    if existing is not None:
        text = str(existing.body).split("\n", 1)[1] if "\n" in str(existing.body) else ""
        phase = text.split(NOTES_MARK, 1)[0]
    upsert_comment(
        github,
        repo=repo,
        number=number,
        key=STATUS_KEY,
        body=compose(phase or "This issue is an ourobot ticket.", noted),
        bot_login=bot_login,
    )
