"""A submission: the worktree as it stands, put through everything between a proposal and a
green commit. Files written by the model's commands get past nothing an edit block cannot.

1. the test surface: a changed file that configures or drives the test run is refused unless
   the ticket carries `implementer.test_surface_label`;
2. the guards' iteration check over what `git add -A` would commit (test artifacts stripped
   first), staged in quarantine: unsafe paths, links out, protected paths, `.git`, secrets,
   binaries, sizes, destruction, the static test-tamper rule (a finding on a test file the
   submission declared is disclosed, not refused);
3. the commit (the snapshot judged above, exactly), then the test command on a fresh checkout;
4. a passing run counts only when `GreenProof` measured it was earned.

A refusal resets the worktree to the last commit; a failed proof also takes the commit back off
the branch. Every outcome is a message for the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.guards.declared import Declared, covering_file, waive_static
from app.loop.apply import Refusal
from app.loop.context import Context, feedback_text
from app.loop.landing import judge_worktree, surface_refusals
from app.loop.proof import Baseline, GreenProof
from app.loop.records import IterationRecord
from app.loop.suite_files import language_of_test
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.workspace.cage.entry import CageRun
from app.workspace.suite import SuiteRunner
from app.workspace.worktree import Trailers, Workspace

GREEN = (
    "Your submission is green: it is committed as {commit}, the tests pass, and the harness "
    "measured that the pass was earned. If the ticket's acceptance criteria are all met, answer "
    "DONE (as the last line). If not, keep working and SUBMIT again."
)


@dataclass
class Verdict:
    """How one submission ended."""

    green: bool = False
    halted: bool = False
    feedback: str = ""
    run: CageRun | None = None
    measured: list[str] = field(default_factory=list)


@dataclass
class Submitter:
    workspace: Workspace
    config: RepoConfig
    ticket: Ticket
    context: Context
    runner: SuiteRunner
    baseline: Baseline
    time_left: Callable[[], float]
    cancel: Callable[[], bool] | None = None

    def submit(self, record: IterationRecord, declared: Sequence[Declared]) -> Verdict:
        ws = self.workspace
        ws.strip_artifacts()
        paths = [*ws.pending(), *self._deleted()]
        refusals = surface_refusals(ws, self.config, self.ticket, paths)
        snapshot = None
        if not refusals:
            covered = self._covered(paths, declared, record)
            refusals, snapshot = judge_worktree(
                ws, self.config, covered, lambda found: self._declared(found, declared, record)
            )
        if refusals or snapshot is None:
            ws.reset("HEAD")
            record.refusals = refusals
            record.disclosed = []  # nothing of a refused submission reaches the branch
            return Verdict(feedback=self._refused(refusals))
        parent = ws.head()
        changes = tuple((d.test, d.why) for d in declared)
        trailers = Trailers(self.ticket.id, record.number, record.model, changes)
        commit = ws.commit_snapshot(snapshot, f"ourobot({self.ticket.id}): iteration "
                                    f"{record.number}", trailers)  # fmt: skip
        if commit is None:
            return Verdict(feedback=feedback_text(notes=[
                "Your submission changed no file: the worktree is as the last commit left it."
            ]))  # fmt: skip
        record.commit = commit
        return self._test(record, parent, declared)

    def _test(self, record: IterationRecord, parent: str, declared: Sequence[Declared]) -> Verdict:
        run = self.runner.run_commit(
            self.workspace, "HEAD", timeout_s=self.time_left(), cancel=self.cancel
        )
        record.tests = "passed" if run.passed else "failed"
        record.test_summary = run.summary()
        if run.cancelled:
            return Verdict(halted=True, run=run)
        if not run.passed:
            return Verdict(run=run, feedback=feedback_text(
                test_summary=f"`{self.config.test_command}` {run.summary()}",
                test_output=run.output_tail, secrets=self.context.secrets,
            ))  # fmt: skip
        prover = GreenProof(self.workspace, self.runner, self.baseline,
                            time_left=self.time_left, cancel=self.cancel)  # fmt: skip
        proof = prover.check(run, declared)
        if proof:
            self.workspace.reset(parent)  # the refused commit is not on the branch
            record.commit = None
            record.disclosed = []
            record.refusals = proof
            record.tests = "failed"
            record.test_summary = "passed, but not earned (test-tamper)"
            return Verdict(run=run, feedback=feedback_text(
                refusals=[refusal.line() for refusal in proof],
                notes=["The tests passed, but the harness measured that the pass was not earned."],
            ))  # fmt: skip
        record.disclosed += [d for d in prover.disclosed if d not in record.disclosed]
        commit = record.commit or ""
        return Verdict(green=True, run=run, measured=prover.measured,
                       feedback=GREEN.format(commit=commit[:12]))  # fmt: skip

    def _deleted(self) -> list[str]:
        _, out = self.workspace.git_raw("ls-files", "-z", "--deleted")
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def _covered(
        self, paths: Sequence[str], declared: Sequence[Declared], record: IterationRecord
    ) -> frozenset[str]:
        """The changed test files a declaration covers: what they lose (a removed feature's
        tests) is disclosed on the record, not measured as destruction."""
        covered = set()
        for path in dict.fromkeys(paths):
            # Only a test file: a declaration never lifts the limit from the code under test.
            entry = covering_file(path, declared) if language_of_test(path) else None
            if entry is not None:
                covered.add(path)
                said = Declared(
                    f"{path}: changed as declared; the lines it lost were not counted against "
                    "the iteration's deletion limit",
                    entry.why,
                )
                if said not in record.disclosed:
                    record.disclosed.append(said)
        return frozenset(covered)

    def _declared(
        self, refusals: list[Refusal], declared: Sequence[Declared], record: IterationRecord
    ) -> list[Refusal]:
        """The static test-tamper findings on test files the submission declared it changes
        on purpose are disclosed on the record instead of refused."""
        kept, shown = waive_static(refusals, declared, lambda r: (r.rule, r.path, r.reason))
        record.disclosed += shown
        return kept

    def _refused(self, refusals: Sequence[Refusal]) -> str:
        notes = []
        if any(r.rule == "deletions" for r in refusals):
            notes.append(
                "A submission may not destroy existing content: change the lines that must "
                "change (REPLACE, or a command such as sed), or add text (APPEND); never rewrite "
                "a long file from memory. Lines a test file loses on purpose (the tests of a "
                "removed feature) are not counted when you declare that file under "
                "`### TEST CHANGES` with the reason."
            )
        return feedback_text(
            refusals=[refusal.line() for refusal in refusals],
            notes=[*notes, "The worktree was reset to the last commit."],
        )
