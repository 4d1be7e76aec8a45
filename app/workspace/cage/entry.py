"""The cage's one entry: `Cage.run(CageJob)`, which every run of code ourobot did not write
goes through — the setup phase, an agent's command, the baseline, every test run and every
run of the green proof.

With bubblewrap the run gets namespaces of its own (`--unshare-all`: no network but its own
loopback, its own PIDs, its own user namespace with every capability dropped), a new session,
an environment built from scratch (PATH, HOME, TMPDIR, LANG, CI and what the job adds), and
the file system of `app.workspace.cage.mounts`: an allow-list, read-only, with the project the
one writable path. It starts through `launch.py`, which joins the run's cgroup and sets its
limits first (`app.workspace.cage.limits`).

Without bubblewrap (`sandbox: off`, or `auto` where it cannot run) the command runs with the
same scrubbed environment under the launcher's reaper: no capabilities, no new privileges, and
every process it leaves killed, but the host's file system and network are the command's own.
Server mode refuses that unless the operator allows it (`OUROBOT_ALLOW_UNSANDBOXED`).

A run never raises for what the command does: it ends with a `CageRun` saying how it ended —
its exit code, or which limit stopped it, by name.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO, Literal

from app.errors import UserError
from app.workspace.cage import launch, relay, seccomp
from app.workspace.cage.limits import (
    Enforcement,
    LimitName,
    Limits,
    RunCgroup,
    apparent_size,
    processes_of_this_user,
    rlimits,
)
from app.workspace.cage.mounts import (
    PROJECT_ROOT,
    SANDBOX_TMP,
    etc_args,
    mask_args,
    system_args,
    write_etc,
)
from app.workspace.cage.network import INSIDE_PORT, INSIDE_RELAY, INSIDE_SOCKET, proxy_env
from app.workspace.cage.toolchain import Toolchain
from app.workspace.junit import JUnitReport

SandboxMode = Literal["auto", "required", "off"]
Isolation = Literal["bwrap", "scrubbed"]

TAIL_CHARS = 12_000
TAIL_LINES = 200
HEAD_CHARS = 3_000
HEAD_LINES = 40
SHM_BYTES = 64 * 1024 * 1024
_POLL_S = 0.02
_SLOW_CHECK_S = 0.5
_CANCEL_EVERY_S = 1.0
_INFO_TIMEOUT_S = 10.0
_TERM_GRACE_S = 5.0
_PR_SET_DUMPABLE = 4
INFO_FD, RELEASE_FD, DONE_FD, SECCOMP_FD = 5, 3, 4, 6
# Inside the sandbox the command runs under a shell that, once it ends, says so (fd 4) and
# waits to be released (fd 3): the sandbox, with its /tmp, outlives the command long enough
# for the harness to measure what it left. The command itself (`$1`, never part of this
# text) holds neither descriptor; its exit code is bubblewrap's.
SUPERVISOR = '"$@" 3<&- 4>&-; rc=$?; echo "$rc" >&4; read _ <&3; exit "$rc"'
# With the setup phase's network: the relay to the proxy first, then the command (`$2`).
RELAY_THEN = f'"$1" -I -S {INSIDE_RELAY} {INSIDE_SOCKET} {INSIDE_PORT} && exec /bin/sh -c "$2"'


class SandboxUnavailable(UserError):
    """The sandbox this run needs cannot run here."""


@dataclass(frozen=True)
class CageJob:
    """One command to run in the cage, and what it may see."""

    command: str
    project: Path  # the host folder shown at PROJECT_ROOT
    timeout_s: float
    what: str = "the command"  # how the run is named in its report ("the test run")
    writable: bool = True
    protect: tuple[str, ...] = (".git",)  # project paths read-only inside, checked after
    masked: tuple[str, ...] = ()  # project paths hidden behind an empty file
    git_dirs: tuple[Path, ...] = ()  # a repository's git folders, read-only, at their paths
    writable_dirs: tuple[Path, ...] = ()  # host folders writable at their own path (reports)
    env: Mapping[str, str] = field(default_factory=dict)
    cancel: Callable[[], bool] | None = None
    # What the setup phase left (a virtualenv, node_modules), read-only at its project path.
    overlays: tuple[tuple[Path, str], ...] = ()
    # The setup phase only: the filtering proxy's socket (`network.filtering_proxy`).
    proxy: Path | None = None
    # What the project's growth is measured from (bytes, as `apparent_size` counts): a cycle's
    # worktree as its first command found it, so that many commands together stay under the
    # disk limit. None: this run's own start.
    grown_from: int | None = None


@dataclass(frozen=True)
class CageRun:
    """How one caged run ended."""

    command: str
    exit_code: int | None  # None when it was stopped
    timed_out: bool
    cancelled: bool
    elapsed_s: float
    output_tail: str
    output_bytes: int
    isolation: Isolation
    junit: JUnitReport | None = None
    limit: LimitName | None = None  # the limit that stopped it
    limit_text: str = ""
    touched: tuple[str, ...] = ()  # protected paths the run changed (possible only unsandboxed)
    what: str = "the command"
    output_head: str = ""  # the first lines, when the output is longer than its tail
    path: str = ""  # the sandbox's PATH

    @property
    def not_found(self) -> str | None:
        """What to say when the shell could not find the command (exit 127), else None."""
        if self.exit_code != 127:
            return None
        try:
            program = shlex.split(self.command)[0]
        except (ValueError, IndexError):
            program = (self.command.split() or ["?"])[0]
        what = "the test command" if self.what == "the test run" else self.what
        return f"{what} was not found inside the sandbox: `{program}` (sandbox PATH: {self.path})"

    @property
    def passed(self) -> bool:
        return (
            self.exit_code == 0
            and not self.timed_out
            and not self.cancelled
            and self.limit is None
            and not self.touched
        )

    def summary(self) -> str:
        if self.timed_out:
            return f"killed after {self.elapsed_s:.0f}s: {self.what} hit {self.limit_text}"
        if self.cancelled:
            return "stopped (halt)"
        if self.limit is not None:
            return f"stopped: {self.what} hit {self.limit_text}"
        if self.touched:
            return f"refused: {self.what} changed {', '.join(self.touched)}, which it may only read"
        if self.not_found is not None:
            return f"failed (exit 127): {self.not_found}"
        return "passed" if self.exit_code == 0 else f"failed (exit {self.exit_code})"


@cache
def bwrap_problem(bwrap: str) -> str | None:
    """Why bubblewrap at `bwrap` cannot build a sandbox here (None: it can). Asked once. A
    sandbox whose process still holds a capability is refused: as root it could remount a
    read-only bind writable."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            "--cap-drop", "ALL", *system_args(), "--proc", "/proc", "--dev", "/dev",
            "--", "/bin/sh", "-c", "grep '^CapEff:' /proc/self/status"]  # fmt: skip
    try:
        proc = subprocess.run(args, capture_output=True, timeout=30, check=False, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not run: {exc}"
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap} failed: {reason[-1] if reason else proc.returncode}"
    effective = proc.stdout.decode().split(":")[-1].strip()
    if effective.strip("0"):
        return f"{bwrap} left capabilities inside the sandbox (CapEff {effective})"
    return None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def _undumpable() -> None:
    """Make this process unreadable to the commands it starts without a sandbox: a process
    of the same user can no longer read its /proc/<pid>/environ or memory (the launcher also
    takes every capability from them, so root's commands cannot either)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


class Cage:
    """The sandbox policy of this machine for one repository: built once, run many times."""

    def __init__(
        self,
        *,
        mode: SandboxMode,
        bwrap: str | None,
        toolchain: Toolchain,
        limits: Limits | None = None,
        enforcement: Enforcement | None = None,
    ) -> None:
        self.mode = mode
        self.toolchain = toolchain
        self.limits = limits or Limits()
        self.enforcement = enforcement or Enforcement.detect()
        self.warning: str | None = None
        self.isolation: Isolation = "scrubbed"
        problem = "bubblewrap (bwrap) is not installed" if bwrap is None else bwrap_problem(bwrap)
        missing = self.enforcement.missing
        if mode == "required" and (problem is not None or missing):
            why = problem or f"this machine cannot bound {'; '.join(missing)}"
            raise SandboxUnavailable(
                f"sandbox: required, but {why}: install bubblewrap (apt-get install bubblewrap), "
                "run ourobot where it may create cgroups, or set sandbox: auto"
            )
        if mode != "off" and problem is None:
            self.isolation = "bwrap"
        notes = []
        if mode == "auto" and problem is not None:
            notes.append(f"{problem}: runs used a scrubbed environment without network isolation")
        if mode != "off" and missing:
            notes.append(f"unbounded here: {'; '.join(missing)}")
        self.warning = "; ".join(notes) or None
        self._bwrap = bwrap
        if self.isolation == "scrubbed":
            _undumpable()

    @classmethod
    def for_host(cls, mode: SandboxMode, **kwargs: object) -> Cage:
        """A cage for this machine: bwrap from PATH, the harness's PATH and Python."""
        return cls(mode=mode, bwrap=find_bwrap(), toolchain=Toolchain.for_host(), **kwargs)  # type: ignore[arg-type]

    @property
    def bwrap_path(self) -> str | None:
        return self._bwrap

    def describe(self) -> str:
        return f"{self.isolation}, limits by {self.enforcement.how()}"

    # ---- one run ------------------------------------------------------------------------------

    def run(self, job: CageJob) -> CageRun:
        """Run `job`; never raises for anything the command does."""
        with tempfile.TemporaryDirectory(prefix="ourobot-cage-") as scratch:
            return _Run(self, job, Path(scratch)).go()


