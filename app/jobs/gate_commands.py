"""The gate's slash commands, once the commenter's permission is checked: the reply's text.

- `/ourobot merge`: evaluate now (waiting for a running evaluation rather than folding into
  it) and merge if everything holds; otherwise say what is missing. It never skips a condition.
- `/ourobot hold` / `unhold`: add or remove `ourobot:hold`; the label event re-evaluates.
- `/ourobot override <guards|review> <reason>`: re-post that check as success by ourobot's App
  on the current head only, naming the user and the reason; recorded in the ledger.
- `/ourobot revert`: open a revert pull request of a pull request ourobot merged.
"""

from __future__ import annotations

from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.controls.halt import check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.gate.flags import HOLD_LABEL
from app.gate.override import OverrideRefused, override_summary, parse_override
from app.github_client import bot_login
from app.guards.result import markdown_cell
from app.jobs.context import JobContext
from app.jobs.gate_check import Evaluation, evaluate_serialized
from app.jobs.gate_revert import RevertRefused, open_revert
from app.jobs.gate_snapshot import PullRef, read_pull

GATE_VERBS = frozenset({"merge", "hold", "unhold", "override", "revert"})


def gate_reply(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    comment_id: int,
    login: str,
    verb: str,
    args: list[str],
    is_pull_request: bool,
) -> str:
    if not is_pull_request:
        return f"`/ourobot {verb}` works on a pull request, and this is an issue. Nothing was done."
    owner, name = repo.split("/", 1)
    pull = PullRef(owner, name, number)
    github = ctx.github.installation(installation_id)
    check_halt(ctx, installation_id)
    if verb == "merge":
        result = evaluate_serialized(ctx, installation_id, repo, number, merge_requested_by=login)
        return merge_reply(login, result)
    if verb == "hold":
        github.rest.issues.add_labels(owner, name, number, labels=[HOLD_LABEL])
        return f"Held by @{login}: nothing merges here until `/ourobot unhold`."
    if verb == "unhold":
        try:
            github.rest.issues.remove_label(owner, name, number, HOLD_LABEL)
        except RequestFailed as exc:
            if exc.response.status_code != 404:
                raise
            return "There was no hold on this pull request."
        return f"Hold lifted by @{login}; the gate evaluates again."
    if verb == "override":
        return _override(ctx, github, installation_id, pull, login, comment_id, args)
    if verb == "revert":
        try:
            return open_revert(ctx, github, installation_id, pull, read_pull(github, pull),
                               login=login, bot=bot_login(ctx.github))  # fmt: skip
        except RevertRefused as exc:
            return f"No revert: {exc}. Nothing was done."
    raise ValueError(f"not a gate verb: {verb}")


def merge_reply(login: str, result: Evaluation | None) -> str:
    if result is None:  # cannot happen with a merge request, which waits its turn
        return "The gate is busy with this pull request; ask again in a moment."
    if result.skipped:
        return f"Nothing to merge: {result.skipped}."
    if result.merge is not None and result.merge.status == "merged":
        merge = result.merge
        return f"Merged `{merge.head_sha}` as `{merge.merged_sha}`, as @{login} asked."
    lines = [f"@{login}, not merged."]
    if result.decision is not None and result.decision.missing:
        lines.append("")
        lines += [f"- `{c.name}`: {markdown_cell(c.reason)}" for c in result.decision.missing]
    if result.notes:
        lines += ["", *result.notes]
    return "\n".join(lines)


def _override(
    ctx: JobContext,
    github: GitHub[Any],
    installation_id: int | None,
    pull: PullRef,
    login: str,
    comment_id: int,
    args: list[str],
) -> str:
    try:
        override = parse_override(args)
    except OverrideRefused as exc:
        return f"@{login}, {exc}. Nothing was done."
    data = read_pull(github, pull)
    if data.state != "open":
        return "This pull request is not open: nothing to override. Nothing was done."
    head = data.head.sha
    summary = override_summary(override, login=login, head_sha=head, number=pull.number)
    made = github.rest.checks.create(
        pull.owner, pull.name, name=override.check_name, head_sha=head, status="completed",
        conclusion="success", external_id=f"override:{head}:{comment_id}",
        output={"title": f"Overridden by {login}", "summary": summary},
    ).parsed_data  # fmt: skip
    Ledger(ctx.store).record(
        "override",
        Subject(
            key=f"override:{pull.full_name.lower()}#{pull.number}:{head}:{override.target}",
            installation_id=installation_id,
            repo=pull.full_name,
            number=pull.number,
            head_sha=head,
        ),
        Outcome("ok", "met"),
        detail={
            "check": override.check_name,
            "by": login,
            "reason": override.reason,
            "run_id": made.id,
            "comment_id": comment_id,
        },
    )
    return (
        f"`{override.check_name}` overridden by @{login} on `{head}` only: "
        f"{markdown_cell(override.reason)}. A push starts it over."
    )
