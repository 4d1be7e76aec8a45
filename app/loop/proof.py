"""Green must be earned, not arranged: what the harness measures before a passing run counts.

A model that cannot make the tests pass will sooner or later make the tests stop testing. No
reading of the diff wins that game alone (a conftest hook, a patched `TestCase.run`, a swallowed
exit code each work differently), so the harness measures, with the same sandboxed command:

1. **ids** (where the runner reports them, pytest's JUnit XML): a test that passed at the base
   and is missing or skipped at the head is refused;
2. **the base's tests**: the base's version of every existing test file the change modified
   or deleted is put back and the suite run against the new code; a test that passed at the
   base and fails that way was weakened to hide a regression;
3. **a canary**: a test that must fail is placed where the suite's own tests live; a suite that
   still passes no longer reports failures.

Each is refused as `test-tamper` with what was measured, for the model to hear. When a
measurement cannot be made (no test file to place a canary beside, a run that timed out, no ids
to tell old failures from new ones), the result is not green: a gate that cannot decide fails.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.loop.apply import Refusal
from app.loop.suite_files import Language, directories_with_tests, language_of_test
from app.workspace.suite import SuiteRun, SuiteRunner
from app.workspace.worktree import Workspace

MAX_NAMED = 10
_GO_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_JS_SUFFIX = re.compile(r"((\.(test|spec))?\.[cm]?[jt]sx?)$")


@dataclass(frozen=True)
class Canary:
    path: str
    content: str


@dataclass
class Baseline:
    """The suite at the base, run once when the cycle starts. A red baseline is reported, not
    blamed on the model."""

    run: SuiteRun

    @property
    def passed_tests(self) -> set[str]:
        return self.run.junit.with_status("passed") if self.run.junit else set()


def place_canary(tracked: Sequence[str], read: Callable[[str], str | None]) -> Canary | str:
    """A failing test beside the suite's own (in the folder with most tests of the language
    with most tests), or why none can be placed. `read` gives a file's text at the head."""
    folders = directories_with_tests(list(tracked))
    if not folders:
        return "no test file was found to place a canary test beside"
    counts: dict[Language, int] = {}
    for files in folders.values():
        for path in files:
            found = language_of_test(path)
            assert found is not None
            counts[found] = counts.get(found, 0) + 1
    language: Language = max(counts, key=lambda lang: counts[lang])

    def weight(folder: str) -> tuple[int, int, str]:
        own = sum(1 for path in folders[folder] if language_of_test(path) == language)
        return (-own, folder.count("/"), folder)

    folder = min(folders, key=weight)
    sibling = next(p for p in sorted(folders[folder]) if language_of_test(p) == language)
    token = secrets.token_hex(4)
    prefix = f"{folder}/" if folder else ""
    content = _canary_content(language, sibling, token, read)
    if content is None:
        return f"cannot write a canary test beside {sibling}"
    return Canary(prefix + _canary_name(language, sibling, token), content)


def _canary_name(language: Language, sibling: str, token: str) -> str:
    name = sibling.rsplit("/", 1)[-1]
    if language == "python":
        return (
            f"ourobot_canary_{token}_test.py"
            if name.endswith("_test.py") and not name.startswith("test_")
            else f"test_ourobot_canary_{token}.py"
        )
    if language == "go":
        return f"ourobot_canary_{token}_test.go"
    if language == "ruby":
        if name.endswith("_spec.rb"):
            return f"ourobot_canary_{token}_spec.rb"
        return f"test_ourobot_canary_{token}.rb"
    match = _JS_SUFFIX.search(name)
    return f"ourobot-canary-{token}{match.group(1) if match else '.test.js'}"


