"""`actions_overdue`: tickets whose Actions run will not report, blocked with the reason.

The workers' beat (and the embedded runner's timer) run it every `OUROBOT_SWEEP_INTERVAL_S`,
beside the inbox sweeper. For each cycle waiting for a run's report (`CycleRecords.all_waiting`):

- past `implementer.actions_timeout_s` after the dispatch (the value in force then): blocked,
  "did not report within ..." (the run never started, is still queued, or hangs);
- sooner, when GitHub says the run it started has completed and no report was accepted for a
  grace of `OUROBOT_REDELIVERY_INTERVAL_S` + `OUROBOT_SWEEP_AFTER_S` (time enough for a lost
  report webhook to be redelivered and handled): blocked, "the run ended (failure) without a
  report", so a workflow whose setup step failed does not keep the ticket for hours.

Blocking is `conclude_run`'s, as for a worker's blocked cycle: the `ourobot:blocked` label, the
reason in the status comment with a link to the run, the cycle's ledger row (execution
`timeout` or `error`, error class `actions:no-report` or `actions:run-ended`). The record moves
on only if it is still waiting (compare and set), so a report that lands at the same moment
either wins or is refused as late, never both. A halted installation is skipped.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from githubkit.exception import RequestFailed

from app.controls.halt import Halted, check_halt
from app.jobs.actions_dispatch import WAITING, blocked_summary
from app.jobs.context import JobContext
from app.jobs.cycle_records import CycleRecord, CycleRecords
from app.jobs.registry import job
from app.jobs.ticket_cycle import TicketRun, conclude_run
from app.jobs.ticket_lease import StaleLease

log = logging.getLogger(__name__)

ACTIONS_SWEEP_JOB = "actions_overdue"
DEFAULT_TIMEOUT_S = 7200  # a record from before the timeout was kept (the config's default)


@job(ACTIONS_SWEEP_JOB)
def actions_overdue(ctx: JobContext) -> None:
    for line in sweep_waiting(ctx):
        log.info("actions sweep: %s", line)


def sweep_waiting(ctx: JobContext, *, now: datetime | None = None) -> list[str]:
    """Block every waiting ticket whose run will not report; what was done, one line each."""
    moment = now or datetime.now(UTC)
    done = []
    for record in CycleRecords(ctx.store).all_waiting():
        dispatch = (record.result or {}).get("dispatch") or {}
        installation_id = dispatch.get("installation_id")
        try:
            check_halt(ctx, installation_id)
            overdue = _overdue(ctx, record, dispatch, moment)
            if overdue is not None:
                done.append(_block(ctx, record, dispatch, *overdue))
        except Halted:
            continue
        except (RequestFailed, StaleLease) as exc:  # one ticket failing stops no other
            log.warning("actions sweep: %s#%d skipped: %s", record.repo, record.number, exc)
        except Exception:
            log.exception("actions sweep: %s#%d failed", record.repo, record.number)
    return done


def _overdue(
    ctx: JobContext, record: CycleRecord, dispatch: dict[str, Any], now: datetime
) -> tuple[str, str, str] | None:
    """(reason, execution, error class) when the ticket must stop waiting, else None."""
    since = _time(dispatch.get("at")) or record.started_at or now
    timeout = dispatch.get("timeout_s")
    timeout_s = timeout if type(timeout) is int else DEFAULT_TIMEOUT_S
    run = _run_words(dispatch)
    if now - since >= timedelta(seconds=timeout_s):
        return (
            f"{run} did not report within {_duration(timeout_s)} of its dispatch "
            f"(`implementer.actions_timeout_s`); look at the repository's Actions tab",
            "timeout",
            "actions:no-report",
        )
    run_id = dispatch.get("run_id")
    if type(run_id) is not int or dispatch.get("repo") is None:
        return None
    owner, name = str(dispatch["repo"]).split("/", 1)
    github = ctx.github.installation(dispatch.get("installation_id"))
    found = github.rest.actions.get_workflow_run(owner, name, run_id).parsed_data
    ended = _time(found.updated_at)
    grace = timedelta(seconds=ctx.settings.redelivery_interval_s + ctx.settings.sweep_after_s)
    if found.status != "completed" or ended is None or now - ended < grace:
        return None
    return (
        f"{run} ended ({found.conclusion or 'no conclusion'}) without a report ourobot could "
        "accept; its log says why",
        "error",
        "actions:run-ended",
    )


def _block(
    ctx: JobContext, record: CycleRecord, dispatch: dict[str, Any], reason: str, *why: str
) -> str:
    execution, error_class = why
    repo = str(dispatch.get("repo") or record.repo)
    title = str(dispatch.get("title") or "")
    record.result = blocked_summary(
        reason,
        title=title,
        ticket_key=f"{repo}#{record.number}",
        base_sha=dispatch.get("base_sha"),
        execution=execution,
        error_class=error_class,
        detail={"run_id": dispatch.get("run_id"), "run_url": dispatch.get("run_url"),
                "dispatch": dispatch},
    )  # fmt: skip
    record.state = "pushed"  # nothing of the run's is pushed by ourobot: it concludes as is
    if not CycleRecords(ctx.store).advance(record, only_from=WAITING):
        return f"{repo}#{record.number}: its report came first"
    run = TicketRun(dispatch.get("installation_id"), repo, record.number, "", record.key, title, "")
    return f"{repo}#{record.number}: {conclude_run(ctx, run, record)}"


def _run_words(dispatch: dict[str, Any]) -> str:
    url = dispatch.get("run_url")
    workflow = dispatch.get("workflow") or "the workflow"
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return f"[the run of `{workflow}`]({url})"
    return f"the run of `{workflow}`"


def _time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    if seconds % 60 == 0:
        return f"{seconds // 60} minute(s)"
    return f"{seconds} s"
