"""`ticket`: an issue labeled `ourobot:ticket` (or `/ourobot implement`) becomes a pull request.

    permission (from GitHub's collaborator API: write or more, never a name or a `[bot]`)
    -> the ticket's lease (one writer per ticket; a second trigger gets "already in progress")
    -> the base branch into the bare mirror, the config at the base (capped by the operator)
    -> the loop's caps: cycles started this hour, ourobot's open pull requests
    -> the cycle (app/loop/cycle.py) in a worktree of the mirror, on `ourobot/issue-N`
       (or, with `implementer.runs_on: actions`, a `workflow_dispatch` of the repository's
       ourobot workflow: `app.jobs.actions_dispatch`; its report comes back through
       `app.jobs.actions_report`, which finishes here with `conclude_run`)
    -> push the branch, open the pull request (`Closes #N`), label the issue

Every side effect is preceded by the halt check and the lease's fence check (`_guard`): a halt
during a cycle stops it before its next write, and a run whose lease was taken over writes
nothing. Idempotent: the run's row (`cycle_records`, keyed by its trigger) says how far it got,
so the retry of a killed run re-runs only what had not finished, finds the pull request by its
head branch and edits the status comment by its id or marker. Light mode never pushes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from githubkit import GitHub

from app.commands import replies
from app.commands.authz import PermissionCache, permission_of
from app.commands.slash import Permission
from app.commands.status_comment import upsert_comment
from app.controls.halt import HaltRegistry, check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.controls.pricing import PriceTable
from app.controls.spend_caps import Caps
from app.errors import UserError
from app.github_client import bot_login
from app.jobs.actions_dispatch import (
    DISPATCHED,
    DISPATCHING,
    WAITING,
    DispatchRefused,
    Started,
    blocked_summary,
    dispatch_cycle,
    waiting_detail,
)
from app.jobs.context import JobContext, once
from app.jobs.cycle_records import CycleRecord, CycleRecords
from app.jobs.registry import job
from app.jobs.review_inputs import Fetched, config_at_base, credentials, worker_secrets
from app.jobs.ticket_lease import Lease, StaleLease, TicketLeases
from app.jobs.ticket_pull import (
    BLOCKED,
    IN_PROGRESS,
    STATE_LABELS,
    OpenPull,
    find_or_open_pull,
    open_pulls,
    pull_body,
    push_branch,
    set_state_label,
)
from app.jobs.ticket_status import StatusBoard, note_busy
from app.loop.caging import cycle_cage, suite_runner
from app.loop.cycle import CycleDeps, CycleRequest, CycleResult, FixRound, run_cycle
from app.loop.intake import issue_ticket
from app.loop.metering import ModelGate
from app.loop.setup_phase import prepare as prepare_setup
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.cage.entry import SandboxUnavailable
from app.workspace.mirror import RepoMirror

log = logging.getLogger(__name__)
_permissions = PermissionCache()


@dataclass(frozen=True)
class TicketRun:
    """One trigger of the loop on one issue, as plain values from the event."""

    installation_id: int | None
    repo: str
    number: int
    login: str  # who labeled or commented (permission is asked of GitHub)
    run_key: str  # names the trigger: its retry is the same run
    title: str  # the issue's text as the triggering event carried it
    body: str
    labels: tuple[str, ...] = ()
    # Already on the repository's Actions runner (the Action): `implementer.runs_on` is moot.
    on_actions_runner: bool = False


@job("ticket")
def ticket(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    login: str,
    run_key: str,
    title: str = "",
    body: str = "",
    labels: list[str] | None = None,
) -> None:
    run = TicketRun(installation_id, repo, number, login, run_key, title, body, tuple(labels or ()))
    log.info("ticket %s#%d: %s", repo, number, run_ticket(ctx, run))


def run_ticket(ctx: JobContext, run: TicketRun) -> str:
    """Work the ticket (or say why not); one sentence about what happened."""
    check_halt(ctx, run.installation_id)
    github = ctx.github.installation(run.installation_id)
    bot = bot_login(ctx.github)
    permission = permission_of(
        github,
        installation_id=run.installation_id,
        repo=run.repo,
        login=run.login,
        cache=_permissions,
    )
    if permission < Permission.WRITE:
        text = replies.ticket_refused(run.login, permission)
        with once(ctx, f"ticket-refused:{run.repo}:{run.number}:{run.run_key}") as first:
            if first:
                check_halt(ctx, run.installation_id)
                upsert_comment(
                    github,
                    repo=run.repo,
                    number=run.number,
                    key="status",
                    body=text,
                    bot_login=bot,
                )
        return text
    leases = TicketLeases(ctx.store)
    lease = leases.acquire(run.repo, run.number, run.run_key, ttl_s=ctx.settings.task_time_limit_s)
    if lease is None:
        text = replies.ticket_busy(run.login)
        check_halt(ctx, run.installation_id)
        note_busy(github, ctx.store, repo=run.repo, number=run.number, bot_login=bot, note=text)
        return text
    try:
        return _TicketCycle(ctx, github, bot, run, lease).run()
    except StaleLease as exc:
        log.warning("ticket %s#%d: %s; this run stops without writing", run.repo, run.number, exc)
        return f"stopped: {exc}"
    finally:
        leases.release(lease)


class _TicketCycle:
    def __init__(
        self, ctx: JobContext, github: GitHub[Any], bot: str, run: TicketRun, lease: Lease
    ) -> None:
        self.ctx, self.github, self.bot, self.run_ = ctx, github, bot, run
        self.lease = lease
        self.records = CycleRecords(ctx.store)
        self.branch = f"{BOT_BRANCH_PREFIX}issue-{run.number}"
        self.labels = set(run.labels)

    def guard(self) -> None:
        """Before every side effect: no halt, and the lease still ours."""
        check_halt(self.ctx, self.run_.installation_id)
        TicketLeases(self.ctx.store).check(self.lease)

    def run(self) -> str:
        run, ctx = self.run_, self.ctx
        record = self.records.get(run.run_key)
        if record is not None:
            self.labels |= set(STATE_LABELS)  # an earlier attempt may have set any of them
        board = StatusBoard(
            self.github,
            ctx.store,
            repo=run.repo,
            number=run.number,
            bot_login=self.bot,
            comment_id=record.comment_id if record else None,
        )
        self.board = board
        owner, name = run.repo.split("/", 1)
        info = self.github.rest.repos.get(owner, name).parsed_data
        self.clone_url, self.default_branch = str(info.clone_url), str(info.default_branch)
        self.token = ctx.github.git_token(run.installation_id)
        self.mirror = RepoMirror(ctx.settings.data_dir, run.repo)
        base_sha = self.mirror.fetch_branch(self.clone_url, self.default_branch, token=self.token)
        try:
            config = config_at_base(Fetched(self.mirror.path, base_sha)).capped(ctx.settings)
        except UserError as exc:
            return self.say(replies.ticket_bad_config(str(exc)))
        if config.mode == "light":
            return self.say(replies.ticket_light_mode())
        pulls = open_pulls(self.github, run.repo)
        if record is None:
            refusal = self.caps(config, pulls)
            if refusal is not None:
                return refusal
            record = self.records.start(run.run_key, run.repo, run.number, "cycle")
        return self.finish(record, config, base_sha, pulls)

    def caps(self, config: RepoConfig, pulls: list[OpenPull]) -> str | None:
        """Why a new cycle may not start now, said in the status comment; None when it may."""
        run = self.run_
        if self.records.waiting(run.repo, run.number) is not None:
            # An Actions run of this ticket has not reported yet: it holds the ticket.
            text = replies.ticket_busy(run.login)
            self.guard()
            note_busy(
                self.github, self.ctx.store, repo=run.repo, number=run.number,
                bot_login=self.bot, note=text,
            )  # fmt: skip
            return text
        mine = [p for p in pulls if p.same_repo and p.head_ref.startswith(BOT_BRANCH_PREFIX)]
        existing = next((p for p in mine if p.head_ref == self.branch), None)
        if existing is not None:
            return self.say(replies.ticket_has_pull(existing.number))
        started = self.records.started_within_hour(run.repo)
        if started >= config.loop.cycles_per_hour:
            self.refusal("cycles-per-hour", started)
            return self.say(replies.ticket_cap_cycles(started, config.loop.cycles_per_hour))
        if len(mine) >= config.loop.max_open_prs:
            self.refusal("open-prs", len(mine))
            return self.say(replies.ticket_cap_pulls(len(mine), config.loop.max_open_prs))
        return None

    def refusal(self, cap: str, count: int) -> None:
        run = self.run_
        Ledger(self.ctx.store).record(
            "refusal",
            Subject(
                f"loop-cap:{run.run_key}",
                run.installation_id,
                run.repo,
                run.number,
                f"{run.repo}#{run.number}",
            ),
            Outcome("ok", "unmet", "skipped", "none"),
            error_class=f"loop-cap:{cap}",
            detail={"cap": cap, "count": count},
            once=True,
        )

    def say(self, text: str) -> str:
        self.guard()
        self.board.post(text)
        return text

    def finish(
        self, record: CycleRecord, config: RepoConfig, base_sha: str, pulls: list[OpenPull]
    ) -> str:
        run = self.run_
        dispatches = config.implementer.runs_on == "actions" and not run.on_actions_runner
        if record.state in WAITING or (record.state == "started" and dispatches):
            return self.dispatch(record, config, base_sha)
        if record.state == "started":
            self.guard()
            record.comment_id = self.board.post(replies.ticket_working(self.branch))
            self.records.save(record)
            self.guard()
            set_state_label(self.github, run.repo, run.number, IN_PROGRESS, self.labels)
            self.labels = (self.labels - set(STATE_LABELS)) | {IN_PROGRESS}
            ticket = issue_ticket(
                run.repo, run.number, title=run.title, body=run.body, labels=run.labels
            )
            result, spent = cycle_on_mirror(
                self.ctx,
                run.installation_id,
                self.mirror,
                base_sha,
                ticket,
                config,
                token=self.token,
            )
            record.result = summarize(result, ticket, spent)
            record.state = "cycled"
            self.records.save(record)
        return self.conclude(record, pulls)

    def conclude(self, record: CycleRecord, pulls: list[OpenPull] | None) -> str:
        """From a cycle's summary on: push, the pull request, or the blocked ticket."""
        run = self.run_
        summary = record.result or {}
        if summary.get("outcome") != "ready":
            return self.blocked(record, summary)
        if record.state == "cycled":
            self.guard()
            push_branch(
                self.mirror.path,
                self.clone_url,
                summary["head_sha"],
                self.branch,
                token=self.token,
                force=True,
            )
            record.state = "pushed"
            self.records.save(record)
        if record.state == "pushed":
            self.guard()
            record.pr_number = find_or_open_pull(
                self.github,
                run.repo,
                branch=self.branch,
                base=self.default_branch,
                title=summary.get("title") or f"Issue #{run.number}",
                body=pull_body(run.number, summary),
                known=pulls,
            )
            record.state = "done"
            self.records.save(record)
            self.ledger({**summary, "pr": record.pr_number}, "pr")
        self.guard()
        self.board.post(replies.ticket_pull_opened(record.pr_number or 0, self.branch, summary))
        return f"opened pull request #{record.pr_number}"

    def dispatch(self, record: CycleRecord, config: RepoConfig, base_sha: str) -> str:
        """`implementer.runs_on: actions`: start the repository's workflow for this ticket and
        wait for its report; a redelivery or retry of this trigger starts nothing new."""
        run = self.run_
        workflow = config.implementer.workflow
        if record.state == "started":
            self.guard()
            record.comment_id = self.board.post(replies.ticket_dispatching(workflow, self.branch))
            self.records.save(record)
            self.guard()
            set_state_label(self.github, run.repo, run.number, IN_PROGRESS, self.labels)
            self.labels = (self.labels - set(STATE_LABELS)) | {IN_PROGRESS}
            self.guard()
            # Written just before GitHub is asked: a run killed during the call finds the
            # ticket waiting (the run may have started) with all the sweep needs to time it out.
            record.result = waiting_detail(
                repo=run.repo,
                installation_id=run.installation_id,
                workflow=workflow,
                started=Started(None, None),
                timeout_s=config.implementer.actions_timeout_s,
                title=run.title,
                base_sha=base_sha,
            )
            record.state = DISPATCHING
            self.records.save(record)
            try:
                started = dispatch_cycle(
                    self.github,
                    repo=run.repo,
                    workflow=workflow,
                    ref=self.default_branch,
                    number=run.number,
                    run_key=run.run_key,
                )
            except DispatchRefused as exc:
                record.result = blocked_summary(
                    str(exc),
                    title=run.title,
                    ticket_key=f"{run.repo}#{run.number}",
                    base_sha=base_sha,
                    error_class="actions:dispatch",
                )
                record.state = "cycled"
                self.records.save(record)
                return self.conclude(record, None)
            except BaseException:
                record.state, record.result = "started", None  # not started: the retry asks
                self.records.save(record)
                raise
            record.result["dispatch"].update(run_id=started.run_id, run_url=started.html_url)
            record.state = DISPATCHED
            self.records.save(record)
        elif record.state == DISPATCHING:  # killed while GitHub was asked: it may have started
            record.state = DISPATCHED
            self.records.save(record)
        detail = (record.result or {}).get("dispatch") or {}
        self.guard()
        self.board.post(replies.ticket_dispatched(workflow, self.branch, detail.get("run_url")))
        return f"dispatched {workflow} (run {detail.get('run_id') or 'unknown'})"

    def resume(self, record: CycleRecord) -> str:
        """Finish a ticket whose cycle ran elsewhere: its summary is in `record` already."""
        owner, name = self.run_.repo.split("/", 1)
        info = self.github.rest.repos.get(owner, name).parsed_data
        self.clone_url, self.default_branch = str(info.clone_url), str(info.default_branch)
        issue = self.github.rest.issues.get(owner, name, self.run_.number).parsed_data
        self.labels = {str(getattr(label, "name", label)) for label in issue.labels or []}
        self.board = StatusBoard(
            self.github,
            self.ctx.store,
            repo=self.run_.repo,
            number=self.run_.number,
            bot_login=self.bot,
            comment_id=record.comment_id,
        )
        return self.conclude(record, None)

    def blocked(self, record: CycleRecord, summary: dict[str, Any]) -> str:
        run = self.run_
        kept = None
        if summary.get("head_sha") and record.state == "cycled":
            self.guard()  # the branch is kept where a person can look at it
            push_branch(
                self.mirror.path,
                self.clone_url,
                summary["head_sha"],
                self.branch,
                token=self.token,
                force=True,
            )
            kept = self.branch
        elif summary.get("head_sha"):
            kept = self.branch
        outcome = str(summary.get("outcome"))
        label = None if outcome == "satisfied" else BLOCKED
        self.guard()
        set_state_label(self.github, run.repo, run.number, label, self.labels)
        record.state = "done"
        self.records.save(record)
        self.ledger(summary, "none")
        return self.say(replies.ticket_blocked(outcome, str(summary.get("reason")), kept))

    def ledger(self, summary: dict[str, Any], artifact: str) -> None:
        run = self.run_
        Ledger(self.ctx.store).record(
            "cycle",
            Subject(
                f"cycle:{run.run_key}",
                run.installation_id,
                run.repo,
                run.number,
                f"{run.repo}#{run.number}",
                summary.get("head_sha"),
            ),
            Outcome(summary["execution"], summary["objective"], "skipped", artifact),  # type: ignore[arg-type]
            error_class=summary.get("error_class"),
            detail={k: v for k, v in summary.items() if k not in ("plan",)},
            once=True,
        )


