"""The repository's test command, run in the cage on a fresh checkout of exactly the commit
being judged.

Every judged run — the baseline, the test run after a submission, each run of the green proof
— starts from `Workspace.checkout(rev)`: a folder holding the commit's files and nothing else,
thrown away afterwards. So nothing a failing run, an earlier command or a test wrote (a `.pyc`,
a rewritten `tests/__init__.py`, a 48 MiB file) is counted by the next run, committed, or
copied into any object store. The run itself goes through the cage's one entry
(`app.workspace.cage`); the repository's secret files are masked (left empty) in the checkout.

pytest is asked for a JUnit report (`PYTEST_ADDOPTS`) in a folder outside the checkout; its
test ids are read back as untrusted input (`app.workspace.junit`).
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.workspace.cage.entry import Cage, CageJob, CageRun, Isolation
from app.workspace.junit import read_junit
from app.workspace.tree_files import write_beneath
from app.workspace.worktree import Workspace

Place = Callable[[Path], None]


class SuiteRunner:
    """Runs one repository's test command in the cage."""

    def __init__(
        self,
        cage: Cage,
        command: str,
        *,
        timeout_s: float,
        is_secret: Callable[[str], bool] = lambda path: False,
        overlays: tuple[tuple[Path, str], ...] = (),
    ) -> None:
        self.cage = cage
        self.command = command
        self.timeout_s = timeout_s
        self.is_secret = is_secret
        # What the setup phase prepared, shown to every run at its path in the project.
        self.overlays = overlays

    def with_overlays(self, overlays: tuple[tuple[Path, str], ...]) -> SuiteRunner:
        return SuiteRunner(self.cage, self.command, timeout_s=self.timeout_s,
                           is_secret=self.is_secret, overlays=overlays)  # fmt: skip

    @property
    def isolation(self) -> Isolation:
        return self.cage.isolation

    @property
    def warning(self) -> str | None:
        return self.cage.warning

    def run_commit(
        self,
        workspace: Workspace,
        rev: str = "HEAD",
        *,
        place: Place | None = None,
        timeout_s: float | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> CageRun:
        """The test command on a fresh checkout of `rev` (with `place` applied to it first);
        never raises for what the tests do."""
        limit = self.timeout_s if timeout_s is None else min(timeout_s, self.timeout_s)
        masked = tuple(path for path in workspace.tracked(rev) if self.is_secret(path))
        before = workspace.git_state()
        with workspace.checkout(rev) as tree:
            for path in masked:
                write_beneath(tree, path, b"")
            if place is not None:
                place(tree)
            run = self.run_in(tree, timeout_s=limit, cancel=cancel)
        changed = workspace.restore_git_state(before)
        if changed:
            touched = tuple(f"the repository's .git ({name})" for name in changed)
            return replace(run, touched=(*run.touched, *touched))
        return run

    def run_in(
        self,
        tree: Path,
        *,
        timeout_s: float,
        cancel: Callable[[], bool] | None = None,
        git_dirs: tuple[Path, ...] = (),
    ) -> CageRun:
        """The test command in `tree` as it is."""
        with tempfile.TemporaryDirectory(prefix="ourobot-reports-") as scratch:
            reports = Path(scratch)
            # A name the code under test cannot know in advance.
            report = reports / f"report-{secrets.token_hex(8)}.xml"
            job = CageJob(
                self.command,
                tree,
                timeout_s=timeout_s,
                what="the test run",
                git_dirs=git_dirs,
                writable_dirs=(reports,),
                env={"PYTEST_ADDOPTS": f"--junitxml={report}"},
                cancel=cancel,
                overlays=self.overlays,
            )
            run = self.cage.run(job)
            return replace(run, junit=read_junit(report))
