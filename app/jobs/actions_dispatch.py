"""The App's side of `implementer.runs_on: actions`: starting the repository's ourobot workflow
for a ticket, and what the cycle's record keeps of it.

The `ticket` job (`app.jobs.ticket_cycle`) calls `dispatch_cycle` where it would run the cycle
itself: a `workflow_dispatch` of `implementer.workflow` on the default branch with the inputs
of `app.jobs.actions_contract` (the issue's number and the run key, never its text). GitHub's
answer names the run, which the record keeps with the time, the timeout and the installation,
so the report (`app.jobs.actions_report`) and the timeout (`app.jobs.actions_overdue`) can
finish the ticket as the App's own worker would have.

A refusal GitHub gives for a reason a person must fix (no such workflow, no `workflow_dispatch`
trigger or other inputs, the App without the `actions` permission) is `DispatchRefused`, one
line, and blocks the ticket. A server error or a lost connection is raised as it is: the job is
retried, and the record is not left saying the run started.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.jobs.actions_contract import dispatch_inputs
from app.jobs.cycle_records import WAITING_STATES

# The record's states while the App waits: `dispatching` is written before GitHub is asked
# (a run killed mid-call finds it, and waits rather than start a second run), `dispatched` once
# GitHub named the run.
DISPATCHING, DISPATCHED = WAITING_STATES
WAITING = WAITING_STATES


class DispatchRefused(Exception):
    """GitHub will not start the workflow, for a reason a person must fix; one line."""


@dataclass(frozen=True)
class Started:
    run_id: int | None
    html_url: str | None


def dispatch_cycle(
    github: GitHub[Any], *, repo: str, workflow: str, ref: str, number: int, run_key: str
) -> Started:
    """Ask GitHub to run `workflow` on `ref` for ticket `number`; the run it started."""
    owner, name = repo.split("/", 1)
    try:
        answer = github.rest.actions.create_workflow_dispatch(
            owner, name, workflow, ref=ref, inputs=dispatch_inputs(number, run_key)
        )
    except RequestFailed as exc:
        raise _refusal(exc, workflow, ref) from None
    if answer.status_code == 204:  # an older API version: GitHub does not say which run
        return Started(None, None)
    data = answer.parsed_data
    return Started(int(data.workflow_run_id), str(data.html_url))


def _refusal(exc: RequestFailed, workflow: str, ref: str) -> Exception:
    status = exc.response.status_code
    path = f".github/workflows/{workflow}"
    if status == 404:
        return DispatchRefused(
            f"GitHub found no workflow `{path}` on `{ref}` to run (`implementer.workflow`): "
            "add it (docs/examples/cycle-workflow.yml) or name the one you have"
        )
    if status == 403 and "actions" in exc.response.headers.get("x-accepted-github-permissions", ""):
        return DispatchRefused(
            "the ourobot App may not start workflows in this repository: it needs the "
            "`actions: write` permission (`ourobot app manifest --actions`, or add it in the "
            "App's settings and accept it on the installation), or set `implementer.runs_on: "
            "worker`"
        )
    if status in (403, 422):
        message = _message(exc)
        return DispatchRefused(f"GitHub refused to start `{path}`: {message}")
    return exc


def _message(exc: RequestFailed) -> str:
    try:
        body = exc.response.json()
    except ValueError:
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message or exc.response.status_code).split())[:300]


def waiting_detail(
    *,
    repo: str,
    installation_id: int | None,
    workflow: str,
    started: Started,
    timeout_s: int,
    title: str,
    base_sha: str,
    now: datetime | None = None,
) -> dict[str, Any]:
    """What the record keeps while it waits for the run's report (plain JSON values)."""
    return {
        "dispatch": {
            "repo": repo,
            "installation_id": installation_id,
            "workflow": workflow,
            "run_id": started.run_id,
            "run_url": started.html_url,
            "at": (now or datetime.now(UTC)).isoformat(),
            "timeout_s": timeout_s,
            "title": title,
            "base_sha": base_sha,
        }
    }


def blocked_summary(
    reason: str,
    *,
    title: str,
    ticket_key: str,
    base_sha: str | None,
    execution: str = "infra",
    error_class: str = "actions",
    detail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A cycle's summary for a ticket the Actions run never finished (no commit, no tests)."""
    return {
        "outcome": "blocked",
        "reason": reason,
        "head_sha": None,
        "base_sha": base_sha,
        "title": title,
        "ticket_key": ticket_key,
        "plan": None,
        "tests": None,
        "baseline": None,
        "iterations": [],
        "execution": execution,
        "objective": "unknown",
        "error_class": error_class,
        "notes": [],
        "measured": [],
        "model_calls": 0,
        "cost_micro_usd": 0,
        "runs_on": "actions",
        **(detail or {}),
    }
