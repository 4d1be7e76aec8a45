"""The Actions stand-in: when a repository has a CI command, every pull request head that is
opened, pushed or reopened gets a `ci/test` check run from a separate "github-actions" App, like a
required workflow on GitHub. The command (an argv list, never a shell) runs in a worker thread,
in a fresh temporary directory holding the head commit's files, with a timeout that kills its
whole process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.sandbox.api_checks import record_check_run, update_check_run
from app.sandbox.gitops import BareRepo, GitError
from app.sandbox.serial import SerialWorker

if TYPE_CHECKING:
    from app.sandbox.routing import Services
    from app.sandbox.state import Repo

CHECK_NAME = "ci/test"
OUTPUT_TAIL_CHARS = 4000


@dataclass(frozen=True)
class _Job:
    repo: Repo
    sha: str
    argv: tuple[str, ...]
    timeout_s: float


@dataclass(frozen=True)
class _Result:
    conclusion: str
    summary: str
    text: str


class CiRunner:
    """Queues CI jobs and runs them one at a time in a background thread."""

    def __init__(self) -> None:
        self._sb: Services | None = None
        self._worker = SerialWorker("sandbox-ci", self._execute, stop_timeout_s=30)

    def start(self, sb: Services) -> None:
        self._sb = sb
        self._worker.start()

    def stop(self) -> None:
        self._worker.stop()

    def trigger(self, repo: Repo, sha: str) -> None:
        """Queue a run for `sha` if the repo has a CI command. Callers hold the state lock."""
        if repo.ci is None or not self._worker.running:
            return
        self._worker.put(_Job(repo, sha, tuple(repo.ci.argv), repo.ci.timeout_s))

    def wait_idle(self, timeout_s: float) -> bool:
        return self._worker.wait_idle(timeout_s)

    def _current(self, job: _Job) -> bool:
        """False once the repo was reset away while the job waited or ran."""
        assert self._sb is not None
        return self._sb.state.repo_by_id(job.repo.id) is job.repo

    def _execute(self, job: _Job) -> None:
        sb = self._sb
        assert sb is not None
        with sb.state.lock:
            if not self._current(job):
                return
            run = record_check_run(
                sb,
                job.repo,
                sb.state.actions_app,
                name=CHECK_NAME,
                head_sha=job.sha,
                status="in_progress",
            )
        result = _run_command(job)
        with sb.state.lock:
            if not self._current(job):
                return
            output = {"title": result.summary, "summary": result.summary, "text": result.text}
            update_check_run(sb, job.repo, run, {"conclusion": result.conclusion, "output": output})


def _run_command(job: _Job) -> _Result:
    with tempfile.TemporaryDirectory(prefix="sandbox-ci-") as tmp:
        src = Path(tmp) / "src"
        try:
            BareRepo(job.repo.path).export_tree(job.sha, src)
        except (GitError, OSError) as exc:
            return _Result("failure", "could not check out the commit", str(exc))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "CI": "true",
            "GITHUB_SHA": job.sha,
        }
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                list(job.argv),
                cwd=src,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return _Result("failure", f"could not start {job.argv[0]!r}", str(exc))
        try:
            out, _ = proc.communicate(timeout=job.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            tail = out.decode("utf-8", "replace")[-OUTPUT_TAIL_CHARS:]
            return _Result("timed_out", f"timed out after {job.timeout_s:g} s", tail)
        took = time.monotonic() - started
        tail = out.decode("utf-8", "replace")[-OUTPUT_TAIL_CHARS:]
        if proc.returncode == 0:
            return _Result("success", f"passed in {took:.1f} s", tail)
        return _Result("failure", f"failed with exit code {proc.returncode}", tail)
