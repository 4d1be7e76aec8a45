"""`ourobot action command`: slash commands and ticket labels handled inside GitHub Actions.

The same router and job functions as the App, fed from the Actions runtime: the event from
`GITHUB_EVENT_NAME`/`GITHUB_EVENT_PATH`, the token from `GITHUB_TOKEN`, a throwaway store under
`RUNNER_TEMP`. Jobs run inline, one after another. The Action has no durable halt (its state
dies with the job), so `/ourobot panic` and `/ourobot resume` are answered with how to stop the
Action instead: disable its workflow.

Ticket work is not done here: an `ourobot:ticket` label or `/ourobot implement` pushes a branch
and opens a pull request, which needs `contents: write` and `pull-requests: write` that a
`command` workflow is not meant to hold. Those jobs are left out with one line pointing at
`command: implement` (`app.action.implement`), which runs the cycle with those permissions.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.commands.slash import parse_commands
from app.commands.status_comment import upsert_comment
from app.controls.halt import HaltRegistry
from app.errors import UserError
from app.github_client import GitHubClients, bot_login
from app.handlers.commands import INLINE_VERBS
from app.handlers.routes import build_router
from app.jobs.context import JobContext
from app.jobs.registry import Job, load_job_modules, registered_jobs
from app.settings import load_settings
from app.store import Store

log = logging.getLogger(__name__)

TICKET_WORK_REFUSED = (
    "ourobot: `command: command` does not run ticket work (an `ourobot:ticket` label or "
    "`/ourobot implement`); run it with `command: implement`, which has the permissions to push."
)

INLINE_VERB_ANSWER = (
    "`/ourobot {verb}` needs the ourobot App, which keeps a durable halt. This repository runs "
    "ourobot as a GitHub Action: to stop it, disable its workflow (Actions → the workflow → "
    "Disable workflow)."
)


def read_event(env: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    name = env.get("GITHUB_EVENT_NAME")
    path = env.get("GITHUB_EVENT_PATH")
    if not name or not path:
        raise UserError("GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set: run inside Actions")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(payload, dict):
        raise UserError(f"the event payload {path} is not a JSON object")
    return name, payload


def build_context(env: Mapping[str, str], *, gate_merge: bool = False) -> JobContext:
    token = env.get("GITHUB_TOKEN")
    if not token:
        raise UserError("GITHUB_TOKEN is not set: pass `github-token` to the action")
    data_dir = Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / "ourobot"
    settings = load_settings(
        github_api_url=env.get("GITHUB_API_URL", "https://api.github.com"),
        data_dir=data_dir,
        database_url=None,
        redis_url=None,
        gate_merge=gate_merge,
    )
    store = Store.open(settings)
    store.migrate()
    halts = HaltRegistry(store)
    github = GitHubClients(settings, write_guard=halts.check, fixed_token=token)
    return JobContext(settings=settings, store=store, github=github, redis=None)


def run_command(env: Mapping[str, str]) -> int:
    """Route the event and run its jobs; 0 when every job ran, 1 when one failed."""
    event, payload = read_event(env)
    ctx = build_context(env)
    load_job_modules(ctx.settings)
    action = str(payload.get("action") or "")
    routed = build_router(ctx.settings).route(event, action, payload, delivery_id="actions")
    jobs = [planned for planned in routed if not is_ticket_work(planned)]
    if len(jobs) < len(routed):
        print(TICKET_WORK_REFUSED)
    answer_inline_verbs(ctx, event, action, payload)
    failed = 0
    for planned in jobs:
        try:
            registered_jobs()[planned.name](ctx, **planned.kwargs)
            print(f"ourobot: ran {planned.name} for {planned.kwargs.get('repo')}")
        except Exception as exc:
            failed += 1
            print(f"::error title=ourobot::{planned.name} failed: {type(exc).__name__}")
            log.warning("job %s failed: %s", planned.name, exc)
    if not routed:
        print(f"ourobot: nothing to do for {event}.{action or '-'}")
    return 1 if failed else 0


def is_ticket_work(planned: Job) -> bool:
    """A job that runs a cycle for an issue: the label's, or `/ourobot implement`'s."""
    return planned.name == "ticket" or (
        planned.name == "command" and planned.kwargs.get("verb") == "implement"
    )


def answer_inline_verbs(
    ctx: JobContext, event: str, action: str, payload: Mapping[str, Any]
) -> None:
    if event != "issue_comment" or action != "created":
        return
    comment = payload.get("comment") or {}
    issue = payload.get("issue") or {}
    repo = (payload.get("repository") or {}).get("full_name")
    user = comment.get("user") or {}
    if user.get("type") != "User" or not isinstance(repo, str):
        return
    for command in parse_commands(comment.get("body")):
        if command.verb in INLINE_VERBS:
            upsert_comment(
                ctx.github.installation(None),
                repo=repo,
                number=int(issue["number"]),
                key=f"reply.{comment['id']}.{command.verb}",
                body=INLINE_VERB_ANSWER.format(verb=command.verb),
                bot_login=bot_login(ctx.github),
            )
