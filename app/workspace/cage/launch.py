"""The first process of every caged run: limits set, then the sandbox (or, without one, the
command under a reaper).

Run as a script by ourobot's own Python (`python -I -S launch.py CONFIG -- ARGV...`), with
nothing but the standard library, so that what it does happens in the new process before the
command's first instruction, without `preexec_fn` (unsafe in a threaded parent):

1. join the run's cgroups (every process the run starts is counted and can be killed there);
2. set the resource limits;
3. with bubblewrap: `exec` it with an empty environment, so the sandbox's process 1 (bwrap's
   own) holds nothing of ourobot's either;
4. without bubblewrap: narrow what it can: no new privileges, no capabilities even as root,
   and a subreaper, so that when the command ends (or ourobot asks with SIGTERM) every process
   it left behind — one that started its own session included — is found and killed.

CONFIG is JSON: {"cgroups": [cgroup.procs files], "rlimits": {"RLIMIT_X": n},
"sandboxed": bool}.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import resource
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECUREBITS = 28
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
# noroot, no_setuid_fixup and keep_caps, each with its lock: uid 0 gains no capability on exec.
SECURE_BITS = 0x2F
LAST_CAP = 63


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    command = argv[argv.index("--") + 1 :]
    for procs in config.get("cgroups", []):
        with open(procs, "w") as handle:
            handle.write(str(os.getpid()))
    for name, value in config.get("rlimits", {}).items():
        resource.setrlimit(getattr(resource, name), (value, value))
    _place_fds({int(target): source for target, source in config.get("fds", {}).items()})
    if config.get("sandboxed"):
        os.execve(command[0], command, {})  # noqa: S606 (bwrap, by absolute path)
    return _reap(command, config.get("seccomp") or "")


def _place_fds(wanted: dict[int, int]) -> None:
    """Give each inherited descriptor the number the command's argv names (via numbers no
    target uses, so that no source is overwritten before it is moved)."""
    parked = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 100) for target, source in wanted.items()}
    for source in wanted.values():
        os.close(source)
    for target, fd in parked.items():
        os.dup2(fd, target, inheritable=True)
        os.close(fd)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _narrow(libc: ctypes.CDLL) -> None:
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if os.geteuid() == 0:
        libc.prctl(PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0)
        for cap in range(LAST_CAP + 1):
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


class _Stop(Exception):
    """ourobot asked the run to end (SIGTERM)."""


def _stop(*_: object) -> None:
    raise _Stop


class _Program(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def _filter(libc: ctypes.CDLL, path: str) -> None:
    """Install the cage's seccomp filter (`seccomp.py`); no new privileges is set already."""
    with open(path, "rb") as handle:
        data = handle.read()
    buffer = ctypes.create_string_buffer(data, len(data))
    program = _Program(len(data) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot install the seccomp filter")


def _reap(command: list[str], seccomp: str) -> int:
    libc = _libc()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _narrow(libc)
    if seccomp:
        _filter(libc, seccomp)
    signal.signal(signal.SIGTERM, _stop)
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setpgid(0, 0)
        try:
            os.execvpe(command[0], command, dict(os.environ))  # noqa: S606
        except OSError as exc:
            print(f"ourobot: cannot start {command[0]}: {exc.strerror}", file=sys.stderr)
            os._exit(127)
    status = -signal.SIGKILL
    try:
        _, code = os.waitpid(child, 0)
        status = os.waitstatus_to_exitcode(code)
    except (_Stop, ChildProcessError):
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_descendants()
    return 128 - status if status < 0 else status


def _kill_descendants() -> None:
    """Stop, then kill, every process below this one until none is left (orphans come back
    to this subreaper, so waiting ends only when the last is gone)."""
    me = os.getpid()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = _descendants(me)
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            if not _descendants(me):
                return
        time.sleep(0.01)


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[-1].split()
        if len(fields) > 1:
            parents[int(name)] = int(fields[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv))
