"""`merge_group.checks_requested`: ourobot's checks on the merge queue's own commit.

GitHub's merge queue tests a commit of its own (the base tip merged with the pull request) and
merges it when the base's required checks are green *on that commit*. So ourobot posts
`ourobot/guards` and `ourobot/review` there too, and the queue gets the same guarantee as the
gate:

- `ourobot/guards`: the guards run for real on the group's commit (its diff against the base
  branch, under the base branch's config), the same job as for a pull request head.
- `ourobot/review`: the panel's verdict is about a tree. When the group's commit has exactly
  the tree of the pull request head the panel reviewed (the head already contained the base),
  that verdict is re-posted on the group commit, saying which run and which tree. When the
  trees differ (the queue merged in commits the panel never saw), it fails, saying so: the
  panel did not review that tree, and a failure is the only honest answer (fail closed).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Literal

from app.gate.checks import REVIEW_CHECK
from app.gate.merge import tree_of
from app.guards.result import markdown_cell
from app.jobs.context import JobContext
from app.jobs.gate_snapshot import PullRef, read_pull
from app.jobs.guards_check import guards_check
from app.jobs.registry import job

log = logging.getLogger(__name__)

_QUEUE_REF = re.compile(r"^refs/heads/gh-readonly-queue/.+/pr-(\d+)-[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def queued_pull(head_ref: str) -> int | None:
    """The pull request a merge group's ref names (`gh-readonly-queue/<base>/pr-<n>-<sha>`)."""
    match = _QUEUE_REF.match(head_ref)
    return int(match.group(1)) if match else None


@job("merge_group_checks")
def merge_group_checks(
    ctx: JobContext,
    *,
    installation_id: int,
    repo: str,
    head_sha: str,
    head_ref: str,
    base_sha: str,
    base_ref: str,
) -> None:
    number = queued_pull(head_ref)
    if number is None:
        log.warning("merge group %s names no pull request; nothing posted", head_ref)
        return
    owner, name = repo.split("/", 1)
    github = ctx.github.installation(installation_id)
    pull = PullRef(owner, name, number)
    data = read_pull(github, pull)
    user = data.user
    guards_check(
        ctx,
        installation_id=installation_id,
        repo=repo,
        number=number,
        head_sha=head_sha,
        base_ref=base_ref.removeprefix("refs/heads/"),
        head_ref=data.head.ref,
        author_login=user.login if user else "",
        author_is_bot=bool(user and user.type == "Bot"),
    )
    conclusion, title, summary = review_carry_over(ctx, github, pull, data.head.sha, head_sha)
    github.rest.checks.create(
        owner, name, name=REVIEW_CHECK, head_sha=head_sha, status="completed",
        conclusion=conclusion, output={"title": title, "summary": summary},
        external_id=f"review:merge-group:{head_sha}",
    )  # fmt: skip


def review_carry_over(
    ctx: JobContext, github: Any, pull: PullRef, pull_head: str, group_head: str
) -> tuple[Literal["success", "failure"], str, str]:
    """What `ourobot/review` says on the group's commit: the head's verdict, if same tree."""
    app_id = ctx.settings.app_id
    listed = github.rest.checks.list_for_ref(
        pull.owner, pull.name, pull_head, check_name=REVIEW_CHECK, filter_="all"
    ).parsed_data
    runs = sorted(listed.check_runs, key=lambda run: run.id)
    latest = runs[-1] if runs else None
    where = f"merge group commit `{group_head}` of pull request #{pull.number}"
    if latest is None or latest.app is None or latest.app.id != app_id:
        return ("failure", "No review of the pull request's head",
                f"The {where}: the head `{pull_head}` has no {REVIEW_CHECK} run by ourobot, "
                "so nothing reviewed this change.")  # fmt: skip
    if latest.status != "completed" or latest.conclusion != "success":
        state = latest.conclusion or latest.status
        return ("failure", f"The head's review is {state}",
                f"The {where}: the review of head `{pull_head}` (run {latest.id}) is "
                f"{markdown_cell(str(state))}.")  # fmt: skip
    head_tree = tree_of(github, pull.owner, pull.name, pull_head)
    group_tree = tree_of(github, pull.owner, pull.name, group_head)
    if head_tree != group_tree:
        return ("failure", "The queue's tree is not the reviewed tree",
                f"The {where} has tree `{group_tree}`; the panel reviewed head `{pull_head}` "
                f"with tree `{head_tree}`. The queue merged in commits the panel never saw: "
                "bring the pull request up to date with its base, and it is reviewed again.",
                )  # fmt: skip
    return ("success", "Same tree as the reviewed head",
            f"The {where} has exactly the tree `{group_tree}` of head `{pull_head}`, which the "
            f"panel approved in run {latest.id}: that verdict is about this tree.")  # fmt: skip
