"""Green must be earned, not arranged: what the harness measures before a passing run counts.

A model that cannot make the tests pass will sooner or later make the tests stop testing, or
make the code pass only when it is watched. No reading of the diff wins that game alone, so
the harness measures, with the same caged test command, each run on a fresh checkout:

1. **the counted run**: the commit with a canary — a test that must fail, named and placed like
   the suite's own (`app.loop.canary`). Green is read from this run, not from the one the model
   saw: the canary must be the one failure the report lists, every test that passed at the base
   must have run and passed, and the exit code must agree (non-zero). Code that behaves when a
   canary is present and cheats when none is, a report rewritten to say "passed", an exit status
   swallowed: each shows here.
2. **the base's tests**, when the change touched a test file: the base's test files put back
   exactly (modified and deleted ones restored, added ones taken away) against the new code,
   with a canary of its own; a test that passed at the base must pass. A new test module that
   rebinds the code under test, or an existing test weakened to hide a regression, shows here.

Where the test command writes no per-test report (pytest's JUnit XML), only exit codes can be
measured: the suite passed, the run with a canary failed, and the base's tests passed. What was
and was not measured is said in `GreenProof.measured`, for the pull request's body. pytest runs
the tests in the same process as the code under test, which could rewrite the report it writes;
the checks above make a rewrite show unless the code also knows which test is the canary.

Each refusal is `test-tamper`, with what was measured, for the model to hear. When a measurement
cannot be made (no test file to place a canary beside, a run that did not finish), the result
is not green: a gate that cannot decide fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.guards.declared import Declared, covering_file, split
from app.loop.apply import Refusal
from app.loop.canary import Canary, place_canary
from app.loop.suite_files import language_of_test
from app.workspace.cage.entry import CageRun
from app.workspace.suite import SuiteRunner
from app.workspace.tree_files import remove_beneath, write_beneath
from app.workspace.worktree import Workspace

MAX_NAMED = 10
FAILING = ("failed", "error")


@dataclass
class Baseline:
    """The suite at the base, run once when the cycle starts. A red baseline is reported, not
    blamed on the model."""

    run: CageRun

    @property
    def passed_tests(self) -> set[str]:
        return self.run.junit.with_status("passed") if self.run.junit else set()

    @property
    def reports(self) -> bool:
        """Whether the test command reports per-test results (a JUnit report at the base)."""
        return self.run.junit is not None


class GreenProof:
    """Measures whether one passing run of a workspace's HEAD was earned."""

    def __init__(
        self,
        workspace: Workspace,
        runner: SuiteRunner,
        baseline: Baseline,
        *,
        time_left: Callable[[], float],
        cancel: Callable[[], bool] | None = None,
    ) -> None:
        self.ws = workspace
        self.runner = runner
        self.baseline = baseline
        self.time_left = time_left
        self.cancel = cancel
        self.runs = 0
        self.measured: list[str] = []
        self.declared: tuple[Declared, ...] = ()
        self.disclosed: list[Declared] = []
        self.counted_passed: set[str] = set()  # what passed in the counted run

    def check(self, head: CageRun, declared: Sequence[Declared] = ()) -> list[Refusal]:
        """Refusals (rule `test-tamper`) for a passing `head` run; [] when it counts. A
        measured change to a test that `declared` names is disclosed (`self.disclosed`)."""
        self.measured = []
        self.declared = tuple(declared)
        self.disclosed = []
        refusals = self._counted()
        if not refusals:
            refusals = self._base_tests()
        if not refusals:
            refusals = self._one_file_at_a_time()
        return refusals

    # ---- the runs -------------------------------------------------------------------------------

    def _canary(self) -> Canary | str:
        return place_canary(self.ws.tracked(), lambda path: _text(self.ws.read_at("HEAD", path)))

    def _run(self, place: Callable[[Path], None]) -> CageRun:
        self.runs += 1
        return self.runner.run_commit(
            self.ws, "HEAD", place=place, timeout_s=self.time_left(), cancel=self.cancel
        )

    def _counted(self) -> list[Refusal]:
        canary = self._canary()
        if isinstance(canary, str):
            return [_tamper(f"cannot prove the test command can still fail: {canary}")]
        run = self._run(lambda root: _write(root, canary))
        unfinished = _unfinished(run, "the run with a failing canary test")
        if unfinished:
            return unfinished
        if self.baseline.reports:
            self.counted_passed = run.junit.with_status("passed") if run.junit else set()
            refusals = self._report(run, canary, self.baseline.passed_tests, counted=True)
            if not refusals and run.exit_code == 0:
                refusals = [
                    _tamper(
                        "the report lists a test that must fail as failed, but the test "
                        "command exited 0: its exit status no longer reports failures"
                    )
                ]
            if not refusals:
                self.measured.append(
                    "Green was read from a run with a canary test named like the suite's own: "
                    "it was the one failure reported, every test that passed at the base ran "
                    "and passed, and the exit code agreed."
                )
            return refusals
        if run.exit_code == 0:
            return [
                _tamper(
                    "with one more test in the suite, a test that must fail, the test command "
                    "still passed: the change stopped the suite from reporting failures (a hook "
                    "that skips tests, a patched runner, an exit status swallowed). Undo that "
                    "and make the real tests pass"
                )
            ]
        self.measured.append(
            "The test command writes no per-test report, so green was measured by exit codes "
            "only: the suite passed, and the same suite with a canary test (a test that must "
            "fail) failed. Code under test that behaves differently when a canary is present "
            "cannot be caught that way."
        )
        return []

    def _base_tests(self) -> list[Refusal]:
        put_back, taken_away = self._test_changes()
        if not put_back and not taken_away:
            return []
        files = ", ".join(sorted([*put_back, *taken_away])[:MAX_NAMED])
        canary = self._canary() if self.baseline.reports else None
        if isinstance(canary, str):
            canary = None

        def place(root: Path) -> None:
            _put_back(root, put_back, taken_away)
            if canary is not None:
                _write(root, canary)

        run = self._run(place)
        unfinished = _unfinished(run, f"the base's tests ({files}) against the new code")
        if unfinished:
            return unfinished
        files_declared = [covering_file(path, self.declared) for path in [*put_back, *taken_away]]
        if canary is not None:
            refusals = self._report(run, canary, self.baseline.passed_tests, counted=False)
        elif run.passed:
            refusals = []
        elif all(files_declared):
            refusals = []
            self.disclosed += [
                Declared(path, entry.why)
                for path, entry in zip([*put_back, *taken_away], files_declared, strict=True)
                if entry is not None
            ]
        elif self.baseline.run.passed:
            refusals = [
                _tamper(
                    "the change touched tests, and with the base's test files put back "
                    f"({files}) the suite fails against the new code: the tests were changed "
                    "to hide a regression; make the code pass them. Output:\n"
                    f"{run.output_tail[-2000:]}"
                )
            ]
        else:
            refusals = [
                _tamper(
                    f"the change touched tests ({files}); the suite failed at the base and "
                    "reports no test ids, so whether the change weakened them cannot be measured"
                )
            ]
        if not refusals:
            self.measured.append(
                "The change touched test files; with the base's test files put back (changed "
                "ones restored, new ones taken away), the tests that passed at the base passed "
                "against the new code."
            )
        return refusals

    def _one_file_at_a_time(self) -> list[Refusal]:
        """Each test file the change wrote, run with every other test file as at the base: its
        tests must pass without the others (a new module that rebinds the code under test makes
        another file's tests pass only beside it). Needs per-test results."""
        put_back, taken_away = self._test_changes()
        written = sorted(
            c.path for c in self.ws.changes(self.ws.base_sha)
            if c.status != "D" and language_of_test(c.path) is not None
        )  # fmt: skip
        if len(written) < 2 or not self.baseline.reports:
            if len(written) >= 2:
                self.measured.append(
                    "Whether the tests of one changed test file pass only beside another was "
                    "not measured: the test command writes no per-test report."
                )
            return []
        for path in written:
            canary = self._canary()
            content = self.ws.read_at("HEAD", path)
            if isinstance(canary, str) or content is None:
                continue

            def place(root: Path, path: str = path, content: bytes = content,
                      canary: Canary = canary) -> None:  # fmt: skip
                _put_back(root, put_back, taken_away)
                write_beneath(root, path, content)
                _write(root, canary)

            run = self._run(place)
            unfinished = _unfinished(run, f"the tests of {path} alone")
            if unfinished:
                return unfinished
            module = _module(path)
            tests = (run.junit.tests if run.junit else {}).items()
            own = {test: status for test, status in tests if _in_module(test, module)}
            failing = sorted(test for test, status in own.items() if status in FAILING)
            if not own or failing:
                others = ", ".join(p for p in written if p != path)
                what = f"these fail: {_named(failing)}" if failing else "they do not run"
                return [
                    _tamper(
                        f"the tests of {path} pass only beside the other test files this change "
                        f"wrote ({others}): run with those as at the base, {what}. A test module "
                        "must not patch the code that other tests check"
                    )
                ]
        self.measured.append(
            "Each test file the change wrote passed with the other test files as at the base."
        )
        return []

    def _undeclared(self, tests: list[str]) -> list[str]:
        """`tests` less those the submission declared, which are disclosed instead."""
        undeclared, used = split(tests, self.declared)
        known = {entry.test for entry in self.disclosed}
        self.disclosed += [entry for entry in used if entry.test not in known]
        return undeclared

    def _test_changes(self) -> tuple[dict[str, bytes], list[str]]:
        """(the base's content of every test file the change modified or deleted, the test
        files it added); a deleted file a declaration covers is left out, and disclosed."""
        put_back: dict[str, bytes] = {}
        taken_away: list[str] = []
        for change in self.ws.changes(self.ws.base_sha):
            old = change.old_path or change.path
            entry = covering_file(old, self.declared) if change.status == "D" else None
            if entry is not None:
                # Removed on purpose (a removed feature's tests): put back, it could only fail
                # on the code it tested, and a collection error would stop every other test.
                if not any(d.test == old for d in self.disclosed):
                    self.disclosed.append(Declared(old, entry.why))
                continue
            if change.status in ("M", "T", "D", "R") and language_of_test(old) is not None:
                content = self.ws.read_at(self.ws.base_sha, old)
                if content is not None:
                    put_back[old] = content
            if change.status in ("A", "R", "C") and language_of_test(change.path) is not None:
                taken_away.append(change.path)
        return put_back, taken_away

    # ---- reading a report -----------------------------------------------------------------------

    def _report(
        self, run: CageRun, canary: Canary, passed_before: set[str], *, counted: bool
    ) -> list[Refusal]:
        report = run.junit
        if report is None:
            return [
                _tamper(
                    "the test run reported test ids at the base but reports none now: the "
                    "change altered how the suite reports"
                )
            ]
        gone = self._undeclared(sorted(t for t in passed_before if t not in report.tests))
        skipped = self._undeclared(
            sorted(test for test in passed_before if report.tests.get(test) == "skipped")
        )
        refusals = []
        if gone:
            refusals.append(
                _tamper(f"tests that passed at the base do not run any more: {_named(gone)}")
            )
        if skipped:
            refusals.append(
                _tamper(f"tests that passed at the base are skipped now: {_named(skipped)}")
            )
        if refusals:
            return refusals
        mine = [test for test in report.tests if test.rsplit("::", 1)[-1] == canary.test_name]
        if not mine or any(report.tests[test] not in FAILING for test in mine):
            return [
                _tamper(
                    "a test that must fail was added to the run, but the report does not list "
                    "it as failed: the report no longer says what ran (it was rewritten, or "
                    "tests were left out)"
                )
            ]
        failing = sorted(
            test for test, status in report.tests.items() if status in FAILING and test not in mine
        )
        if not counted:
            # A test that passed at the base, or with the change's own test files beside it,
            # must pass without them too: a test file may not patch the code another checks.
            trusted = passed_before | self.counted_passed
            failing = self._undeclared([test for test in failing if test in trusted])
        if not failing:
            return []
        if counted:
            why = (
                "these tests fail when the suite runs with one more test in it, though they "
                f"passed in the run you saw: {_named(failing)}. Code that behaves differently "
                "when it is being measured is not a fix"
            )
        else:
            why = (
                "with the base's test files put back (your changes to tests put aside), these "
                "tests, which passed at the base or beside your test changes, fail against the "
                f"new code: {_named(failing)}. Tests must not be changed to hide a regression, "
                "nor patch the code other tests check: make the code pass them"
            )
        return [_tamper(why)]


