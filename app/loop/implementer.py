"""The implementer's iterations: propose, validate, guard, commit, test, prove, feed back.

One iteration:
1. the model is asked (through the spend caps) with the ticket, the plan, the files as they are
   now and the feedback on its last answer; the four edits are offered as tools too;
2. the reply is read strictly (`app.loop.edits`); an unreadable block is refused;
3. every edit is validated before it touches the worktree and applied (`app.loop.apply`);
4. an edit to the test surface is refused unless the ticket carries the configured label, and
   the whole iteration goes through the guards' iteration check *before* it is committed
   (`app.loop.landing`);
5. a refused iteration is not committed: the worktree is reset, and the refusals (rule, path,
   reason) are the model's next feedback;
6. otherwise it is committed (test artifacts stripped first) and the sandboxed test command
   runs; a failure's output tail is the next feedback, as ground truth;
7. a passing run counts only when `GreenProof` measures it was earned; if not, the commit is
   taken back off the branch and the measurement is the feedback.

A reply that proposes nothing gets one nudge per cycle; after that it ends the work as
`no-edits`. `ALREADY SATISFIED` before anything was committed ends it as `satisfied`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from app.controls.halt import Halted
from app.guards.paths import display
from app.loop.apply import Flag, Refusal
from app.loop.context import Context, feedback_text
from app.loop.edits import EDIT_TOOLS, ParsedReply, parse_reply
from app.loop.landing import land_edits
from app.loop.metering import ModelGate
from app.loop.proof import Baseline, GreenProof
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.workspace.cage.entry import CageRun
from app.workspace.suite import SuiteRunner
from app.workspace.worktree import Trailers, Workspace
from reviewers.model_client import Completion, Message, ModelClient, ModelError
from reviewers.prompts import Template
from reviewers.reviewer import BudgetExhausted

IMPLEMENTER_MAX_TOKENS = 16_000
MODEL_TIMEOUT_S = 600.0

Stop = Literal[
    "green", "satisfied", "exhausted", "no-edits", "budget", "timeout", "halted", "error"
]
TestState = Literal["passed", "failed", "not-run"]

NUDGE = (
    "Your answer proposed no edit. Answer again with edit blocks (### FILE:, ### APPEND:, "
    "### REPLACE:, ### DELETE:) or tool calls that meet the ticket's acceptance criteria; if "
    "the code already meets them, make the last line of your answer exactly ALREADY SATISFIED."
)


@dataclass
class IterationRecord:
    number: int
    phase: str
    model: str = ""
    edits: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    commit: str | None = None
    tests: TestState = "not-run"
    test_summary: str = ""
    elapsed_s: float = 0.0

    def progress(self, total: int) -> str:
        parts = [f"iteration {self.number}/{total} ({self.phase})"]
        parts.append(
            f"{len(self.edits)} edit(s)" + (f": {', '.join(self.edits[:4])}" if self.edits else "")
        )
        if self.refusals:
            shown = "; ".join(f"[{r.rule}] {r.path or '-'}" for r in self.refusals[:3])
            parts.append(f"refused {len(self.refusals)}: {shown}")
        if self.flags:
            shown = "; ".join(f"[{f.rule}] {f.path}" for f in self.flags[:3])
            parts.append(f"flagged for an admin's approval: {shown}")
        parts.append(f"tests {self.test_summary or self.tests}")
        parts.append(f"{self.elapsed_s:.1f}s")
        return ", ".join(parts)


@dataclass
class WorkResult:
    stop: Stop
    reason: str
    iterations: list[IterationRecord]
    last_run: CageRun | None = None
    measured: list[str] = field(default_factory=list)  # how a green was proved


def refused_by(records: Sequence[IterationRecord]) -> str:
    """Which guard rules refused the iterations, for the blocked explanation: "; every
    iteration was refused: deletions (INSTALL.md: ...)" ("" when none was refused)."""
    refused = [record for record in records if record.refusals]
    if not refused:
        return ""
    first: dict[str, Refusal] = {}
    for record in refused:
        for refusal in record.refusals:
            # The refusal naming a file says more than the iteration-wide one.
            known = first.get(refusal.rule)
            if known is None or (known.path is None and refusal.path):
                first[refusal.rule] = refusal
    rules = ", ".join(
        f"{rule} ({display(r.path) + ': ' if r.path else ''}{' '.join(r.reason.split())[:160]})"
        for rule, r in first.items()
    )
    if len(refused) == len(records):
        return f"; every iteration was refused by the guards: {rules}"
    return f"; {len(refused)} of {len(records)} iteration(s) were refused by the guards: {rules}"


