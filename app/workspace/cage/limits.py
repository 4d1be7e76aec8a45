"""How much a caged run may take, how each bound is enforced here, and which one it hit.

Every run is bounded in processes, memory, the size of its `/tmp`, how far it may grow the
directory it writes in, its output and its wall time. Each bound uses the strongest mechanism
this machine offers, chosen once (`Enforcement.detect`):

- processes and memory: a cgroup of the run's own (v2 where this process may create one, else
  v1's `pids` and `memory` controllers), whose counters also say afterwards which limit was
  hit; else `RLIMIT_NPROC` (which the kernel does not apply to root) and `RLIMIT_AS`;
- `/tmp`: a tmpfs of a fixed size inside the sandbox (without bubblewrap, the run's `/tmp` is
  a folder of the scratch directory and counts against the disk bound);
- disk: the writable directories are measured while the run goes (apparent sizes, so a sparse
  file counts at its full length) and the run is stopped past the bound; `RLIMIT_FSIZE` keeps a
  single file from outrunning the measurement;
- output and wall time: measured by the harness, as before.

A bound that cannot be enforced here is named (`Enforcement.missing`): `sandbox: required`
refuses to run without it, `auto` says so in the cycle's record.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.workspace.tree_files import walk_sizes

CGROUP_ROOT = Path("/sys/fs/cgroup")
MiB = 1024 * 1024
GiB = 1024 * MiB

LimitName = Literal["processes", "memory", "tmp", "disk", "output", "time"]


@dataclass(frozen=True)
class Limits:
    """What one run may take."""

    processes: int = 512
    memory_bytes: int = 4 * GiB
    tmp_bytes: int = 1 * GiB
    disk_bytes: int = 1 * GiB  # growth of the directory the run writes in
    output_bytes: int = 64 * MiB

    def describe(self, name: LimitName, timeout_s: float = 0.0) -> str:
        """The limit in words, as a run that hit it is reported."""
        return {
            "processes": f"the process limit ({self.processes})",
            "memory": f"the memory limit ({_size(self.memory_bytes)})",
            "tmp": f"the /tmp limit ({_size(self.tmp_bytes)})",
            "disk": f"the disk limit ({_size(self.disk_bytes)} written)",
            "output": f"the output limit ({_size(self.output_bytes)})",
            "time": f"the time limit ({timeout_s:.0f}s)",
        }[name]


def _size(n: int) -> str:
    return f"{n / GiB:g} GiB" if n >= GiB else f"{n / MiB:g} MiB"


# ---- cgroups -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CgroupSite:
    """Where this process may create a cgroup per run, per controller."""

    version: Literal[1, 2]
    parents: dict[str, Path]  # controller ("pids", "memory") -> the directory to create under


def find_cgroup_site(
    root: Path = CGROUP_ROOT, self_cgroup: Path = Path("/proc/self/cgroup")
) -> CgroupSite | None:
    """A place to create run cgroups with the `pids` and `memory` controllers, or None."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return None
    own: dict[str, str] = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    if (root / "cgroup.controllers").is_file() and "" in own:
        return _v2_site(root, own[""])
    parents: dict[str, Path] = {}
    for controller in ("pids", "memory"):
        if controller not in own:
            return None
        directory = root / controller / own[controller].lstrip("/")
        if not _can_create_in(directory):
            return None
        parents[controller] = directory
    return CgroupSite(1, parents)


def _v2_site(root: Path, own: str) -> CgroupSite | None:
    # A process may not live in a cgroup whose controllers are enabled for children, so runs
    # go beside this process: under its parent, when that delegates pids and memory (systemd's
    # `Delegate=` with `DelegateSubgroup=`, a container's own cgroup).
    current = root / own.lstrip("/")
    for directory in (current.parent, current):
        try:
            enabled = (directory / "cgroup.subtree_control").read_text().split()
        except OSError:
            continue
        if {"pids", "memory"} <= set(enabled) and _can_create_in(directory):
            return CgroupSite(2, {"pids": directory, "memory": directory})
    return None


def _can_create_in(directory: Path) -> bool:
    probe = directory / f"ourobot-probe-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True


