"""The repository's test command, run where the code under test can reach neither the network
nor a secret, and killed whole at its timeout.

With bubblewrap (`bwrap`) the command runs in new namespaces (`--unshare-all`: only a loopback
network of its own, its own PIDs), in a new session, with a cleared environment: no variable of
ourobot's own environment reaches it, whatever its name; PATH, HOME, TMPDIR and LANG are set by
the harness. The filesystem it sees is the system's read-only (`/usr`, `/etc`, `/opt` and the
links beside them), the toolchains on the harness's PATH read-only, a private `/tmp`, the
worktree (the only writable project path) and a report directory for JUnit XML. The home
directory, the data directory, the repository's own `.git` and every other worktree are not
there at all.

`sandbox:` in the repo config chooses: `auto` (bubblewrap when it can run here, else a
scrubbed environment and a process-group timeout, with a warning in the cycle's record),
`required` (no tests without bubblewrap: `SandboxUnavailable`), `off` (never bubblewrap; the
environment is still scrubbed).

At the timeout the whole process group is killed (and with bubblewrap its PID namespace, so a
child that started its own session dies too). The output is kept in a file the sandbox cannot
see, bounded, and its tail is what the model is shown.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Literal

from app.errors import UserError
from app.workspace.junit import JUnitReport, read_junit

SandboxMode = Literal["auto", "required", "off"]
Isolation = Literal["bwrap", "scrubbed"]

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# The sandbox's own /tmp: a fresh tmpfs inside the namespace, never the host's.
SANDBOX_TMP = "/tmp"  # noqa: S108
TAIL_CHARS = 12_000
TAIL_LINES = 200
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
_POLL_S = 0.02
_CANCEL_EVERY_S = 1.0
_INFO_TIMEOUT_S = 10.0
JUNIT_NAME = "junit.xml"


class SandboxUnavailable(UserError):
    """`sandbox: required` and bubblewrap cannot run here."""


@dataclass(frozen=True)
class SuiteRun:
    """One run of the test command."""

    command: str
    exit_code: int | None  # None when it was killed
    timed_out: bool
    cancelled: bool
    elapsed_s: float
    output_tail: str
    output_bytes: int
    isolation: Isolation
    junit: JUnitReport | None = None
    output_limited: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.cancelled

    def summary(self) -> str:
        if self.timed_out:
            return f"killed after {self.elapsed_s:.0f}s (budgets.test_timeout_s)"
        if self.cancelled:
            return "stopped (halt)"
        if self.output_limited:
            return f"killed: more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MB of output"
        return "passed" if self.passed else f"failed (exit {self.exit_code})"


@cache
def bwrap_problem(bwrap: str) -> str | None:
    """Why bubblewrap at `bwrap` cannot run a sandbox here (None: it can). Asked once."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            *_system_binds(), "--proc", "/proc", "--dev", "/dev", "--", "/bin/sh", "-c",
            "true"]  # fmt: skip
    try:
        proc = subprocess.run(args, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not run: {exc}"
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap} failed: {reason[-1] if reason else proc.returncode}"
    return None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