class _Run:
    """The state of one run: its scratch folder, cgroup, process and measurements."""

    def __init__(self, cage: Cage, job: CageJob, scratch: Path) -> None:
        self.cage = cage
        self.job = job
        self.scratch = scratch
        self.limits = cage.limits
        self.sandboxed = cage.isolation == "bwrap"
        self.output = scratch / "output.log"
        self.cgroup: RunCgroup | None = None
        self.init_pid: int | None = None
        self.before = _fingerprints(job.project, job.protect)
        self.start_size = 0
        self.release = self.done = -1
        self.nproc: int | None = None

    def go(self) -> CageRun:
        started = time.monotonic()
        if self.cage.enforcement.cgroups is not None:
            with contextlib.suppress(OSError):
                self.cgroup = RunCgroup.create(self.cage.enforcement.cgroups, self.limits)
        try:
            with self.output.open("wb") as sink:
                proc = self._start(sink)
                if proc is None:
                    return self._result(None, started, None)
                try:
                    ending = self._wait(proc, started)
                finally:
                    self._kill_all(proc)
            code = proc.returncode if ending is None else None
            if ending is None and self.cgroup is not None:
                hit = self.cgroup.hit()
                ending = hit[0] if hit else None
                code = None if ending else code
            return self._result(code, started, ending)
        finally:
            for fd in (self.release, self.done):
                if fd >= 0:
                    os.close(fd)
            if self.cgroup is not None:
                self.cgroup.kill_all()
                self.cgroup.remove()

    # ---- starting -----------------------------------------------------------------------------

    def _start(self, sink: IO[bytes]) -> subprocess.Popen[bytes] | None:
        env = self._env()
        grown_from = self.job.grown_from
        self.start_size = self._disk()[0] if grown_from is None else grown_from
        info_read, info_write = os.pipe()
        release_read, self.release = os.pipe()
        self.done, done_write = os.pipe()
        filter_path = self.scratch / "seccomp.bpf"
        filter_path.write_bytes(seccomp.compiled())
        filter_fd = os.open(filter_path, os.O_RDONLY | os.O_CLOEXEC)
        inner = ["/bin/sh", "-c", self.job.command]
        if self.sandboxed:
            inner = self._bwrap_argv(env)
        bounds = rlimits(self.limits, self.cage.enforcement, cgroup=self.cgroup is not None)
        self.nproc = bounds.get("RLIMIT_NPROC")
        config = {
            "cgroups": self.cgroup.procs_files() if self.cgroup else [],
            "rlimits": bounds,
            "sandboxed": self.sandboxed,
            # bubblewrap's info pipe, and the supervisor's two, at the numbers its argv names.
            "fds": {
                INFO_FD: info_write,
                RELEASE_FD: release_read,
                DONE_FD: done_write,
                SECCOMP_FD: filter_fd,
            }
            if self.sandboxed
            else {},
            # Without the sandbox the launcher installs the same filter itself.
            "seccomp": "" if self.sandboxed else str(filter_path),
        }
        argv = [sys.executable, "-I", "-S", launch.__file__, json.dumps(config), "--", *inner]
        passed = (info_write, release_read, done_write, filter_fd)
        try:
            proc = subprocess.Popen(
                argv,
                cwd=self.job.project if not self.sandboxed else "/",
                env={} if self.sandboxed else env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=passed if self.sandboxed else (),
            )
        except OSError as exc:
            sink.write(f"ourobot: {self.job.what} could not start: {exc}\n".encode())
            sink.flush()
            return None
        finally:
            for fd in passed:
                os.close(fd)
        with os.fdopen(info_read, "rb") as info:
            self.init_pid = _sandbox_init(info) if self.sandboxed else None
        return proc

    def _env(self) -> dict[str, str]:
        if self.sandboxed:
            home = SANDBOX_TMP
        else:
            home = str(self.scratch / "tmp")
            os.makedirs(home, exist_ok=True)
        return {
            "PATH": self.cage.toolchain.path,
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "CI": "true",
            **self.job.env,
        }

    def _bwrap_argv(self, env: Mapping[str, str]) -> list[str]:
        assert self.cage._bwrap is not None
        job = self.job
        etc = write_etc(self.scratch / "etc", uid=os.getuid(), gid=os.getgid(), network=False)
        args = [self.cage._bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--clearenv", "--cap-drop", "ALL", "--info-fd", str(INFO_FD),
                "--seccomp", str(SECCOMP_FD),
                "--hostname", "sandbox", *system_args()]  # fmt: skip
        # The fresh /tmp first: a toolchain under the host's /tmp (a clone in /tmp/x and its
        # .venv) is then bound on top of it, not hidden beneath it.
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--size", str(min(SHM_BYTES, self.limits.tmp_bytes)), "--tmpfs", "/dev/shm",  # noqa: S108
                 "--size", str(self.limits.tmp_bytes), "--tmpfs", SANDBOX_TMP]  # fmt: skip
        args += etc_args(etc)
        for path in self.cage.toolchain.binds:
            args += ["--ro-bind", str(path), str(path)]
        for path in job.git_dirs:
            args += ["--ro-bind", str(path), str(path)]
            config = path / "config"
            if config.is_file():
                # A remote URL with a password in it is the user's, not the run's to read.
                args += ["--ro-bind", str(_plain_config(config, self.scratch)), str(config)]
        args += ["--bind" if job.writable else "--ro-bind", str(job.project), PROJECT_ROOT]
        for relative in job.protect:
            if (job.project / relative).exists() or (job.project / relative).is_symlink():
                args += ["--ro-bind", str(job.project / relative), f"{PROJECT_ROOT}/{relative}"]
        empty = self.scratch / "empty"
        empty.touch()
        args += mask_args(job.project, job.masked, empty)
        for source, relative in job.overlays:
            if os.path.islink(source):
                # bubblewrap resolves a bind's source on this machine: a link would show
                # whatever it names here (the App's key, the data directory). Never bound.
                continue
            args += ["--ro-bind", str(source), f"{PROJECT_ROOT}/{relative}"]
        if job.proxy is not None:
            args += ["--ro-bind", str(Path(relay.__file__)), INSIDE_RELAY,
                     "--bind", str(job.proxy), INSIDE_SOCKET]  # fmt: skip
        for path in job.writable_dirs:
            args += ["--bind", str(path), str(path)]
        for name, value in {**env, **(proxy_env() if job.proxy is not None else {})}.items():
            args += ["--setenv", name, value]
        args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", PROJECT_ROOT]
        command = ["/bin/sh", "-c", job.command]
        if job.proxy is not None:
            command = ["/bin/sh", "-c", RELAY_THEN, "sh", sys.executable, job.command]
        return [*args, "--", "/bin/sh", "-c", SUPERVISOR, "sh", *command]

    # ---- waiting ------------------------------------------------------------------------------

    def _wait(
        self, proc: subprocess.Popen[bytes], started: float
    ) -> LimitName | Literal["cancel"] | None:
        """Wait for the command; the limit that stopped it, "cancel", or None when it ended."""
        deadline = started + self.job.timeout_s
        next_slow = time.monotonic() + _SLOW_CHECK_S
        next_cancel = time.monotonic() + _CANCEL_EVERY_S
        while True:
            if self._command_ended():
                # Measured while the sandbox still holds what the command left; then released.
                # The signal is only a hint (a process inside could forge it): the wait goes
                # on under every bound until the sandbox is really gone.
                ending = self._tmp_full() or self._over_disk()
                os.close(self.release)
                self.release = -1
                if ending is not None:
                    return ending
            try:
                proc.wait(timeout=_POLL_S)
                return self._tmp_full() or self._over_disk(final=True) or None
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if now >= deadline:
                return "time"
            if self.output.stat().st_size > self.limits.output_bytes:
                return "output"
            if self._tmp_full():
                return "tmp"
            if now >= next_slow:
                measured = time.monotonic()
                if self._over_disk():
                    return "disk"
                if self.cgroup is not None and (hit := self.cgroup.hit()):
                    return hit[0]
                if self.nproc is not None and processes_of_this_user() >= self.nproc - 1:
                    # RLIMIT_NPROC refuses the next fork; only a count can tell it was reached.
                    return "processes"
                # Measuring a large tree is not free: never spend more than a tenth of the time.
                next_slow = now + max(_SLOW_CHECK_S, 10 * (time.monotonic() - measured))
            if self.job.cancel is not None and now >= next_cancel:
                next_cancel = now + _CANCEL_EVERY_S
                if self.job.cancel():
                    return "cancel"

    def _command_ended(self) -> bool:
        """Whether the supervisor said the command ended (the sandbox then waits for us)."""
        if not self.sandboxed or self.release < 0:
            return False
        ready, _, _ = select.select([self.done], [], [], 0)
        return bool(ready)

    def _tmp_full(self) -> Literal["tmp"] | None:
        """Whether the sandbox's /tmp (seen through its init's root) is full."""
        if self.init_pid is None:
            return None
        try:
            stat = os.statvfs(f"/proc/{self.init_pid}/root{SANDBOX_TMP}")
        except OSError:
            return None
        free = stat.f_bavail * stat.f_frsize
        return "tmp" if free < 64 * 1024 else None

    def _over_disk(self, *, final: bool = False) -> Literal["disk"] | None:
        """Over the disk bound; at the end, a folder left that cannot be measured (a run that
        hid what it wrote) counts as over too."""
        size, whole = self._disk()
        if size - self.start_size >= self.limits.disk_bytes or (final and not whole):
            return "disk"
        return None

    def _disk(self) -> tuple[int, bool]:
        roots = [self.job.project] if self.job.writable else []
        roots += list(self.job.writable_dirs)
        if not self.sandboxed:
            roots.append(self.scratch / "tmp")
        skip = [self.job.project / p for p in self.job.protect]
        return apparent_size(roots, skip)

    def _kill_all(self, proc: subprocess.Popen[bytes]) -> None:
        """End the command and everything it started: with bubblewrap, its PID namespace (the
        init's death takes every process in it); without, the launcher's reaper (SIGTERM),
        then the group; the cgroup's stragglers last."""
        if self.sandboxed:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            if self.init_pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.init_pid, signal.SIGKILL)
            proc.wait()
            if self.init_pid is not None:
                _wait_gone(self.init_pid)
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_TERM_GRACE_S)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    # ---- the result ---------------------------------------------------------------------------

    def _result(self, code: int | None, started: float, ending: str | None) -> CageRun:
        size = self.output.stat().st_size if self.output.exists() else 0
        touched = tuple(
            path
            for path, before in self.before.items()
            if _fingerprints(self.job.project, (path,))[path] != before
        )
        limit: LimitName | None = None
        if ending not in (None, "cancel"):
            limit = ending  # type: ignore[assignment]
        return CageRun(
            command=self.job.command,
            exit_code=code,
            timed_out=ending == "time",
            cancelled=ending == "cancel",
            elapsed_s=time.monotonic() - started,
            output_tail=_tail(self.output, size) if size else "",
            output_bytes=size,
            isolation=self.cage.isolation,
            limit=limit,
            limit_text=self.limits.describe(limit, self.job.timeout_s) if limit else "",
            touched=touched,
            what=self.job.what,
            output_head=_head(self.output, size),
            path=self.cage.toolchain.path,
        )


