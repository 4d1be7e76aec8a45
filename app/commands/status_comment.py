"""Bot text found by hidden HTML markers and edited in place, never posted twice.

Each piece of bot text on a thread has a key (the status comment, the reply to one command);
the key is written into the comment as an HTML comment nobody sees. Before posting, we look for
our own comment carrying that key and edit it instead. Only comments authored by our bot are
trusted to carry a marker: a person pasting the marker gains nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from githubkit import GitHub

_KEY = re.compile(r"^[a-z0-9:._-]{1,100}$")


class CommentLike(Protocol):
    id: int
    body: Any
    user: Any


def marker(key: str) -> str:
    if not _KEY.match(key):
        raise ValueError(f"invalid marker key {key!r}")
    return f"<!-- ourobot:{key} -->"


def find_marked(comments: Iterable[CommentLike], key: str, bot_login: str) -> CommentLike | None:
    needle = marker(key)
    for comment in comments:
        author = getattr(comment.user, "login", None)
        if author == bot_login and isinstance(comment.body, str) and needle in comment.body:
            return comment
    return None


def render(key: str, body: str) -> str:
    return f"{marker(key)}\n{body.rstrip()}\n"


def upsert_comment(
    github: GitHub[Any], *, repo: str, number: int, key: str, body: str, bot_login: str
) -> int:
    """Create or edit the one comment with `key` on issue/PR `number`; returns its id."""
    owner, name = repo.split("/", 1)
    text = render(key, body)
    comments: Iterable[Any] = github.rest.paginate(
        github.rest.issues.list_comments,
        owner=owner,
        repo=name,
        issue_number=number,
        per_page=100,
    )
    existing = find_marked(comments, key, bot_login)
    if existing is None:
        created = github.rest.issues.create_comment(owner, name, number, body=text).parsed_data
        return int(created.id)
    if existing.body != text:
        github.rest.issues.update_comment(owner, name, existing.id, body=text)
    return int(existing.id)