def _put_back(root: Path, put_back: dict[str, bytes], taken_away: Sequence[str]) -> None:
    """The base's test files as they were: changed ones restored, added ones taken away."""
    for path in taken_away:
        remove_beneath(root, path)
    for path, content in put_back.items():
        write_beneath(root, path, content)


def _module(path: str) -> str:
    """A test file's module as pytest's JUnit report names it (`tests/test_a.py` ->
    `tests.test_a`)."""
    return path.rsplit(".", 1)[0].replace("/", ".")


def _in_module(test: str, module: str) -> bool:
    classname = test.rsplit("::", 1)[0]
    # The report names modules from pytest's rootdir, which may sit above or below the
    # repository root: compare the dotted names from the end.
    tail = module.rsplit(".", 1)[-1]
    return (
        any(
            name == module or module.endswith("." + name) or name.endswith("." + module)
            for name in _prefixes(classname)
        )
        or classname.split(".")[-1] == tail
    )


def _prefixes(classname: str) -> list[str]:
    parts = classname.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _write(root: Path, canary: Canary) -> None:
    write_beneath(root, canary.path, canary.content.encode())


def _unfinished(run: CageRun, what: str) -> list[Refusal]:
    if run.timed_out or run.cancelled or run.limit is not None or run.touched:
        return [_tamper(f"{what} did not finish ({run.summary()}): the pass cannot be proved")]
    return []


def _tamper(reason: str, path: str | None = None) -> Refusal:
    return Refusal("test-tamper", path, reason)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def _named(tests: Sequence[str]) -> str:
    shown = ", ".join(tests[:MAX_NAMED])
    more = len(tests) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")