def _plain_config(config: Path, scratch: Path) -> Path:
    """A repository config with only what git needs to read the repository (its format and
    extensions), without remotes, credentials or anything else the user keeps there."""
    kept = ["[core]", "\trepositoryformatversion = 0"]
    extensions = []
    section = ""
    try:
        lines = config.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.lower()
            continue
        key = stripped.split("=", 1)[0].strip().lower()
        if section == "[core]" and key == "repositoryformatversion":
            kept[1] = "\t" + stripped
        elif section == "[extensions]" and "=" in stripped:
            extensions.append("\t" + stripped)
    if extensions:
        kept += ["[extensions]", *extensions]
    target = scratch / f"git-config-{hashlib.sha256(str(config).encode()).hexdigest()[:8]}"
    target.write_text("\n".join(kept) + "\n")
    return target


def _fingerprints(project: Path, paths: Sequence[str]) -> dict[str, str]:
    """What each protected path is now: a link, a file's bytes, a folder's listing."""
    found = {}
    for relative in paths:
        target = project / relative
        try:
            if target.is_symlink():
                found[relative] = "link:" + os.readlink(target)
            elif target.is_file():
                found[relative] = "file:" + hashlib.sha256(target.read_bytes()).hexdigest()
            elif target.is_dir():
                listing = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
                found[relative] = "dir:" + hashlib.sha256("\0".join(listing).encode()).hexdigest()
            else:
                found[relative] = "absent"
        except OSError:
            found[relative] = "unreadable"
    return found


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


def _head(output: Path, size: int) -> str:
    """The start of an output too long for its tail to show all of it."""
    if size <= TAIL_CHARS:
        return ""
    with output.open("rb") as handle:
        start = handle.read(HEAD_CHARS).decode("utf-8", "replace")
    return "\n".join(start.splitlines()[:HEAD_LINES])


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