@dataclass
class Implementer:
    """One cycle's implementer: its workspace, config, model and measurement."""

    workspace: Workspace
    config: RepoConfig
    ticket: Ticket
    context: Context
    template: Template
    client: ModelClient
    gate: ModelGate
    runner: SuiteRunner
    baseline: Baseline
    deadline: float  # time.monotonic() value
    progress: Callable[[str], None] = lambda line: None
    cancel: Callable[[], bool] | None = None
    total_iterations: int = 0  # across phases, for the progress lines
    done: int = 0
    nudged: bool = False
    tools_ok: bool = True
    records: list[IterationRecord] = field(default_factory=list)
    measured: list[str] = field(default_factory=list)  # how the last green was proved

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def work(self, *, iterations: int, plan: str | None, feedback: str, phase: str) -> WorkResult:
        """Up to `iterations` iterations from the workspace's HEAD, starting with `feedback`."""
        records: list[IterationRecord] = []
        system = self.context.system(self.template)
        last_run: CageRun | None = None
        for _ in range(iterations):
            if self.time_left() <= 0:
                return WorkResult("timeout", "the cycle ran out of wall time", records, last_run)
            self.done += 1
            record = IterationRecord(self.done, phase)
            records.append(record)
            self.records.append(record)
            started = time.monotonic()
            try:
                outcome = self._iteration(record, system, plan, feedback)
            except BudgetExhausted as exc:
                return WorkResult(
                    "budget", f"the spend cap refused a call: {exc}", records, last_run
                )
            except Halted as exc:
                return WorkResult("halted", str(exc), records, last_run)
            except ModelError as exc:
                kind: Stop = "timeout" if exc.kind == "timeout" else "error"
                return WorkResult(kind, f"the model failed: {exc}", records, last_run)
            finally:
                record.elapsed_s = time.monotonic() - started
                self.progress(record.progress(max(self.total_iterations, self.done)))
            stop, feedback, run = outcome
            last_run = run or last_run
            if stop is not None:
                return WorkResult(stop, _REASONS[stop], records, last_run, list(self.measured))
        return WorkResult(
            "exhausted",
            f"no passing, earned result within {iterations} iteration(s){refused_by(records)}",
            records,
            last_run,
        )

    # ---- one iteration -------------------------------------------------------------------------

    def _iteration(
        self, record: IterationRecord, system: str, plan: str | None, feedback: str
    ) -> tuple[Stop | None, str, CageRun | None]:
        user = self.context.implementer_input(
            iteration=record.number,
            iterations=max(self.total_iterations, record.number),
            plan=plan,
            feedback=feedback,
        )
        messages = [Message("user", user)]
        answer = self._ask(system, messages)
        record.model = answer.model or self.client.model_id
        parsed = parse_reply(answer.text, answer.tool_calls)
        if parsed.proposes_nothing and not self.nudged:
            self.nudged = True
            messages += [Message("assistant", answer.text or "(no text)"), Message("user", NUDGE)]
            answer = self._ask(system, messages)
            parsed = parse_reply(answer.text, answer.tool_calls)
        if parsed.satisfied:
            if self.workspace.commits_since_base() == 0:
                return "satisfied", "", None
            return None, feedback_text(notes=[
                "You answered ALREADY SATISFIED, but the branch holds your earlier changes and "
                "the tests have not passed on them yet. Fix what the feedback below says."
            ]) + "\n\n" + feedback, None  # fmt: skip
        if parsed.proposes_nothing:
            return "no-edits", "", None
        record.edits = [edit.describe() for edit in parsed.edits]
        landing = land_edits(self.workspace, self.config, self.ticket, parsed)
        record.flags = landing.flags
        if landing.refusals or landing.snapshot is None:
            self.workspace.reset("HEAD")
            record.refusals = landing.refusals
            return None, self._refused(parsed, landing.refusals), None
        parent = self.workspace.head()
        subject = f"ourobot({self.ticket.id}): iteration {record.number}"
        commit = self.workspace.commit_snapshot(
            landing.snapshot, subject, Trailers(self.ticket.id, record.number, record.model)
        )
        if commit is None:
            return None, feedback_text(notes=[
                "Your edits left every file as it was: nothing changed. Propose edits that "
                "change the code to meet the ticket."
            ]), None  # fmt: skip
        record.commit = commit
        run = self._test()
        record.tests = "passed" if run.passed else "failed"
        record.test_summary = run.summary()
        if run.cancelled:
            return "halted", "", run
        if not run.passed:
            return (
                None,
                feedback_text(
                    test_summary=f"`{self.config.test_command}` {run.summary()}",
                    test_output=run.output_tail,
                    secrets=self.context.secrets,
                ),
                run,
            )
        prover = GreenProof(
            self.workspace, self.runner, self.baseline, time_left=self.time_left, cancel=self.cancel
        )
        proof = prover.check(run)
        self.measured = prover.measured
        if proof:
            self.workspace.reset(parent)  # the refused iteration is not on the branch
            record.commit = None
            record.refusals = proof
            record.tests = "failed"
            record.test_summary = "passed, but not earned (test-tamper)"
            return (
                None,
                feedback_text(
                    refusals=[refusal.line() for refusal in proof],
                    notes=[
                        "The tests passed, but the harness measured that the pass was not earned."
                    ],
                ),
                run,
            )
        return "green", "", run

    def _ask(self, system: str, messages: Sequence[Message]) -> Completion:
        timeout = max(1.0, min(MODEL_TIMEOUT_S, self.time_left()))
        if self.tools_ok:
            try:
                return self.gate.complete(
                    "implementer", self.client, system, messages,
                    max_tokens=IMPLEMENTER_MAX_TOKENS, timeout_s=timeout, tools=EDIT_TOOLS,
                )  # fmt: skip
            except ModelError as exc:
                if exc.kind != "request":
                    raise
                # An endpoint that refuses tools (some local servers): text blocks from now on.
                self.tools_ok = False
        return self.gate.complete(
            "implementer", self.client, system, messages,
            max_tokens=IMPLEMENTER_MAX_TOKENS, timeout_s=timeout,
        )  # fmt: skip

    def _refused(self, parsed: ParsedReply, refusals: Sequence[Refusal]) -> str:
        notes = []
        if any(r.rule == "deletions" for r in refusals):
            limit = self.config.guards.max_deletions_per_iteration
            notes.append(
                f"An answer may delete at most {limit} existing lines. Do not rewrite a file "
                "with ### FILE:; change the lines that must change with ### REPLACE:, or add "
                "text with ### APPEND:."
            )
        return feedback_text(refusals=[refusal.line() for refusal in refusals], notes=notes)

    def _test(self) -> CageRun:
        return self.runner.run_commit(
            self.workspace, "HEAD", timeout_s=self.time_left(), cancel=self.cancel
        )


_REASONS: dict[str, str] = {
    "green": "the tests pass, and the harness measured that the pass was earned",
    "satisfied": "the model answered that the ticket is already satisfied",
    "no-edits": "the model proposed no edit, even after a nudge",
    "halted": "a halt stopped the test run",
}
