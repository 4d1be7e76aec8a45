"""What `/ourobot status` and `/ourobot budget` answer on a thread. Text only, no I/O.

Only words ourobot itself wrote reach these replies (outcome axes, error classes, kinds,
amounts, logins GitHub gave); reasons and model text stay in the ledger, shown by
`ourobot ledger`, so nothing untrusted is echoed into a comment here. No halt appears either:
while one is in force ourobot writes nothing on GitHub, this reply included (`ourobot status`
and the status page show halts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.controls.ledger import Entry
from app.controls.pricing import usd

MICRO = 1_000_000


@dataclass(frozen=True)
class ThreadStatus:
    repo: str
    number: int
    at: datetime
    entries: Sequence[Entry]  # the thread's newest ledger rows, oldest first
    spent_micro_usd: int  # on this thread as a ticket


@dataclass(frozen=True)
class Budget:
    ticket: str
    spent_micro_usd: int
    ticket_cap_usd: float
    operator_ticket_cap_usd: float
    config_problem: str | None  # the repository's config could not be read
    installation_spent_today_micro_usd: int
    day_cap_usd: float | None


def _safe(text: str) -> str:
    """A word for a Markdown table cell: no pipes, backticks or newlines can break out."""
    return "".join(ch for ch in text if ch.isalnum() or ch in "-_.:/#@ ")[:80]


def status_text(status: ThreadStatus, *, asked_by: str) -> str:
    lines = [
        f"**ourobot status** for {_safe(status.repo)}#{status.number}, "
        f"as of {status.at:%Y-%m-%d %H:%M:%S} UTC (asked by @{_safe(asked_by)})",
        "",
    ]
    if not status.entries:
        lines.append("The ledger has no rows for this thread yet.")
    else:
        lines += [
            "| when (UTC) | what | execution | objective | review | artifact | class |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for entry in status.entries:
            o = entry.outcome
            sha = f" `{entry.head_sha[:7]}`" if entry.head_sha else ""
            lines.append(
                f"| {entry.at:%m-%d %H:%M} | {_safe(entry.kind)}{sha} | {o.execution} | "
                f"{o.objective} | {o.review} | {o.artifact} | {_safe(entry.error_class or '')} |"
            )
    lines += ["", f"Model spend on this thread as a ticket: {usd(status.spent_micro_usd)}."]
    return "\n".join(lines)


def budget_text(budget: Budget, *, asked_by: str) -> str:
    cap = round(budget.ticket_cap_usd * MICRO)
    left = max(cap - budget.spent_micro_usd, 0)
    lines = [
        f"**ourobot budget** for {_safe(budget.ticket)} (asked by @{_safe(asked_by)})",
        "",
        f"- this ticket: {usd(budget.spent_micro_usd)} spent of {usd(cap)} ({usd(left)} left)",
    ]
    if budget.config_problem is not None:
        lines.append(
            "- the repository's `.github/ourobot.yml` could not be read "
            f"({_safe(budget.config_problem)}); the operator's cap "
            f"{usd(round(budget.operator_ticket_cap_usd * MICRO))} applies"
        )
    elif budget.ticket_cap_usd < budget.operator_ticket_cap_usd:
        lines.append(
            f"- `budgets.usd_per_ticket` lowers the operator's cap of "
            f"{usd(round(budget.operator_ticket_cap_usd * MICRO))}"
        )
    spent_today = usd(budget.installation_spent_today_micro_usd)
    if budget.day_cap_usd is None:
        lines.append(f"- this installation today (UTC): {spent_today}, no daily cap")
    else:
        lines.append(
            f"- this installation today (UTC): {spent_today} of "
            f"{usd(round(budget.day_cap_usd * MICRO))}"
        )
    lines += [
        "",
        "A ticket's budget is lowered in `.github/ourobot.yml` (`budgets.usd_per_ticket`) on "
        "the default branch; no comment can raise it past the operator's cap.",
    ]
    return "\n".join(lines)