@dataclass
class RunCgroup:
    """One run's cgroup (one directory per controller under v1, one under v2)."""

    site: CgroupSite
    dirs: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def create(cls, site: CgroupSite, limits: Limits) -> RunCgroup:
        name = f"ourobot-run-{os.getpid()}-{secrets.token_hex(6)}"
        group = cls(site)
        try:
            for controller, parent in site.parents.items():
                directory = parent / name
                if directory not in group.dirs.values():
                    directory.mkdir()
                group.dirs[controller] = directory
            group._write_limits(limits)
        except OSError:
            group.remove()
            raise
        return group

    def _write_limits(self, limits: Limits) -> None:
        if self.site.version == 2:
            self.dirs["pids"].joinpath("pids.max").write_text(str(limits.processes))
            self.dirs["memory"].joinpath("memory.max").write_text(str(limits.memory_bytes))
            with contextlib.suppress(OSError):
                self.dirs["memory"].joinpath("memory.swap.max").write_text("0")
            return
        self.dirs["pids"].joinpath("pids.max").write_text(str(limits.processes))
        self.dirs["memory"].joinpath("memory.limit_in_bytes").write_text(str(limits.memory_bytes))
        with contextlib.suppress(OSError):
            self.dirs["memory"].joinpath("memory.memsw.limit_in_bytes").write_text(
                str(limits.memory_bytes)
            )

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]

    def hit(self) -> list[LimitName]:
        """The limits this run's processes ran into."""
        found: list[LimitName] = []
        if _counter(self.dirs["pids"] / "pids.events", "max") > 0:
            found.append("processes")
        memory = self.dirs["memory"]
        if self.site.version == 2:
            events = memory / "memory.events"
            if _counter(events, "oom_kill") > 0 or _counter(events, "max") > 0:
                found.append("memory")
        elif _counter(memory / "memory.oom_control", "oom_kill") > 0:
            # Not memory.failcnt: it counts every reclaim at the limit, page cache included.
            found.append("memory")
        return found

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files():
            with contextlib.suppress(OSError):
                found |= {int(p) for p in Path(procs).read_text().split()}
        return found

    def kill_all(self) -> None:
        """Kill every process left in the cgroup, however it detached itself."""
        if self.site.version == 2:
            kill = self.dirs["pids"] / "cgroup.kill"
            if kill.exists():
                with contextlib.suppress(OSError):
                    kill.write_text("1")
        deadline = time.monotonic() + 10
        while (left := self.pids()) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, 9)
            time.sleep(0.02)

    def remove(self) -> None:
        for directory in dict.fromkeys(self.dirs.values()):
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _counter(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        return 0
    return 0


# ---- what this machine can enforce ----------------------------------------------------------


@dataclass(frozen=True)
class Enforcement:
    """How each bound is enforced on this machine."""

    cgroups: CgroupSite | None
    nproc_rlimit: bool  # RLIMIT_NPROC binds (not root)

    @classmethod
    def detect(cls) -> Enforcement:
        return cls(find_cgroup_site(), os.geteuid() != 0)

    @property
    def missing(self) -> list[str]:
        """The bounds this machine cannot enforce, in words."""
        if self.cgroups is None and not self.nproc_rlimit:
            return [
                "processes (no cgroup may be created here, and RLIMIT_NPROC does not bind root)"
            ]
        return []

    def how(self) -> str:
        if self.cgroups is not None:
            return f"cgroup v{self.cgroups.version} (pids.max, memory)"
        kinds = ["RLIMIT_AS"] + (["RLIMIT_NPROC"] if self.nproc_rlimit else [])
        return "rlimits (" + ", ".join(kinds) + ")"


def rlimits(limits: Limits, enforcement: Enforcement, *, cgroup: bool) -> dict[str, int]:
    """The resource limits the launcher sets before the run starts (name -> value)."""
    # Twice the disk bound: one file alone cannot outrun the measurement by much, and a file
    # at the bound is still written, so the measurement (not a failed write) names the limit.
    values = {"RLIMIT_FSIZE": 2 * limits.disk_bytes, "RLIMIT_CORE": 0}
    if not cgroup:
        # Address space, not resident memory: runtimes that reserve much more than they use
        # (a JVM, V8) need room, so the bound is generous where no cgroup can measure use.
        values["RLIMIT_AS"] = limits.memory_bytes * 4
        if enforcement.nproc_rlimit:
            # RLIMIT_NPROC counts every process of this user, not only the run's.
            values["RLIMIT_NPROC"] = limits.processes + processes_of_this_user()
    return values


def processes_of_this_user() -> int:
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += 1
    return count


# ---- disk --------------------------------------------------------------------------------------


def apparent_size(roots: Iterable[Path], skip: Iterable[Path] = ()) -> tuple[int, bool]:
    """(the total apparent size of the files under `roots`, whether every folder could be
    measured): links not followed, a sparse file counted at its length, `skip` (the
    repository's .git) left out."""
    skipped = {Path(p) for p in skip}
    total, whole = 0, True
    for root in roots:
        names = {p.name for p in skipped if p.parent == root}
        size, complete = walk_sizes(root, names)
        total += size
        whole = whole and complete
    return total, whole
