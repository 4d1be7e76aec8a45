"""`/ourobot plan`: the planner's plan for an issue, posted as a comment, nothing implemented.

The same planner the cycle runs (`app.loop.planner`, `prompts/planner.md` or the repository's
override), on a throwaway worktree of the default branch's head in the bare mirror, on a branch
of its own (`ourobot/plan-<issue>-<comment>`, deleted afterwards) so that it never disturbs a
cycle working the same issue. The ticket is the issue's title and body as the command's event
carried them (trigger-time text), fenced and stripped of hidden content by the prompt.

One plan comment per issue (hidden marker `plan`), edited in place when a plan is asked for
again; the command's own reply says what happened. The plan is model text: its hidden content
is stripped (a marker it wrote could otherwise pose as another of ourobot's comments) and its
mentions are defused before it is posted.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.commands.status_comment import upsert_comment
from app.controls.halt import check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.controls.pricing import PriceTable, usd
from app.controls.spend_caps import Caps
from app.errors import UserError
from app.github_client import bot_login
from app.jobs.context import JobContext
from app.jobs.default_branch import config_at, fetch_default_branch
from app.jobs.review_inputs import credentials, worker_secrets
from app.loop.context import Context, read_constitution, role_template
from app.loop.metering import ModelGate
from app.loop.planner import PLANNER_TIMEOUT_S, make_plan
from app.loop.scout import defuse_mentions
from app.loop.ticket import Ticket
from app.workspace.worktree import open_workspace
from reviewers.untrusted import strip_hidden

PLAN_KEY = "plan"


@dataclass(frozen=True)
class PlanRequest:
    installation_id: int | None
    repo: str
    number: int
    comment_id: int
    login: str
    title: str
    body: str


def plan_reply(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    comment_id: int,
    login: str,
    is_pull_request: bool,
    title: str | None,
    body: str | None,
) -> str:
    """Plan the issue and post (or edit) its plan comment; the command's reply."""
    if is_pull_request:
        return "`/ourobot plan` plans an issue, and this is a pull request. Nothing was done."
    github = ctx.github.installation(installation_id)
    if title is None or body is None:  # an event without the issue's text: read it now
        owner, name = repo.split("/", 1)
        issue = github.rest.issues.get(owner, name, number).parsed_data
        title, body = str(issue.title or ""), str(issue.body or "")
    request = PlanRequest(installation_id, repo, number, comment_id, login, title, body)
    check_halt(ctx, installation_id)
    base = fetch_default_branch(ctx, github, installation_id, repo)
    try:
        config = config_at(base, ctx)
        template = role_template(base.git_dir, base.base_sha, "planner")
        constitution = read_constitution(base.git_dir, base.base_sha)
    except UserError as exc:
        return f"No plan: {exc}. Nothing was done."
    ticket = Ticket(
        id=f"issue-{number}", key=f"{repo}#{number}", title=request.title, body=request.body
    )
    subject = Subject(
        f"plan:{repo.lower()}#{number}:{comment_id}", installation_id, repo, number, ticket.key
    )
    from reviewers.providers import build_fallback  # the SDKs: only when a model is asked

    gate = ModelGate(
        Ledger(ctx.store),
        PriceTable.from_settings(ctx.settings),
        Caps.for_repo(config, ctx.settings),
        subject,
        halt_check=lambda: check_halt(ctx, installation_id),
    )
    client = build_fallback(config.models.planner, credentials(ctx.settings))
    secrets = worker_secrets(ctx.settings, token=None)
    with open_workspace(
        base.git_dir, ticket=f"plan-{number}-{comment_id}", base_sha=base.base_sha
    ) as workspace:
        context = Context(workspace, config, ticket, constitution=constitution, secrets=secrets)
        result = make_plan(context, template, client, gate, time_left=lambda: PLANNER_TIMEOUT_S)
    calls, spent = gate.calls()
    cost = f"{usd(spent)} in {calls} call(s), counted against #{number}"
    outcome = Outcome("ok", "met") if result.plan else Outcome("error", "unmet")
    Ledger(ctx.store).record(
        "plan", subject, outcome, detail={"note": result.note, "base": base.base_sha}, once=True
    )
    if result.plan is None:
        return f"No plan for #{number} ({result.note}). Nothing was posted; model spend {cost}."
    check_halt(ctx, installation_id)
    upsert_comment(
        github,
        repo=repo,
        number=number,
        key=PLAN_KEY,
        body=plan_text(result.plan, base.base_sha, login, cost),
        bot_login=bot_login(ctx.github),
    )
    return (
        f"Planned #{number} at `{base.base_sha[:12]}` ({result.note}): see the plan comment "
        "(edited in place each time a plan is asked for). Nothing was implemented."
    )


def plan_text(plan: str, base_sha: str, login: str, cost: str) -> str:
    return (
        f"### ourobot's plan\n\n{defuse_mentions(strip_hidden(plan)).strip()}\n\n---\n"
        f"_Advisory, at `{base_sha[:12]}`, asked for by `{login}`; model spend {cost}. Nothing "
        "was implemented: label the issue `ourobot:ticket` (or `/ourobot implement`) for that._"
    )
