"""Job functions behind slash commands and ticket labels: authorize, acknowledge, answer.

Each runs at most once per (comment, verb): the effect is keyed locally (`once`) and the
reply carries a hidden marker on GitHub, so a rerun after a crash edits instead of posting.
"""

from __future__ import annotations

from app.commands import replies
from app.commands.authz import PermissionCache, permission_of
from app.commands.slash import Permission, SlashCommand, may_run
from app.commands.status_comment import upsert_comment
from app.controls.halt import check_halt
from app.github_client import bot_login
from app.jobs.context import JobContext, once
from app.jobs.gate_commands import GATE_VERBS, gate_reply
from app.jobs.loop_commands import LOOP_VERBS, loop_reply
from app.jobs.operator_replies import OPERATOR_VERBS, operator_reply, reply_key
from app.jobs.plan import plan_reply
from app.jobs.registry import job
from app.jobs.review_check import review_reply
from app.jobs.scout import scout_reply

_permissions = PermissionCache()


@job("command")
def run_command(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    comment_id: int,
    login: str,
    verb: str,
    args: list[str],
    is_pull_request: bool = False,
    issue_title: str | None = None,
    issue_body: str | None = None,
    issue_labels: list[str] | None = None,
) -> None:
    command = SlashCommand(verb=verb, args=tuple(args), line=0)
    with once(ctx, f"command:{repo}:{comment_id}:{verb}") as first:
        if not first:
            return
        github = ctx.github.installation(installation_id)
        owner, name = repo.split("/", 1)
        check_halt(ctx, installation_id)
        # GitHub answers an existing identical reaction with 200: safe to repeat.
        github.rest.reactions.create_for_issue_comment(owner, name, comment_id, content="eyes")
        permission = permission_of(
            github, installation_id=installation_id, repo=repo, login=login, cache=_permissions
        )
        body = answer(command, login=login, permission=permission, operators=ctx.settings.operators)
        if verb == "review" and may_run(
            command, permission, login=login, operators=frozenset(ctx.settings.operators)
        ):
            body = review_reply(
                ctx,
                installation_id=installation_id,
                repo=repo,
                number=number,
                comment_id=comment_id,
                is_pull_request=is_pull_request,
            )
        if verb in GATE_VERBS and may_run(
            command, permission, login=login, operators=frozenset(ctx.settings.operators)
        ):
            body = gate_reply(
                ctx,
                installation_id=installation_id,
                repo=repo,
                number=number,
                comment_id=comment_id,
                login=login,
                verb=verb,
                args=args,
                is_pull_request=is_pull_request,
            )
        allowed = may_run(
            command, permission, login=login, operators=frozenset(ctx.settings.operators)
        )
        if verb == "plan" and allowed:
            body = plan_reply(
                ctx,
                installation_id=installation_id,
                repo=repo,
                number=number,
                comment_id=comment_id,
                login=login,
                is_pull_request=is_pull_request,
                title=issue_title,
                body=issue_body,
            )
        if verb == "scout" and allowed:
            body = scout_reply(
                ctx, installation_id=installation_id, repo=repo, comment_id=comment_id
            )
        if verb in LOOP_VERBS and allowed:
            body = loop_reply(
                ctx,
                installation_id=installation_id,
                repo=repo,
                number=number,
                comment_id=comment_id,
                login=login,
                verb=verb,
                args=args,
                is_pull_request=is_pull_request,
                title=issue_title or "",
                issue_body=issue_body or "",
                labels=issue_labels or [],
            )
        key = f"reply.{comment_id}.{verb}"
        if verb in OPERATOR_VERBS and may_run(
            command, permission, login=login, operators=frozenset(ctx.settings.operators)
        ):
            body = operator_reply(
                ctx,
                github,
                installation_id=installation_id,
                repo=repo,
                number=number,
                login=login,
                verb=verb,
            )
            key = reply_key(verb)
        check_halt(ctx, installation_id)
        upsert_comment(
            github,
            repo=repo,
            number=number,
            key=key,
            body=body,
            bot_login=bot_login(ctx.github),
        )


def answer(
    command: SlashCommand, *, login: str, permission: Permission, operators: tuple[str, ...]
) -> str:
    """The reply to one command from `login`, who holds `permission`."""
    if not command.known:
        return replies.unknown(login, command)
    if not may_run(command, permission, login=login, operators=frozenset(operators)):
        return replies.refusal(login, command, permission)
    if command.verb == "help":
        return replies.help_text()
    return replies.not_available(command)