def conclude_run(ctx: JobContext, run: TicketRun, record: CycleRecord) -> str:
    """Finish the ticket from `record`'s summary (the pull request, or blocked), as the run
    that holds the ticket's lease; `record.state` is where to pick up ("pushed": the branch
    is on GitHub already). For the report of an Actions run and its timeout."""
    github = ctx.github.installation(run.installation_id)
    leases = TicketLeases(ctx.store)
    lease = leases.acquire(run.repo, run.number, run.run_key, ttl_s=ctx.settings.task_time_limit_s)
    if lease is None:
        raise StaleLease(f"the lease on {run.repo}#{run.number} is held by another run")
    try:
        return _TicketCycle(ctx, github, bot_login(ctx.github), run, lease).resume(record)
    finally:
        leases.release(lease)


def cycle_on_mirror(
    ctx: JobContext,
    installation_id: int | None,
    mirror: RepoMirror,
    base_sha: str,
    ticket: Ticket,
    config: RepoConfig,
    *,
    token: str,
    fix: FixRound | None = None,
) -> tuple[CycleResult, tuple[int, int]]:
    """The implementer's cycle in a worktree of the bare mirror, its model calls through the
    spend caps, its test runs stopped by a halt. No review inside: on GitHub the panel runs
    as the `ourobot/review` check on the pull request's head."""
    from reviewers.providers import build_fallback  # the model SDKs: only when a cycle runs

    halts = HaltRegistry(ctx.store, ctx.redis)
    kind = "fix" if fix is not None else "cycle"
    subject = Subject(
        f"{kind}:{ticket.key}:{base_sha[:12]}",
        installation_id,
        ticket.key.split("#")[0],
        None,
        ticket.key,
    )
    gate = ModelGate(
        Ledger(ctx.store),
        PriceTable.from_settings(ctx.settings),
        Caps.for_repo(config, ctx.settings),
        subject,
        halt_check=lambda: halts.check(installation_id),
    )
    keys = credentials(ctx.settings)
    try:
        runner = suite_runner(config, cycle_cage(config, ctx.settings, server=True))
    except SandboxUnavailable as exc:
        blocked = CycleResult("blocked", str(exc), "infra", None, None, base_sha)
        blocked.error_class = "sandbox"
        return blocked, (0, 0)
    deps = CycleDeps(
        implementer=build_fallback(config.models.implementer, keys, cache_prompt=True),
        planner=build_fallback(config.models.planner, keys),
        gate=gate,
        runner=runner,
        secrets=worker_secrets(ctx.settings, token=token),
        progress=lambda line: log.info("%s: %s", ticket.key, line),
        cancel=lambda: halts.active(installation_id) is not None,
        setup=lambda ws: prepare_setup(
            ws,
            config,
            runner.cage,
            ctx.settings,
            mirror.full_name,
            cancel=lambda: halts.active(installation_id) is not None,
        ),
    )
    worktrees = ctx.settings.data_dir / "worktrees"
    worktrees.mkdir(parents=True, exist_ok=True)
    request = CycleRequest(
        mirror.path,
        base_sha,
        ticket,
        config,
        worktree_root=worktrees,
        resume=fix is not None,
        fix=fix,
    )
    result = run_cycle(request, deps)
    calls = Ledger(ctx.store).calls(subject=subject.key)
    return result, (len(calls), sum(row.call.cost_micro_usd for row in calls))


def summarize(result: CycleResult, ticket: Ticket, spent: tuple[int, int]) -> dict[str, Any]:
    """What a retry and the pull request need of a cycle's result, as JSON values."""
    outcome = result.ledger_outcome()
    return {
        "outcome": result.outcome,
        "reason": result.reason,
        "head_sha": result.head_sha,
        "base_sha": result.base_sha,
        "title": ticket.title,
        "ticket_key": ticket.key,
        "plan": result.plan,
        "tests": result.tests,
        "baseline": result.baseline,
        "iterations": [
            {
                "number": r.number,
                "phase": r.phase,
                "edits": r.edits,
                "refusals": [f"{x.rule} {x.path or '-'}" for x in r.refusals],
                "tests": r.test_summary or r.tests,
                "commands": [c.as_json() for c in r.commands],
                "test_changes": [{"test": d.test, "why": d.why} for d in r.disclosed],
            }
            for r in result.iterations
        ],
        "steps": result.steps,
        "execution": outcome.execution,
        "objective": outcome.objective,
        "error_class": result.error_class,
        "notes": result.notes,
        "measured": result.measured,
        "model_calls": spent[0],
        "cost_micro_usd": spent[1],
    }