def _canary_content(
    language: Language, sibling: str, token: str, read: Callable[[str], str | None]
) -> str | None:
    message = "ourobot canary: this test must fail"
    if language == "python":
        return (
            "import unittest\n\n\n"
            f"class OurobotCanary{token}(unittest.TestCase):\n"
            "    def test_ourobot_canary(self):\n"
            f"        self.fail({message!r})\n"
        )
    if language == "go":
        found = _GO_PACKAGE.search(read(sibling) or "")
        if found is None:
            return None
        return (
            f"package {found.group(1)}\n\n"
            'import "testing"\n\n'
            f"func TestOurobotCanary{token}(t *testing.T) {{\n"
            f'\tt.Fatal("{message}")\n'
            "}\n"
        )
    if language == "ruby":
        if sibling.endswith("_spec.rb"):
            return f'RSpec.describe("ourobot canary") {{ it("fails") {{ raise "{message}" }} }}\n'
        return (
            'require "minitest/autorun"\n\n'
            f"class OurobotCanary{token}Test < Minitest::Test\n"
            f'  def test_ourobot_canary\n    flunk "{message}"\n  end\nend\n'
        )
    # Jest, Vitest with globals and Mocha define `test` or `it`; without either, the file
    # fails to load, which fails the run too.
    return (
        "const ourobotCanary = globalThis.test ?? globalThis.it;\n"
        f'if (typeof ourobotCanary !== "function") throw new Error("{message}");\n'
        f'ourobotCanary("ourobot canary", () => {{ throw new Error("{message}"); }});\n'
    )


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

    def check(self, head: SuiteRun) -> list[Refusal]:
        """Refusals (rule `test-tamper`) for a passing `head` run; [] when it counts."""
        refusals = self._ids(head)
        if not refusals:
            refusals = self._base_tests()
        if not refusals:
            refusals = self._canary()
        return refusals

    def _run(self, place: Callable[[Path], None]) -> SuiteRun:
        self.ws.reset("HEAD")
        try:
            place(self.ws.path)
            self.runs += 1
            return self.runner.run(self.ws.path, timeout_s=self.time_left(), cancel=self.cancel)
        finally:
            self.ws.reset("HEAD")

    def _ids(self, head: SuiteRun) -> list[Refusal]:
        before = self.baseline.passed_tests
        if not before:
            return []
        if head.junit is None:
            return [
                _tamper(
                    "the test run reported test ids at the base "
                    "but reports none now: the change altered how the suite reports"
                )
            ]
        gone = sorted(test for test in before if test not in head.junit.tests)
        skipped = sorted(test for test in before if head.junit.tests.get(test) == "skipped")
        refusals = []
        if gone:
            refusals.append(
                _tamper(f"tests that passed at the base do not run any more: {_named(gone)}")
            )
        if skipped:
            refusals.append(
                _tamper(f"tests that passed at the base are skipped now: {_named(skipped)}")
            )
        return refusals

    def _base_tests(self) -> list[Refusal]:
        restore: dict[str, bytes] = {}
        for change in self.ws.changes(self.ws.base_sha):
            old = change.old_path or change.path
            if change.status in ("M", "T", "D", "R") and language_of_test(old) is not None:
                content = self.ws.read_at(self.ws.base_sha, old)
                if content is not None:
                    restore[old] = content
        if not restore:
            return []

        def place(root: Path) -> None:
            for path, content in restore.items():
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)

        run = self._run(place)
        files = ", ".join(sorted(restore))
        if run.passed:
            return []
        if run.timed_out or run.cancelled:
            return [
                _tamper(
                    f"the base's versions of {files} could not be "
                    f"run against the new code ({run.summary()})"
                )
            ]
        before = self.baseline.passed_tests
        if run.junit is not None and before:
            broken = sorted(
                test for test in before if run.junit.tests.get(test) in ("failed", "error")
            )
            if not broken:
                return []
            return [
                _tamper(
                    "the change modified existing tests, and with "
                    f"the base's versions of {files} these tests, which passed at the "
                    f"base, fail against the new code: {_named(broken)}. The tests "
                    "were changed to hide a regression: make the code pass them"
                )
            ]
        if self.baseline.run.passed:
            return [
                _tamper(
                    f"the suite passed at the base, but with the "
                    f"base's versions of {files} it fails against the new code: the "
                    "tests were changed to hide a regression; make the code pass them. "
                    f"Output:\n{run.output_tail[-2000:]}"
                )
            ]
        return [
            _tamper(
                f"the change modified existing tests ({files}); "
                "the suite failed at the base and reports no test ids, so whether the "
                "change weakened them cannot be measured"
            )
        ]

    def _canary(self) -> list[Refusal]:
        canary = place_canary(self.ws.tracked(), lambda path: _text(self.ws.read_at("HEAD", path)))
        if isinstance(canary, str):
            return [_tamper(f"cannot prove the test command can still fail: {canary}")]

        def place(root: Path) -> None:
            (root / canary.path).write_text(canary.content, encoding="utf-8")

        run = self._run(place)
        if run.passed:
            return [
                _tamper(
                    path=canary.path,
                    reason="with a failing test added here, the "
                    "test command still passed: the change stopped the suite from "
                    "reporting failures (a hook that skips tests, a patched runner, an "
                    "exit status swallowed). Undo that and make the real tests pass",
                )
            ]
        if run.timed_out or run.cancelled:
            return [
                _tamper(
                    path=canary.path,
                    reason="the run with a failing canary test did "
                    f"not finish ({run.summary()}): cannot prove the suite can fail",
                )
            ]
        return []


def _tamper(reason: str, path: str | None = None) -> Refusal:
    return Refusal("test-tamper", path, reason)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def _named(tests: Sequence[str]) -> str:
    shown = ", ".join(tests[:MAX_NAMED])
    more = len(tests) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")
