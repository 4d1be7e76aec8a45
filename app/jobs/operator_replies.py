"""`/ourobot status` and `/ourobot budget`: read the store (and the repository's config) and
say what ourobot knows about this thread. One comment per thread and verb, found by its hidden
marker and edited in place: asking again refreshes it instead of posting another."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from githubkit import GitHub

from app.commands.operator_text import Budget, ThreadStatus, budget_text, status_text
from app.controls.ledger import Ledger
from app.controls.ledger_query import LedgerFilter, search
from app.errors import ConfigError
from app.jobs.context import JobContext
from app.jobs.gate_snapshot import PullRef, base_config

OPERATOR_VERBS = frozenset({"status", "budget"})
THREAD_ROWS = 12


def reply_key(verb: str) -> str:
    """The marker key of the thread's one reply to `verb`."""
    return f"{verb}-reply"


def operator_reply(
    ctx: JobContext,
    github: GitHub[Any],
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    login: str,
    verb: str,
) -> str:
    ticket = f"{repo}#{number}"
    ledger = Ledger(ctx.store)
    if verb == "status":
        status = ThreadStatus(
            repo=repo,
            number=number,
            at=datetime.now(UTC),
            entries=search(ctx.store, LedgerFilter(repo=repo, number=number, limit=THREAD_ROWS)),
            spent_micro_usd=ledger.spent_on_ticket(ticket),
        )
        return status_text(status, asked_by=login)
    operator_cap = ctx.settings.cap_usd_per_ticket
    problem, cap = None, operator_cap
    try:
        cap = _repo_config(github, repo, number).capped(ctx.settings).budgets.usd_per_ticket
    except ConfigError as exc:
        problem = str(exc)
    budget = Budget(
        ticket=ticket,
        spent_micro_usd=ledger.spent_on_ticket(ticket),
        ticket_cap_usd=cap,
        operator_ticket_cap_usd=operator_cap,
        config_problem=problem,
        installation_spent_today_micro_usd=ledger.spent_today(installation_id),
        day_cap_usd=ctx.settings.cap_usd_per_day,
    )
    return budget_text(budget, asked_by=login)


def _repo_config(github: GitHub[Any], repo: str, number: int) -> Any:
    owner, name = repo.split("/", 1)
    default = github.rest.repos.get(owner, name).parsed_data.default_branch
    return base_config(github, PullRef(owner, name, number), default)
