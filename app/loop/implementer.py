"""The implementer's agent loop: each model turn is one action, run by the harness and answered
with what happened.

    first view (the ticket, the plan, the ranked files and map)
    -> reply -> a shell command in the cage, edit blocks, SUBMIT, DONE or ALREADY SATISFIED
    -> the harness runs it (`app.loop.shell`, `app.loop.apply`, `app.loop.submission`)
    -> its observation is the next message ... until the model stops, or a budget does.

The model looks, runs and edits; the harness decides. Only a submission can reach the branch,
and it goes through every check an edit ever did (`app.loop.submission`). `ready` means done:
after a green submission the model is told so and chooses to continue or to stop (DONE, a reply
with nothing new, ALREADY SATISFIED); the cycle then ends on the last green commit. A budget
that runs out while the model is still acting ends `blocked`, the branch kept, saying the
model had not finished. Budgets: `budgets.agent_steps` model turns per cycle, the submissions
of the phase (`implementer_iterations`, `fix_iterations`), wall time and spend; the halt is
checked before each model call (through the spend caps) and stops a running command.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from app.controls.halt import Halted
from app.loop.actions import AGENT_TOOLS, Turn, read_turn
from app.loop.apply import PathPolicy, Refusal, apply_edits
from app.loop.caging import is_secret_file
from app.loop.context import Context, feedback_text
from app.loop.history import History
from app.loop.metering import ModelGate
from app.loop.proof import Baseline
from app.loop.records import IterationRecord, Stop, WorkResult, refused_by
from app.loop.shell import CommandRecord, observation, record, run_command, worktree_size
from app.loop.submission import Submitter
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.workspace.cage.entry import Cage
from app.workspace.suite import SuiteRunner
from app.workspace.worktree import Workspace
from reviewers.model_client import Completion, ModelClient, ModelError
from reviewers.prompts import Template
from reviewers.reviewer import BudgetExhausted

IMPLEMENTER_MAX_TOKENS = 16_000
MODEL_TIMEOUT_S = 600.0
NOT_APPLIED = "None of this answer's edits were applied."
NUDGE = (
    "Your answer asked for nothing. Answer with one action: a ```bash block to look or run "
    "something, edit blocks, or SUBMIT as the last line; if the code already meets the "
    "ticket, make the last line exactly ALREADY SATISFIED."
)


@dataclass
class Implementer:
    """One cycle's implementer: its workspace, config, model, cage and measurement."""

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
    done: int = 0  # submissions so far
    steps: int = 0  # model turns so far
    nudged: bool = False
    tools_ok: bool = True
    green: str | None = None  # the last green commit of this phase
    records: list[IterationRecord] = field(default_factory=list)
    commands: list[CommandRecord] = field(default_factory=list)
    measured: list[str] = field(default_factory=list)  # how the last green was proved
    history: History | None = None
    pending: IterationRecord | None = None  # what the next submission carries
    phase: str = "implement"
    allowed: int = 0  # submissions this phase may reach
    model: str = ""
    last_feedback: str = ""
    halted: bool = False  # a halt stopped a command
    denied: bool = False  # the model was told once that it is not done
    # The worktree's size at the first command: every command's growth is measured from it.
    start_size: int | None = None

    @property
    def cage(self) -> Cage:
        return self.runner.cage

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def work(self, *, iterations: int, plan: str | None, feedback: str, phase: str) -> WorkResult:
        """Act until the model stops or a budget does; up to `iterations` submissions."""
        if self.history is None:
            self.history = History(self.context.agent_input(plan=plan, feedback=feedback))
        elif feedback:
            self.history.add("user", feedback)
        self.green, self.phase, self.allowed = None, phase, self.done + iterations
        self.denied = False
        system = self.context.system(self.template)
        while True:
            limit = self._limit()
            if limit is not None:
                return self._stopped(*limit)
            try:
                turn = self._turn(system)
                stop = self._act(turn)
            except BudgetExhausted as exc:
                return self._stopped("budget", f"the spend cap refused a call: {exc}")
            except Halted as exc:
                return self._stopped("halted", str(exc))
            except ModelError as exc:
                kind: Stop = "timeout" if exc.kind == "timeout" else "error"
                return self._stopped(kind, f"the model failed: {exc}")
            if self.halted:
                return self._stopped("halted", "a halt stopped the command")
            if stop is not None:
                return self._stopped(*stop)

    # ---- one turn -----------------------------------------------------------------------------

    def _limit(self) -> tuple[Stop, str] | None:
        steps = self.config.budgets.agent_steps
        if self.time_left() <= 0:
            return "timeout", "the cycle ran out of wall time while the model was still acting"
        if self.steps >= steps:
            return "steps", (
                f"the step budget ({steps} model turns, budgets.agent_steps) ran out before "
                "the model said it was done"
            )
        return None

    def _turn(self, system: str) -> Turn:
        assert self.history is not None
        self.steps += 1
        answer = self._ask(system)
        self.model = answer.model or self.client.model_id
        calls = "".join(
            f"\n[{call.name} {json.dumps(dict(call.arguments))[:4000]}]"
            for call in answer.tool_calls
        )
        self.history.add("assistant", (answer.text or "") + calls)
        return read_turn(answer.text, answer.tool_calls)

    def _act(self, turn: Turn) -> tuple[Stop, str] | None:
        """Do what `turn` asks; a stop, or None with the observation added for the next turn."""
        assert self.history is not None
        if turn.satisfied or turn.done:
            return self._finish(turn)
        notes: list[str] = []
        # Edit blocks without a command are a submission, as they were before the agent loop.
        submits = turn.submit or (
            bool(turn.edits.edits or turn.edits.problems) and not turn.command
        )
        applied = self._edits(turn, notes)
        if turn.command is not None:
            notes.append(self._command(turn.command, turn.commands_left))
        if submits:
            stop = self._submission(turn, applied, notes)
            if stop is not None:
                return stop
        if turn.asks_nothing:
            if self.green is not None:
                return "green", _REASONS["green"]
            if self.nudged:
                return "no-edits", _REASONS["no-edits"]
            self.nudged = True
            notes.append(NUDGE)
        self.history.add("user", "\n\n".join(notes))
        return None

    def _submission(self, turn: Turn, applied: bool, notes: list[str]) -> tuple[Stop, str] | None:
        refused = bool(turn.edits.edits or turn.edits.problems) and not applied
        if not refused and self.green is not None and not self._changed_since(self.green):
            return "green", _REASONS["green"]  # nothing new since the green submission
        if self.done >= self.allowed:
            return "unfinished", (
                f"the model was still submitting after {self.done} submission(s) (the "
                "iteration budget): it had not finished"
            )
        if refused:
            self._close(self._record())  # a refused proposal spends a submission too
        else:
            verdict = self._submit(turn)
            if verdict is not None:
                return verdict
            notes.append(self.last_feedback)
        if self.green is None and self.done >= self.allowed:
            return "exhausted", f"no passing, earned result within {self.done} iteration(s)"
        return None

    def _finish(self, turn: Turn) -> tuple[Stop, str] | None:
        assert self.history is not None
        if turn.satisfied and self.workspace.commits_since_base() == 0 and self.green is None:
            return "satisfied", _REASONS["satisfied"]
        if self.green is not None:
            self.workspace.reset(self.green)  # anything after the green commit was not submitted
            return "green", _REASONS["green"]
        if self.denied:
            return "unfinished", "the model said it was done, but nothing it submitted passed"
        self.denied = True
        self.history.add("user", feedback_text(notes=[
            "Nothing you submitted has passed yet, so the ticket is not done. Submit a change "
            "whose tests pass (SUBMIT), then answer DONE."
        ]))  # fmt: skip
        return None

    def _edits(self, turn: Turn, notes: list[str]) -> bool:
        """Apply the turn's edit blocks (all or none); whether any was applied."""
        edits = turn.edits
        if edits.problems:
            problems = [p.reason for p in edits.problems]
            notes.append(feedback_text(problems=problems, notes=[NOT_APPLIED]))
            self._record().refusals += [
                Refusal("malformed", p.path, p.reason) for p in edits.problems
            ]
            return False
        if not edits.edits:
            return False
        applied = apply_edits(PathPolicy(self.workspace.path, self.config), edits.edits,
                              self.workspace.ignored)  # fmt: skip
        record = self._record()
        record.flags += applied.flags
        if applied.refusals:
            notes.append(feedback_text(refusals=[r.line() for r in applied.refusals]))
            record.refusals += applied.refusals
            return False
        record.edits += [edit.describe() for edit in edits.edits]
        return True

    def _command(self, command: str, left: int) -> str:
        timeout = min(self.config.budgets.command_timeout_s, max(1.0, self.time_left()))
        secret = is_secret_file(self.config)
        if self.start_size is None:
            self.start_size = worktree_size(self.workspace)
        run, restored = run_command(self.cage, self.workspace, command, timeout_s=timeout,
                                    is_secret=secret, cancel=self.cancel,
                                    overlays=self.runner.overlays,
                                    grown_from=self.start_size)  # fmt: skip
        if run.cancelled:
            self.halted = True
        done = record(command, run)
        self.commands.append(done)
        self._record().commands.append(done)
        self.progress(f"step {self.steps}/{self.config.budgets.agent_steps}: {done.short()}")
        told = observation(run, restored, self.context.secrets)
        if left:
            told += f"\n\n{left} more command block(s) in your answer were not run: one a turn."
        return told

    def _close(self, record: IterationRecord) -> None:
        """`record` becomes the next submission on record."""
        self.pending = None
        self.done += 1
        record.number, record.phase, record.model = self.done, self.phase, self.model
        self.records.append(record)
        if record.refusals and record.commit is None and record.tests == "not-run":
            self.progress(record.progress(max(self.total_iterations, self.done)))

    def _submit(self, turn: Turn) -> tuple[Stop, str] | None:
        record = self._record()
        self._close(record)
        started = time.monotonic()
        submitter = Submitter(self.workspace, self.config, self.ticket, self.context,
                              self.runner, self.baseline, self.time_left, self.cancel)  # fmt: skip
        verdict = submitter.submit(record, turn.declared)
        record.elapsed_s = time.monotonic() - started
        self.progress(record.progress(max(self.total_iterations, self.done)))
        if verdict.halted:
            return "halted", _REASONS["halted"]
        if verdict.green:
            self.green, self.measured = self.workspace.head(), verdict.measured
        self.last_feedback = verdict.feedback
        return None

    def _record(self) -> IterationRecord:
        if self.pending is None:
            self.pending = IterationRecord(self.done + 1, self.phase)
        return self.pending

    def _changed_since(self, commit: str) -> bool:
        self.workspace.strip_artifacts()
        return self.workspace.head() != commit or bool(self.workspace.pending())

    def _ask(self, system: str) -> Completion:
        assert self.history is not None
        timeout = max(1.0, min(MODEL_TIMEOUT_S, self.time_left()))
        messages = self.history.messages()
        if self.tools_ok:
            try:
                return self.gate.complete(
                    "implementer", self.client, system, messages,
                    max_tokens=IMPLEMENTER_MAX_TOKENS, timeout_s=timeout, tools=AGENT_TOOLS,
                )  # fmt: skip
            except ModelError as exc:
                if exc.kind != "request":
                    raise
                # An endpoint that refuses tools (some local servers): text from now on.
                self.tools_ok = False
        return self.gate.complete(
            "implementer", self.client, system, messages,
            max_tokens=IMPLEMENTER_MAX_TOKENS, timeout_s=timeout,
        )  # fmt: skip

    def _stopped(self, stop: Stop, reason: str) -> WorkResult:
        if stop == "exhausted" or stop in ("steps", "unfinished"):
            reason += refused_by(self.records)
        if stop in ("steps", "unfinished", "timeout") and self.green is not None:
            reason += f"; the last green commit {self.green[:12]} is on the branch"
        return WorkResult(stop, reason, self.records, None, list(self.measured))


_REASONS: dict[str, str] = {
    "green": "the model said it was done, on a green commit the harness measured as earned",
    "satisfied": "the model answered that the ticket is already satisfied",
    "no-edits": "the model asked for nothing, even after a nudge",
    "halted": "a halt stopped the test run",
}