class SuiteRunner:
    """Runs one repository's test command under one sandbox policy."""

    def __init__(
        self,
        command: str,
        *,
        mode: SandboxMode,
        timeout_s: float,
        bwrap: str | None,
        path: str | None = None,
        toolchains: Iterable[Path] = (),
    ) -> None:
        self.command = command
        self.mode = mode
        self.timeout_s = timeout_s
        self.warning: str | None = None
        self.isolation: Isolation = "scrubbed"
        problem = "bubblewrap (bwrap) is not installed" if bwrap is None else bwrap_problem(bwrap)
        if mode != "off" and problem is None:
            self.isolation = "bwrap"
        elif mode == "required":
            raise SandboxUnavailable(
                f"sandbox: required, but {problem}: install bubblewrap "
                "(apt-get install bubblewrap) or set sandbox: auto"
            )
        elif mode == "auto":
            self.warning = (
                f"{problem}: tests ran with a scrubbed environment and a process-group timeout, "
                "without network isolation"
            )
        self._bwrap = bwrap
        self._path, self._binds = _toolchain(path, toolchains)

    @classmethod
    def for_host(cls, command: str, *, mode: SandboxMode, timeout_s: float) -> SuiteRunner:
        """A runner for this machine: bwrap from PATH, the harness's PATH and Python."""
        return cls(
            command,
            mode=mode,
            timeout_s=timeout_s,
            bwrap=find_bwrap(),
            path=os.environ.get("PATH"),
            toolchains=_python_toolchains(),
        )

    def run(
        self,
        worktree: Path,
        *,
        timeout_s: float | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> SuiteRun:
        """Run the command in `worktree`; never raises for anything the command does."""
        limit = self.timeout_s if timeout_s is None else min(timeout_s, self.timeout_s)
        with tempfile.TemporaryDirectory(prefix="ourobot-tests-") as scratch:
            scratch_dir = Path(scratch)
            reports = scratch_dir / "reports"
            home = scratch_dir / "home"
            reports.mkdir()
            home.mkdir()
            env = self._env(reports, home)
            output = scratch_dir / "output.log"
            with output.open("wb") as sink:
                started = time.monotonic()
                info_read, info_write = os.pipe()
                argv = self._argv(worktree.resolve(), reports, env, info_write)
                try:
                    proc = subprocess.Popen(
                        argv,
                        cwd=worktree,
                        env={} if self.isolation == "bwrap" else env,
                        stdin=subprocess.DEVNULL,
                        stdout=sink,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        pass_fds=(info_write,) if self.isolation == "bwrap" else (),
                    )
                except OSError as exc:
                    sink.write(f"ourobot: the test command could not start: {exc}\n".encode())
                    sink.flush()
                    return self._result(None, False, False, False, started, output, None)
                finally:
                    os.close(info_write)
                with os.fdopen(info_read, "rb") as info:
                    sandbox_init = _sandbox_init(info) if self.isolation == "bwrap" else None
                try:
                    timed_out, cancelled, limited = _wait(proc, limit, output, cancel)
                finally:
                    # Whatever the command left running (a background child of a test that
                    # passed, the rest of a killed one) goes with it.
                    _kill_all(proc, sandbox_init)
            code = None if (timed_out or cancelled or limited) else proc.returncode
            junit = read_junit(reports / JUNIT_NAME)
            return self._result(code, timed_out, cancelled, limited, started, output, junit)

    def _result(
        self,
        code: int | None,
        timed_out: bool,
        cancelled: bool,
        limited: bool,
        started: float,
        output: Path,
        junit: JUnitReport | None,
    ) -> SuiteRun:
        size = output.stat().st_size
        return SuiteRun(
            command=self.command,
            exit_code=code,
            timed_out=timed_out,
            cancelled=cancelled,
            elapsed_s=time.monotonic() - started,
            output_tail=_tail(output, size),
            output_bytes=size,
            isolation=self.isolation,
            junit=junit,
            output_limited=limited,
        )

    def _env(self, reports: Path, home: Path) -> dict[str, str]:
        inside_home = SANDBOX_TMP if self.isolation == "bwrap" else str(home)
        return {
            "PATH": self._path,
            "HOME": inside_home,
            "TMPDIR": inside_home,
            "LANG": "C.UTF-8",
            "CI": "true",
            # pytest reports test ids; other runners ignore the variable.
            "PYTEST_ADDOPTS": f"--junitxml={reports / JUNIT_NAME}",
        }

    def _argv(
        self, worktree: Path, reports: Path, env: Mapping[str, str], info_fd: int
    ) -> list[str]:
        shell = ["/bin/sh", "-c", self.command]
        if self.isolation != "bwrap":
            return shell
        assert self._bwrap is not None
        args = [self._bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--clearenv", "--info-fd", str(info_fd), *_system_binds()]  # fmt: skip
        # The fresh /tmp first: a toolchain under the host's /tmp (a clone in /tmp/x and its
        # .venv) is then bound on top of it, not hidden beneath it.
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", SANDBOX_TMP]
        for path in self._binds:
            args += ["--ro-bind", str(path), str(path)]
        args += ["--bind", str(worktree), str(worktree), "--bind", str(reports), str(reports)]
        for name, value in env.items():
            args += ["--setenv", name, value]
        return [*args, "--chdir", str(worktree), "--", *shell]


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _python_toolchains() -> list[Path]:
    """The Python running ourobot (its venv and the installation behind it): the toolchain a
    Python project's tests most likely need."""
    return [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}]


def _toolchain(path: str | None, extra: Iterable[Path]) -> tuple[str, list[Path]]:
    """The sandbox's PATH and the directories to bind read-only for it. A PATH entry outside
    the system directories is bound as itself, or, when it is a virtualenv's `bin`, as the
    whole virtualenv and the Python installation it was made from; never a home directory
    or `/` as a whole."""
    home = Path(os.path.expanduser("~")).resolve()
    binds: list[Path] = []
    entries: list[str] = []

    def bind(directory: Path) -> bool:
        real = directory.resolve()
        if real == Path("/") or real == home or home.is_relative_to(real):
            return False
        if not _in_system(real) and not any(real.is_relative_to(b) for b in binds):
            binds.append(real)
        return True

    for tool in extra:
        if tool.is_dir():
            bind(tool)
            for prefix in _venv_home(tool):
                bind(prefix)
    for entry in (path or DEFAULT_PATH).split(os.pathsep):
        directory = Path(entry)
        if not directory.is_absolute() or not directory.is_dir():
            continue
        venv = directory.parent
        if (venv / "pyvenv.cfg").is_file():
            if bind(venv):
                entries.append(entry)
            for prefix in _venv_home(venv):
                bind(prefix)
        elif _in_system(directory.resolve()) or bind(directory):
            entries.append(entry)
    return os.pathsep.join(dict.fromkeys(entries)) or DEFAULT_PATH, binds


def _in_system(path: Path) -> bool:
    return any(path.is_relative_to(Path(p).resolve()) for p in SYSTEM_PATHS if os.path.isdir(p))


def _venv_home(venv: Path) -> list[Path]:
    """The Python installation a virtualenv was made from (`home = .../bin` in pyvenv.cfg)."""
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            return [home.parent if home.name == "bin" else home]
    return []


def _wait(
    proc: subprocess.Popen[bytes],
    limit: float,
    output: Path,
    cancel: Callable[[], bool] | None,
) -> tuple[bool, bool, bool]:
    """Wait for the command; kill its whole group at the limit, on cancel, or when its output
    passes the bound. (timed out, cancelled, output limited)."""
    deadline = time.monotonic() + limit
    next_cancel_check = time.monotonic() + _CANCEL_EVERY_S
    while True:
        try:
            proc.wait(timeout=_POLL_S)
            return False, False, False
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        reason: tuple[bool, bool, bool] | None = None
        if now >= deadline:
            reason = (True, False, False)
        elif output.stat().st_size > MAX_OUTPUT_BYTES:
            reason = (False, False, True)
        elif cancel is not None and now >= next_cancel_check:
            next_cancel_check = now + _CANCEL_EVERY_S
            if cancel():
                reason = (False, True, False)
        if reason is not None:
            return reason


def _sandbox_init(info: IO[bytes]) -> int | None:
    """The host PID of the sandbox's init (bwrap's `--info-fd` JSON), None if it never said.
    Read until bwrap closes the descriptor: it does as soon as the sandbox is set up."""
    deadline = time.monotonic() + _INFO_TIMEOUT_S
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([info], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(info.fileno(), 4096)
        if not chunk:
            break
        data += chunk
    try:
        pid = json.loads(data or b"{}").get("child-pid")
    except (json.JSONDecodeError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _kill_all(proc: subprocess.Popen[bytes], sandbox_init: int | None) -> None:
    """Kill the command's process group and, with bubblewrap, the sandbox's init, whose
    death takes every process of its PID namespace with it (a child that left the group by
    starting its own session too); return once they are gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    if sandbox_init is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sandbox_init, signal.SIGKILL)
    proc.wait()
    if sandbox_init is not None:
        _wait_gone(sandbox_init)


def _wait_gone(pid: int) -> None:
    """Until `pid` has exited. The kernel lets a PID namespace's init exit only after every
    other process in the namespace has, so a dead init means an empty sandbox."""
    deadline = time.monotonic() + _INFO_TIMEOUT_S
    stat = Path(f"/proc/{pid}/stat")
    while time.monotonic() < deadline:
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(_POLL_S)


def _tail(output: Path, size: int) -> str:
    start = max(0, size - TAIL_CHARS * 4)
    with output.open("rb") as handle:
        handle.seek(start)
        lines = handle.read().decode("utf-8", "replace").splitlines()
    kept = "\n".join(lines[-TAIL_LINES:])
    tail = kept[-TAIL_CHARS:]
    if start == 0 and len(lines) <= TAIL_LINES and len(tail) == len(kept):
        return tail
    return f"[... {size} bytes of output; the end:]\n{tail}"
