"""The Actions runner stand-in: a dispatched run of a workflow for which a test set a command
(`SandboxControl.set_workflow_command`) is run, one at a time, in a background thread.

The run goes `in_progress`, its command (an argv list, never a shell) runs in a fresh
temporary directory with the workflow's ref exported as `GITHUB_WORKSPACE` (what
`actions/checkout` gives), the environment a runner gives every step (`GITHUB_*`,
`RUNNER_TEMP`, the event file at `GITHUB_EVENT_PATH`, the run's `GITHUB_TOKEN`) and the
command's own variables (the workflow's secrets), with a timeout that kills its whole process
group. Then the run completes: `success` on exit 0, `failure` otherwise, `timed_out` at the
timeout, and its token stops working. A run whose workflow has no command stays queued, as a
run no runner picks up does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.sandbox import workflows
from app.sandbox.gitops import BareRepo, GitError
from app.sandbox.serial import SerialWorker
from app.sandbox.state import WorkflowCommand

if TYPE_CHECKING:
    from app.sandbox.routing import Services
    from app.sandbox.state import Repo, WorkflowRun

LOG_TAIL_CHARS = 8000


@dataclass(frozen=True)
class _Job:
    repo: Repo
    run_id: int
    command: WorkflowCommand


class WorkflowRunner:
    """Queues dispatched runs that have a command and runs them one after the other."""

    def __init__(self) -> None:
        self._sb: Services | None = None
        self._worker = SerialWorker("sandbox-actions", self._execute, stop_timeout_s=30)

    def start(self, sb: Services) -> None:
        self._sb = sb
        self._worker.start()

    def stop(self) -> None:
        self._worker.stop()

    def trigger(self, repo: Repo, run: WorkflowRun) -> None:
        """Queue `run` if its workflow has a command. Callers hold the state lock."""
        command = repo.workflow_commands.get(run.path)
        if command is None or not self._worker.running:
            return
        self._worker.put(_Job(repo, run.id, command))

    def wait_idle(self, timeout_s: float) -> bool:
        return self._worker.wait_idle(timeout_s)

    def _execute(self, job: _Job) -> None:
        sb = self._sb
        assert sb is not None
        with sb.state.lock:
            run = job.repo.workflow_runs.get(job.run_id)
            if sb.state.repo_by_id(job.repo.id) is not job.repo or run is None:
                return
            if run.status == "completed":
                return
            workflows.set_status(sb.state, run, "in_progress", None)
            env = workflows.run_env(sb.state, job.repo, run)
            event = workflows.event_payload(sb.state, job.repo, run)
            head = run.head_sha
        conclusion, log = _run_command(job, head, env, event)
        with sb.state.lock:
            if sb.state.repo_by_id(job.repo.id) is not job.repo or run.status == "completed":
                return
            run.log = log
            workflows.set_status(sb.state, run, "completed", conclusion)


def _run_command(
    job: _Job, head_sha: str, run_env: dict[str, str], event: dict[str, object]
) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="sandbox-actions-") as tmp:
        root = Path(tmp)
        workspace, runner_temp, home = root / "workspace", root / "runner-temp", root / "home"
        for folder in (runner_temp, home):
            folder.mkdir()
        try:
            BareRepo(job.repo.path).export_tree(head_sha, workspace)
        except (GitError, OSError) as exc:
            return "failure", f"could not check out {head_sha}: {exc}"
        event_path = root / "event.json"
        event_path.write_text(json.dumps(event), encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "RUNNER_TEMP": str(runner_temp),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_OUTPUT": str(root / "output"),
            "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
            **job.command.env,
            **run_env,
        }
        try:
            proc = subprocess.Popen(
                list(job.command.argv),
                cwd=workspace,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return "failure", f"could not start {job.command.argv[0]!r}: {exc}"
        try:
            out, _ = proc.communicate(timeout=job.command.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            return "timed_out", out.decode("utf-8", "replace")[-LOG_TAIL_CHARS:]
        tail = out.decode("utf-8", "replace")[-LOG_TAIL_CHARS:]
        return ("success" if proc.returncode == 0 else "failure"), tail
