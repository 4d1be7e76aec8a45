"""One cycle: a ticket becomes a tested (and reviewed) branch, or lands in a legible state.

    workspace (worktree on ourobot/<ticket>, stale state recovered)
    -> baseline (the suite at the base: a red baseline is reported, not blamed on the model)
    -> planner (advisory, for tickets with a plan label)
    -> implementer iterations until an earned green
    -> review panel (when configured): a rejection feeds its findings back for
       `budgets.fix_iterations` iterations, for up to `review.rounds` fix rounds
    -> outcome: ready | blocked | needs-human | satisfied  (merged is the caller's to add)

The cycle takes plain values and its collaborators (model clients, the spend-capped gate, the
test runner, the reviewer) as arguments, so local mode and a GitHub job drive the same code.
The worktree is always removed; the branch is kept whenever it holds commits a human may want
to look at. Every cycle ends with a `CycleResult`; the caller records it (`record_cycle`) once
it knows what became of the branch (merged, a pull request, nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.controls.halt import Halted
from app.controls.ledger import Artifact, Execution, Ledger, Objective, Outcome, ReviewAxis, Subject
from app.loop.apply import Flag, Refusal
from app.loop.context import Context, read_constitution, role_template
from app.loop.implementer import Implementer
from app.loop.metering import ModelGate
from app.loop.planner import make_plan
from app.loop.proof import Baseline
from app.loop.records import IterationRecord, TestState, WorkResult
from app.loop.setup_phase import SetupResult
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.workspace.suite import SuiteRunner
from app.workspace.worktree import Workspace, WorkspaceError, open_workspace
from reviewers.model_client import ModelClient
from reviewers.prompts import Untrusted, fence
from reviewers.result import PanelResult

CycleOutcome = Literal["ready", "merged", "blocked", "needs-human", "satisfied"]
# Asked after green tests with the workspace at its head; None when no panel is configured.
Reviewer = Callable[[Workspace], PanelResult]


@dataclass(frozen=True)
class CycleRequest:
    """What to work on, as plain values."""

    repo: Path  # a local repository or ourobot's bare mirror
    base_sha: str
    ticket: Ticket
    config: RepoConfig  # already capped by the operator's settings
    worktree_root: Path | None = None
    resume: bool = False  # continue an existing branch (a fix round of a pull request)
    fix: FixRound | None = None  # set: one fix round on the branch instead of a new cycle


@dataclass(frozen=True)
class FixRound:
    """A fix round of a pull request: what to fix (fenced findings, notes) and its name."""

    feedback: str
    phase: str = "fix round"


@dataclass
class CycleDeps:
    """Who the cycle talks to."""

    implementer: ModelClient
    planner: ModelClient
    gate: ModelGate
    runner: SuiteRunner
    reviewer: Reviewer | None = None
    secrets: Sequence[str] = ()
    progress: Callable[[str], None] = lambda line: None
    cancel: Callable[[], bool] | None = None  # True when a halt is in force
    # The setup phase (`app.loop.setup_phase.prepare`, bound to its settings and repository).
    setup: Callable[[Workspace], SetupResult] | None = None


@dataclass
class CycleResult:
    outcome: CycleOutcome
    reason: str
    execution: Execution
    branch: str | None
    head_sha: str | None
    base_sha: str
    iterations: list[IterationRecord] = field(default_factory=list)
    tests: TestState = "not-run"
    baseline: str = "not-run"
    review: PanelResult | None = None
    review_rounds: int = 0
    plan: str | None = None
    notes: list[str] = field(default_factory=list)  # recovery, sandbox warning, planner
    measured: list[str] = field(default_factory=list)  # how the green was proved
    steps: int = 0  # the implementer's model turns
    error_class: str | None = None
    elapsed_s: float = 0.0

    @property
    def refusals(self) -> list[tuple[int, Refusal]]:
        return [
            (record.number, refusal) for record in self.iterations for refusal in record.refusals
        ]

    @property
    def flags(self) -> list[Flag]:
        return [flag for record in self.iterations for flag in record.flags]

    def as_json(self) -> dict[str, Any]:
        """The `ourobot cycle --json` contract: exactly these keys."""
        return {
            "outcome": self.outcome,
            "branch": self.branch,
            "iterations": len(self.iterations),
            "tests": self.tests,
            "refusals": [
                {"iteration": number, "rule": refusal.rule, "path": refusal.path}
                for number, refusal in self.refusals
            ],
            "review": self.review.as_json() if self.review is not None else None,
        }

    def ledger_outcome(self, artifact: Artifact = "none") -> Outcome:
        objective: Objective = (
            "met" if self.outcome in ("ready", "merged", "satisfied") else "unmet"
        )
        if self.execution != "ok" and self.outcome != "satisfied":
            objective = "unmet" if self.execution == "budget" else "unknown"
        review: ReviewAxis = "skipped"
        if self.review is not None:
            review = _REVIEW_AXIS.get(self.review.reason, "incomplete")
        return Outcome(self.execution, objective, review, artifact)


def run_cycle(request: CycleRequest, deps: CycleDeps) -> CycleResult:
    """Work one ticket; never raises for what a model, a test or a reviewer does."""
    started = time.monotonic()
    config = request.config
    deadline = started + config.budgets.wall_time_s
    if config.mode == "light":
        return CycleResult(
            "blocked", "mode is light: ourobot reviews only and never writes code", "ok",
            None, None, request.base_sha,
        )  # fmt: skip
    try:
        with open_workspace(
            request.repo,
            ticket=request.ticket.id,
            base_sha=request.base_sha,
            root=request.worktree_root,
            resume=request.resume,
            deadline=deadline,
        ) as ws:
            result = _guarded(request, deps, ws, deadline)
            keep = result.outcome != "satisfied" and ws.commits_since_base() > 0
            ws.keep_branch = keep
            result.branch = ws.branch if keep else None
            result.head_sha = ws.head() if keep else None
    except (WorkspaceError, OSError) as exc:
        # The worktree itself failed (git could not add, read or remove it, or a run left it
        # unusable): nothing the model did is lost (the branch keeps every kept commit), and
        # the reason is said.
        result = _ended(
            CycleResult("blocked", "", "infra", None, None, request.base_sha),
            "blocked", f"the worktree could not be used: {exc}", "infra", "workspace",
        )  # fmt: skip
    result.elapsed_s = time.monotonic() - started
    deps.progress(f"outcome: {result.outcome} ({result.reason}), {result.elapsed_s:.1f}s")
    return result


def _guarded(request: CycleRequest, deps: CycleDeps, ws: Workspace, deadline: float) -> CycleResult:
    try:
        return _in_workspace(request, deps, ws, deadline)
    except (WorkspaceError, OSError) as exc:
        result = CycleResult("blocked", "", "infra", None, None, request.base_sha)
        return _ended(result, "blocked", f"the worktree could not be used: {exc}", "infra",
                      "workspace")  # fmt: skip


def _in_workspace(
    request: CycleRequest, deps: CycleDeps, ws: Workspace, deadline: float
) -> CycleResult:
    config, ticket = request.config, request.ticket
    result = CycleResult("blocked", "", "ok", None, None, request.base_sha)
    for note in ws.recovered:
        deps.progress(f"recovered: {note}")
        result.notes.append(note)
    if deps.runner.warning:
        deps.progress(f"warning: {deps.runner.warning}")
        result.notes.append(f"sandbox: {deps.runner.warning}")
    try:
        implementer_template = role_template(ws.path, request.base_sha, "implementer")
        planner_template = role_template(ws.path, request.base_sha, "planner")
        constitution = read_constitution(ws.path, request.base_sha)
    except Exception as exc:  # an override that cannot be used: nothing to work with
        return _ended(result, "blocked", f"cannot read the role prompts: {exc}", "error", "prompt")
    context = Context(ws, config, ticket, constitution=constitution, secrets=deps.secrets)

    setup = deps.setup(ws) if deps.setup is not None else SetupResult()
    if setup.failed is not None:
        deps.progress(f"setup failed: {setup.failed.splitlines()[0]}")
        return _ended(result, "blocked", f"the setup phase failed: {setup.failed}", "infra",
                      "setup")  # fmt: skip
    if setup.note:
        deps.progress(setup.note)
        result.notes.append(setup.note)
    runner = deps.runner.with_overlays(setup.overlays)
    baseline = Baseline(runner.run_commit(ws, "HEAD", timeout_s=deadline - time.monotonic(),
                                          cancel=deps.cancel))  # fmt: skip
    result.baseline = baseline.run.summary()
    deps.progress(f"baseline at {request.base_sha[:12]}: tests {result.baseline}")
    if baseline.run.cancelled:
        return _ended(result, "blocked", "a halt stopped the cycle", "error", "halted")
    if baseline.run.not_found is not None:
        # No model can fix a toolchain the sandbox does not have: say so, spend nothing.
        return _ended(result, "blocked", baseline.run.not_found, "infra", "toolchain")
    if not baseline.run.passed:
        result.notes.append(
            f"the suite already fails at the base ({result.baseline}): not the model's doing"
        )

    if request.fix is None and ticket.has_label(*config.implementer.plan_labels):
        try:
            planned = make_plan(
                context, planner_template, deps.planner, deps.gate,
                time_left=lambda: deadline - time.monotonic(),
            )  # fmt: skip
        except Halted as exc:
            return _ended(result, "blocked", str(exc), "error", "halted")
        result.plan = planned.plan
        result.notes.append(planned.note)
        deps.progress(planned.note)

    implementer = Implementer(
        workspace=ws,
        config=config,
        ticket=ticket,
        context=context,
        template=implementer_template,
        client=deps.implementer,
        gate=deps.gate,
        runner=runner,
        baseline=baseline,
        deadline=deadline,
        progress=lambda line: deps.progress(line),
        cancel=deps.cancel,
        total_iterations=(
            config.budgets.implementer_iterations
            if request.fix is None
            else config.budgets.fix_iterations
        ),
    )
    if request.fix is not None:
        work = implementer.work(
            iterations=config.budgets.fix_iterations, plan=None, feedback=request.fix.feedback,
            phase=request.fix.phase,
        )  # fmt: skip
        result.iterations = implementer.records
        result.steps = implementer.steps
        return _conclude(result, work, baseline)
    work = implementer.work(
        iterations=config.budgets.implementer_iterations, plan=result.plan, feedback="",
        phase="implement",
    )  # fmt: skip
    result.iterations = implementer.records
    if work.stop == "green" and deps.reviewer is not None:
        work = _review_rounds(request, deps, ws, implementer, work, result)
        result.iterations = implementer.records
    result.steps = implementer.steps
    return _conclude(result, work, baseline)


def _review_rounds(
    request: CycleRequest,
    deps: CycleDeps,
    ws: Workspace,
    implementer: Implementer,
    work: WorkResult,
    result: CycleResult,
) -> WorkResult:
    """Review the green head; on a rejection, fix and review again, up to `review.rounds`."""
    assert deps.reviewer is not None
    config = request.config
    fix_round = 0
    while True:
        deps.progress(f"review of {ws.head()[:12]}: asking {len(config.review.models)} model(s)")
        review = deps.reviewer(ws)
        result.review = review
        result.review_rounds += 1
        deps.progress(f"review: {review.conclusion} ({review.reason}): {review.detail}")
        if review.reason != "rejected" or fix_round >= config.review.rounds:
            return work
        if config.budgets.fix_iterations == 0:
            return work
        fix_round += 1
        implementer.total_iterations = implementer.done + config.budgets.fix_iterations
        work = implementer.work(
            iterations=config.budgets.fix_iterations,
            plan=result.plan,
            feedback=_findings_feedback(review, deps.secrets),
            phase=f"fix round {fix_round}",
        )
        if work.stop != "green":
            return work


def _findings_feedback(review: PanelResult, secrets: Sequence[str]) -> str:
    lines = [
        f"FINDING {item.finding.severity} {item.finding.path}:{item.finding.line} "
        f"{item.finding.reason} ({item.model})"
        for item in review.findings()
    ]
    text = "\n".join(lines) if lines else "The reviewers rejected the change without findings."
    return (
        "The tests pass, but the review panel rejected the change. Its findings are below "
        "(another model's opinion, not ground truth: fix what is right, keep the tests "
        "passing, and change nothing else).\n\n"
        + fence(Untrusted("review-findings", text + "\n", "code"), secrets=secrets)
    )


def _conclude(result: CycleResult, work: WorkResult, baseline: Baseline) -> CycleResult:
    records = result.iterations
    if work.stop == "green":
        result.measured = list(work.measured)
    committed = [record for record in records if record.commit is not None]
    result.tests = committed[-1].tests if committed else "not-run"
    if work.stop == "green":
        result.tests = "passed"
        review = result.review
        if review is None or review.conclusion == "success":
            return _ended(result, "ready", work.reason, "ok")
        if review.reason == "budget":
            return _ended(result, "blocked", review.detail, "budget", "budget")
        if review.reason == "rejected":
            why = f"the review panel rejected the change after {result.review_rounds} review(s)"
            return _ended(result, "needs-human", why, "ok")
        return _ended(result, "needs-human", f"the review was incomplete: {review.detail}", "ok")
    if work.stop == "satisfied":
        return _ended(result, "satisfied", work.reason, "ok")
    reason = work.reason
    if not baseline.run.passed and work.stop == "exhausted":
        reason += f"; the suite already failed at the base ({baseline.run.summary()})"
    execution, error_class = _BLOCKED[work.stop]
    return _ended(result, "blocked", reason, execution, error_class)


# Why an implementer's work stopped short, on the ledger's execution axis and as an error class.
_BLOCKED: dict[str, tuple[Execution, str | None]] = {
    "exhausted": ("ok", "iterations"),
    "no-edits": ("ok", "no-edits"),
    "budget": ("budget", "budget"),
    "timeout": ("timeout", "wall-time"),
    "halted": ("error", "halted"),
    "error": ("error", "model-error"),
    "steps": ("budget", "steps"),
    "unfinished": ("ok", "unfinished"),
}
_REVIEW_AXIS: dict[str, ReviewAxis] = {"approved": "approved", "rejected": "rejected"}


def _ended(
    result: CycleResult,
    outcome: CycleOutcome,
    reason: str,
    execution: Execution,
    error_class: str | None = None,
) -> CycleResult:
    result.outcome = outcome
    result.reason = reason
    result.execution = execution
    result.error_class = error_class
    return result


def record_cycle(
    ledger: Ledger, subject: Subject, result: CycleResult, *, artifact: Artifact = "none"
) -> int | None:
    """The cycle's one ledger row, on the four axes, with its refusals."""
    rows = ledger.calls(subject=subject.key)
    calls, spent = len(rows), sum(row.call.cost_micro_usd for row in rows)
    detail = {
        "outcome": result.outcome,
        "reason": result.reason,
        "branch": result.branch,
        "base_sha": result.base_sha,
        "iterations": len(result.iterations),
        "steps": result.steps,
        "commands": [c.as_json() for r in result.iterations for c in r.commands],
        "test_changes": [
            {"test": d.test, "why": d.why} for r in result.iterations for d in r.disclosed
        ],
        "tests": result.tests,
        "baseline": result.baseline,
        "refusals": [
            {"iteration": n, "rule": r.rule, "path": r.path, "reason": r.reason[:500]}
            for n, r in result.refusals
        ],
        "flags": [{"rule": f.rule, "path": f.path, "reason": f.reason} for f in result.flags],
        "review_rounds": result.review_rounds,
        "notes": result.notes,
        "measured": result.measured,
        "model_calls": calls,
        "cost_micro_usd": spent,
        "elapsed_s": round(result.elapsed_s, 3),
    }
    return ledger.record(
        "cycle",
        subject,
        result.ledger_outcome(artifact),
        error_class=result.error_class,
        detail=detail,
    )
