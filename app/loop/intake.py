"""A GitHub issue as a ticket: the text the triggering event carried, as a person saw it.

The title and body come from the payload of the label or the comment that started the cycle
(text at trigger time: an edit made after the trigger does not reach the model). Hidden content
is stripped here, before anything stores or shows it: HTML comments, zero-width and bidi
characters, alt text and link titles (`reviewers.untrusted.strip_hidden`). The prompt fences it
again as untrusted text; stripping here also keeps hidden text out of the pull request.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.loop.ticket import Ticket
from reviewers.untrusted import strip_hidden

MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 60_000


def issue_ticket(
    repo: str, number: int, *, title: str, body: str, labels: Iterable[str] = ()
) -> Ticket:
    """Issue `number` of `repo` as the loop's ticket, on branch `ourobot/issue-<number>`."""
    clean_title = " ".join(strip_hidden(title).split())[:MAX_TITLE_CHARS]
    clean_body = strip_hidden(body).strip()[:MAX_BODY_CHARS]
    names = tuple(dict.fromkeys(label for label in labels if label.strip()))
    return Ticket(
        id=f"issue-{number}",
        key=f"{repo}#{number}",
        title=clean_title,
        body=clean_body + "\n",
        labels=names,
    )
