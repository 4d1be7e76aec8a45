"""The merge the gate decided on, and what follows it.

`merge_now` merges H with `sha=H` (at most once per head: the effect is recorded only when
GitHub merged, so a 405 while a required check catches up does not use the head up) and writes
a ledger row for every attempt. `finish_merge` then does, once per pull request: a ledger row
with the merged SHA, both trees and every condition's evidence (a tree that is not H's tree is
an alarm: `error_class` `merge-tree-mismatch`, and said in the status comment); for ourobot's
own pull request the ticket labeled `ourobot:done` and closed and the branch deleted; the status
comment. A crash between the merge and these steps is finished by the next evaluation, which
finds the pull request merged by ourobot.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.commands.status_comment import upsert_comment
from app.controls.halt import check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.gate import Decision
from app.gate.merge import MergeResult, merge_commit_of, merge_exact, tree_of
from app.github_client import bot_login
from app.jobs.context import JobContext, effect_done, once, record_effect
from app.jobs.gate_snapshot import PullRef
from app.repo_config import RepoConfig
from app.workspace.branches import BOT_BRANCH_PREFIX

log = logging.getLogger(__name__)

DONE_LABEL = "ourobot:done"
IN_PROGRESS_LABEL = "ourobot:in-progress"
_TICKET_BRANCH = re.compile(r"^ourobot/issue-(\d+)$")


def merged_by_ourobot(data: Any, bot: str) -> bool:
    return bool(data.merged_by) and data.merged_by.login.lower() == bot.lower()


def merge_now(
    ctx: JobContext,
    github: GitHub[Any],
    installation_id: int | None,
    pull: PullRef,
    data: Any,
    config: RepoConfig,
    decision: Decision,
    *,
    requested_by: str | None,
) -> MergeResult:
    head = data.head.sha
    key = f"gate-merge:{pull.full_name.lower()}#{pull.number}:{head}"
    if effect_done(ctx, key):
        return MergeResult("refused", "this head was merged by an earlier run", head)
    check_halt(ctx, installation_id)
    result = merge_exact(github, pull.owner, pull.name, pull.number, head, config.merge.method)
    if result.status != "merged":
        Ledger(ctx.store).record(
            "merge",
            _subject(installation_id, pull, head, f"attempt:{head}"),
            Outcome("ok", "unmet", artifact="none"),
            detail={**result.to_dict(), "requested_by": requested_by},
        )
        return result
    record_effect(ctx, key)
    finish_merge(ctx, github, installation_id, pull, data, result, decision, requested_by)
    return result


def finish_merge(
    ctx: JobContext,
    github: GitHub[Any],
    installation_id: int | None,
    pull: PullRef,
    data: Any,
    result: MergeResult | None,
    decision: Decision | None = None,
    requested_by: str | None = None,
) -> None:
    """Everything after a merge, once per pull request (also after a crash: `result` None)."""
    with once(ctx, f"gate-merged:{pull.full_name.lower()}#{pull.number}") as first:
        if not first:
            return
        check_halt(ctx, installation_id)
        if result is None:
            result = _recovered(github, pull, data)
        ledger_row = {
            **result.to_dict(),
            "requested_by": requested_by,
            # Every condition with the reason it was met: what the merge stood on.
            "conditions": decision.evidence() if decision is not None else None,
        }
        Ledger(ctx.store).record(
            "merge",
            _subject(installation_id, pull, result.head_sha, "merged"),
            Outcome("ok", "met" if result.tree_matches else "unmet", artifact="merged"),
            error_class=None if result.tree_matches else "merge-tree-mismatch",
            detail=ledger_row,
            once=True,
        )
        bot = bot_login(ctx.github)
        ours = data.user is not None and data.user.login.lower() == bot.lower()
        if ours and data.head.ref.startswith(BOT_BRANCH_PREFIX):
            _delete_branch(github, pull, data.head.ref)
        ticket = _ticket_of(data, bot)
        if ticket is not None and not _close_ticket(github, pull, ticket):
            ticket = None
        upsert_comment(
            github,
            repo=pull.full_name,
            number=pull.number,
            key="status",
            body=status_text(result, ticket),
            bot_login=bot,
        )
        log.info("gate merged %s#%d as %s", pull.full_name, pull.number, result.merged_sha)


def status_text(result: MergeResult, ticket: int | None) -> str:
    lines = [f"Merged head `{result.head_sha}` as `{result.merged_sha}`."]
    if result.tree_matches:
        lines.append(f"The merged tree is the tree that was tested (`{result.head_tree}`).")
    else:
        lines.append(
            f"**Alarm**: the merged tree `{result.merged_tree}` is not the tested head's tree "
            f"`{result.head_tree}`. The ledger records it; look at what landed."
        )
    if ticket is not None:
        lines.append(f"Ticket #{ticket} is done and closed.")
    return "\n\n".join(lines)


def _recovered(github: GitHub[Any], pull: PullRef, data: Any) -> MergeResult:
    # The merge call's answer was lost with the run that made it: ask GitHub for the commit.
    head, merged = data.head.sha, merge_commit_of(github, pull.owner, pull.name, pull.number)
    head_tree = tree_of(github, pull.owner, pull.name, head)
    merged_tree = tree_of(github, pull.owner, pull.name, merged) if merged else None
    return MergeResult("merged", "merged (finished later)", head, merged, head_tree, merged_tree)


def _subject(installation_id: int | None, pull: PullRef, head: str, what: str) -> Subject:
    return Subject(
        key=f"merge:{pull.full_name.lower()}#{pull.number}:{what}",
        installation_id=installation_id,
        repo=pull.full_name,
        number=pull.number,
        head_sha=head,
    )


def _ticket_of(data: Any, bot: str) -> int | None:
    """The ticket of ourobot's own pull request, from its branch `ourobot/issue-N`."""
    user = data.user
    if user is None or user.login.lower() != bot.lower():
        return None
    match = _TICKET_BRANCH.match(data.head.ref)
    return int(match.group(1)) if match else None


def _close_ticket(github: GitHub[Any], pull: PullRef, ticket: int) -> bool:
    """Label the ticket done and close it; False when there is no such issue (a branch name
    is not proof that the issue exists, or that it is not a pull request)."""
    o, r = pull.owner, pull.name
    try:
        issue = github.rest.issues.get(o, r, ticket).parsed_data
    except RequestFailed as exc:
        if exc.response.status_code in (404, 410):
            return False
        raise
    if issue.pull_request:
        return False
    github.rest.issues.add_labels(o, r, ticket, labels=[DONE_LABEL])
    try:
        github.rest.issues.remove_label(o, r, ticket, IN_PROGRESS_LABEL)
    except RequestFailed as exc:
        if exc.response.status_code != 404:
            raise
    github.rest.issues.update(o, r, ticket, state="closed", state_reason="completed")
    return True


def _delete_branch(github: GitHub[Any], pull: PullRef, branch: str) -> None:
    try:
        github.rest.git.delete_ref(pull.owner, pull.name, f"heads/{branch}")
    except RequestFailed as exc:
        if exc.response.status_code not in (404, 422):  # already gone
            raise
