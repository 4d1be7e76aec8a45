"""`actions_report`: the report of a cycle that ran on the repository's Actions runner, read,
checked, and turned into the pull request (or the blocked ticket) as the App's own worker would.

    the check run, read back from GitHub by its id (never from the webhook's copy)
    -> the record of the cycle the App dispatched under that run key, still waiting
    -> the report parsed as data (`app.jobs.actions_contract.parse_report`)
    -> checked (`refusal`): a workflow's (or the App's own) check run, this run key, this
       ticket, `ourobot/issue-N`, the run GitHub started, the head commit the branch is at
    -> the summary into the record, the branch being on GitHub already ("pushed")
    -> `conclude_run`: the pull request `Closes #N` and the ledger's cycle row, or the
       blocked label and the reason, under the ticket's lease

Idempotent: a report for a record no longer waiting is done (a redelivery, or the report of a
run that timed out); a record the report already moved on is finished from where it stopped.
A refused report changes nothing but a refusal row in the ledger and a note under the
ticket's status comment: the ticket keeps waiting for a report it can accept, or its timeout.
"""

from __future__ import annotations

import logging
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.controls.halt import check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.github_client import bot_login
from app.jobs.actions_contract import (
    CheckSeen,
    Dispatched,
    ReportError,
    branch_for,
    parse_report,
    refusal,
)
from app.jobs.actions_dispatch import WAITING
from app.jobs.context import JobContext
from app.jobs.cycle_records import CycleRecord, CycleRecords
from app.jobs.registry import job
from app.jobs.ticket_cycle import TicketRun, conclude_run
from app.jobs.ticket_lease import StaleLease
from app.jobs.ticket_status import note_busy

log = logging.getLogger(__name__)


@job("actions_report")
def actions_report(
    ctx: JobContext, *, installation_id: int | None, repo: str, check_run_id: int, run_key: str
) -> None:
    said = receive_report(ctx, installation_id, repo, check_run_id, run_key)
    log.info("actions report %s (check run %d): %s", run_key, check_run_id, said)


def receive_report(
    ctx: JobContext, installation_id: int | None, repo: str, check_run_id: int, run_key: str
) -> str:
    """Check the report and finish its ticket (or say why not); one sentence."""
    check_halt(ctx, installation_id)
    records = CycleRecords(ctx.store)
    record = records.get(run_key)
    if record is None or record.repo != repo.lower() or record.kind != "cycle":
        return _refused(ctx, installation_id, repo, None, check_run_id, run_key, "no such run")
    if record.state == "done":
        return "already concluded"
    summary = record.result or {}
    if record.state not in WAITING and summary.get("runs_on") != "actions":
        return _refused(
            ctx, installation_id, repo, record, check_run_id, run_key,
            "the run key names a cycle of ourobot's own worker",
        )  # fmt: skip
    github = ctx.github.installation(installation_id)
    if record.state in WAITING:
        why = _accept(ctx, github, repo, record, check_run_id)
        if why is not None:
            return _refused(ctx, installation_id, repo, record, check_run_id, run_key, why)
    dispatch = (record.result or {}).get("dispatch") or summary.get("dispatch") or {}
    run = TicketRun(
        installation_id,
        repo,
        record.number,
        "",
        run_key,
        str((record.result or {}).get("title") or dispatch.get("title") or ""),
        "",
    )
    try:
        return conclude_run(ctx, run, record)
    except StaleLease as exc:
        return f"stopped: {exc}"


def _accept(
    ctx: JobContext, github: GitHub[Any], repo: str, record: CycleRecord, check_run_id: int
) -> str | None:
    """Read and check the report; on acceptance its summary is in the record ("pushed")."""
    owner, name = repo.split("/", 1)
    dispatch = (record.result or {}).get("dispatch") or {}
    check = github.rest.checks.get(owner, name, check_run_id).parsed_data
    app = check.app
    seen = CheckSeen(
        name=str(check.name),
        app_slug=str(getattr(app, "slug", "") or ""),
        app_id=getattr(app, "id", None),
        external_id=str(check.external_id or ""),
        head_sha=str(check.head_sha),
        status=str(check.status),
    )
    try:
        report = parse_report(check.output.text)
    except ReportError as exc:
        return str(exc)
    branch_head = None
    if report.head_sha is not None:
        branch_head = _branch_head(github, owner, name, branch_for(record.number))
    run_id = dispatch.get("run_id")
    why = refusal(
        report,
        dispatched=Dispatched(record.number, record.key, run_id if type(run_id) is int else None),
        check=seen,
        own_app_id=ctx.settings.app_id,
        branch_head=branch_head,
    )
    if why is not None:
        return why
    record.result = {
        **report.summary,
        # The title the issue had when it was labeled, not what the run read later.
        "title": str(dispatch.get("title") or report.summary.get("title") or ""),
        "ticket_key": f"{repo}#{record.number}",
        "runs_on": "actions",
        "run_id": run_id,
        "run_url": dispatch.get("run_url"),
        "check_run_id": check_run_id,
        "dispatch": dispatch,
    }
    record.state = "pushed"  # the run pushed the branch itself, if there is one
    if not CycleRecords(ctx.store).advance(record, only_from=WAITING):
        return "the ticket stopped waiting (timed out) before this report was read"
    return None


def _branch_head(github: GitHub[Any], owner: str, name: str, branch: str) -> str | None:
    try:
        found = github.rest.git.get_ref(owner, name, f"heads/{branch}").parsed_data
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return None
        raise
    return str(found.object_.sha)


def _refused(
    ctx: JobContext,
    installation_id: int | None,
    repo: str,
    record: CycleRecord | None,
    check_run_id: int,
    run_key: str,
    why: str,
) -> str:
    number = record.number if record is not None else None
    Ledger(ctx.store).record(
        "refusal",
        Subject(f"actions-report:{check_run_id}", installation_id, repo, number),
        Outcome("ok", "unmet", "skipped", "none"),
        error_class="actions:report-refused",
        detail={"reason": why, "run_key": run_key, "check_run_id": check_run_id},
        once=True,
    )
    log.warning("actions report %s (check run %d) refused: %s", run_key, check_run_id, why)
    if record is not None and record.state in WAITING:
        check_halt(ctx, installation_id)
        note_busy(
            ctx.github.installation(installation_id),
            ctx.store,
            repo=repo,
            number=record.number,
            bot_login=bot_login(ctx.github),
            note=f"A report (check run {check_run_id}) was not accepted: {why}.",
        )
    return f"refused: {why}"
