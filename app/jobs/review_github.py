"""Posting a review run on GitHub: the `ourobot/review` check run and the PR review.

Each write is found before it is made, so a rerun (a redelivered event, a retried task, a crash
between two writes) never posts twice: the check run by its `external_id` (the run key) among
our own check runs on that head, the PR review by its hidden marker among our own reviews.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Literal, cast

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.commands.status_comment import marker
from app.jobs.review_publish import CHECK_NAME, Publication

log = logging.getLogger(__name__)

ANNOTATIONS_PER_REQUEST = 50  # GitHub's limit per check-run request
ReviewEvent = Literal["COMMENT", "REQUEST_CHANGES"]


def _split(repo: str) -> tuple[str, str]:
    owner, _, name = repo.partition("/")
    return owner, name


def find_check_run(
    github: GitHub[Any], repo: str, head_sha: str, run_key: str, *, app_id: int | None
) -> Any | None:
    """Our check run for `run_key` on `head_sha`, if one was created."""
    owner, name = _split(repo)
    runs = github.rest.paginate(
        github.rest.checks.list_for_ref,
        map_func=lambda response: response.parsed_data.check_runs,
        owner=owner,
        repo=name,
        ref=head_sha,
        check_name=CHECK_NAME,
        filter_="all",
        per_page=100,
    )
    for run in runs:
        if run.external_id != run_key or run.head_sha != head_sha:
            continue
        if app_id is not None and (run.app is None or run.app.id != app_id):
            continue  # another App's run cannot stand in for ours
        return run
    return None


GUARDS_CHECK = "ourobot/guards"


def guards_run(github: GitHub[Any], repo: str, head_sha: str, *, app_id: int | None) -> Any | None:
    """Our newest `ourobot/guards` run on `head_sha` (another App's cannot stand in)."""
    owner, name = _split(repo)
    runs = github.rest.paginate(
        github.rest.checks.list_for_ref,
        map_func=lambda response: response.parsed_data.check_runs,
        owner=owner,
        repo=name,
        ref=head_sha,
        check_name=GUARDS_CHECK,
        filter_="latest",
        per_page=100,
    )
    ours = [
        run
        for run in runs
        if run.head_sha == head_sha and (app_id is None or (run.app and run.app.id == app_id))
    ]
    return max(ours, key=lambda run: int(run.id), default=None)


def start_check_run(
    github: GitHub[Any], repo: str, head_sha: str, run_key: str, *, models: list[str]
) -> int:
    """Create the in-progress check run on `head_sha`; its id."""
    owner, name = _split(repo)
    listing = ", ".join(f"`{model}`" for model in models) or "none"
    created = github.rest.checks.create(
        owner,
        name,
        data=cast(
            Any,
            {
                "name": CHECK_NAME,
                "head_sha": head_sha,
                "status": "in_progress",
                "external_id": run_key,
                "output": {
                    "title": f"Reviewing {head_sha[:12]}",
                    "summary": f"The review panel ({listing}) is reviewing `{head_sha}`.",
                },
            },
        ),
    ).parsed_data
    return int(created.id)


def complete_check_run(
    github: GitHub[Any], repo: str, run_id: int, publication: Publication
) -> None:
    """Conclude the check run; annotations go in batches of GitHub's per-request limit."""
    owner, name = _split(repo)
    annotations = [annotation.as_github() for annotation in publication.annotations]
    batches = [
        annotations[start : start + ANNOTATIONS_PER_REQUEST]
        for start in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)
    ] or [[]]
    output = {"title": publication.check_title, "summary": publication.check_summary}
    # The extra batches first: the run completes last, so a check that shows as completed
    # carries every annotation.
    for batch in batches[1:]:
        github.rest.checks.update(
            owner, name, run_id, data=cast(Any, {"output": {**output, "annotations": batch}})
        )
    github.rest.checks.update(
        owner,
        name,
        run_id,
        data=cast(
            Any,
            {
                "status": "completed",
                "conclusion": publication.conclusion,
                "output": {**output, "annotations": batches[0]},
            },
        ),
    )


def find_review(github: GitHub[Any], repo: str, number: int, key: str, bot_login: str) -> Any:
    """Our PR review carrying the marker `key`, if posted."""
    owner, name = _split(repo)
    needle = marker(key)
    reviews: Iterable[Any] = github.rest.paginate(
        github.rest.pulls.list_reviews, owner=owner, repo=name, pull_number=number, per_page=100
    )
    for review in reviews:
        author = getattr(review.user, "login", None)
        if author == bot_login and isinstance(review.body, str) and needle in review.body:
            return review
    return None


def post_review(
    github: GitHub[Any],
    repo: str,
    number: int,
    publication: Publication,
    *,
    event: ReviewEvent,
) -> int:
    """One PR review on the reviewed head, findings inline where GitHub can place them."""
    owner, name = _split(repo)
    body = f"{marker(publication.marker_key)}\n{publication.review_body}"
    comments = [
        {"path": c.path, "line": c.line, "side": "RIGHT", "body": c.body}
        for c in publication.inline
    ]
    request = {"commit_id": publication.head_sha, "event": event, "body": body}
    try:
        posted = github.rest.pulls.create_review(
            owner, name, number, data=cast(Any, {**request, "comments": comments})
        )
    except RequestFailed as exc:
        if exc.response.status_code != 422 or not comments:
            raise
        # GitHub could not place a comment (its diff of that commit differs from ours):
        # the findings stay in the body, nothing is lost.
        log.warning("review on %s#%d: inline comments refused (%s)", repo, number, exc)
        request["body"] = body + _unplaced(publication)
        posted = github.rest.pulls.create_review(owner, name, number, data=cast(Any, request))
    return int(posted.parsed_data.id)


def _unplaced(publication: Publication) -> str:
    lines = ["", "", "Inline findings GitHub could not place on the diff:", ""]
    lines += [f"- `{c.path}:{c.line}`: {c.body}" for c in publication.inline]
    return "\n".join(lines)


def dismiss_stale_requests(
    github: GitHub[Any], repo: str, number: int, bot_login: str, *, head_sha: str
) -> int:
    """Dismiss our earlier "changes requested" reviews once a later head passed: a rejection
    of an old commit must not keep blocking the new one. Returns how many were dismissed."""
    owner, name = _split(repo)
    prefix = "<!-- ourobot:review."
    reviews: Iterable[Any] = github.rest.paginate(
        github.rest.pulls.list_reviews, owner=owner, repo=name, pull_number=number, per_page=100
    )
    stale = [
        review
        for review in reviews
        if getattr(review.user, "login", None) == bot_login
        and review.state == "CHANGES_REQUESTED"
        and review.commit_id != head_sha
        and isinstance(review.body, str)
        and prefix in review.body
    ]
    for review in stale:
        github.rest.pulls.dismiss_review(
            owner,
            name,
            number,
            review.id,
            data=cast(Any, {"message": f"Superseded: the review panel passed `{head_sha}`."}),
        )
    return len(stale)
