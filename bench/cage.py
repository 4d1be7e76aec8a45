"""What the cage's hardening costs per test run, against the sandbox it replaced, same machine,
same project, same run.

    .venv/bin/python bench/cage.py [--files 200] [--runs 7]

Builds a Python project of `--files` modules (each with a test) in a git repository and runs
its tests with pytest three ways, best of `--runs` each:

- **before** (the baseline): bubblewrap as the test runner invoked it before the cage: every
  namespace unshared, `/usr` and `/etc` bound read-only, a fresh `/tmp`, the worktree bound
  writable, the command run in place;
- **cage, in place**: `Cage.run` on the same worktree: the launcher, the run's cgroup and
  limits, the synthesized `/etc`, no capabilities, the supervisor that holds the sandbox until
  it is measured, the disk measurement;
- **cage, fresh checkout**: `SuiteRunner.run_commit`, what every judged run now is: the above
  on a fresh checkout of the commit, with the git directory checked before and after.

Also `true` instead of pytest, to show the fixed cost alone. Prints seconds and ratios to the
baseline; no assertions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.workspace.cage.entry import Cage, CageJob, find_bwrap  # noqa: E402
from app.workspace.cage.mounts import SANDBOX_TMP, system_args  # noqa: E402
from app.workspace.cage.toolchain import Toolchain  # noqa: E402
from app.workspace.suite import SuiteRunner  # noqa: E402
from app.workspace.worktree import open_workspace  # noqa: E402


def build_project(root: Path, files: int) -> str:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "tests").mkdir()
    for n in range(files):
        (root / f"mod{n}.py").write_text(f"def f{n}(x):\n    return x + {n}\n")
        (root / "tests" / f"test_mod{n}.py").write_text(
            f"from mod{n} import f{n}\n\n\ndef test_f{n}():\n    assert f{n}(1) == {n + 1}\n"
        )
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME":
           "b", "GIT_COMMITTER_EMAIL": "b@x"}  # fmt: skip
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "base"], check=True, env=env)
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip


def before(bwrap: str, toolchain: Toolchain, worktree: Path, command: str) -> None:
    """The sandbox as the test runner built it before the cage."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            *system_args(), "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
            "--tmpfs", SANDBOX_TMP]  # fmt: skip
    for path in toolchain.binds:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(worktree), str(worktree), "--setenv", "PATH", toolchain.path,
             "--setenv", "HOME", SANDBOX_TMP, "--chdir", str(worktree), "--", "/bin/sh", "-c",
             command]  # fmt: skip
    subprocess.run(args, env={}, capture_output=True, check=False, start_new_session=True)


def best(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    bwrap = find_bwrap()
    if bwrap is None:
        print("bench/cage.py: bubblewrap (bwrap) is not installed: nothing to compare")
        return 0
    toolchain = Toolchain.for_host()
    cage = Cage(mode="required", bwrap=bwrap, toolchain=toolchain)
    print(f"cage: {cage.describe()}; project: {args.files} modules and tests; best of {args.runs}")
    scratch = Path(tempfile.mkdtemp(prefix="ourobot-bench-cage-"))
    try:
        base = build_project(scratch / "repo", args.files)
        with open_workspace(scratch / "repo", ticket="bench", base_sha=base, root=scratch) as ws:
            for label, command in (
                ("pytest", f"{sys.executable} -m pytest -q -p no:cacheprovider tests"),
                ("true", "true"),
            ):
                runner = SuiteRunner(cage, command, timeout_s=300)
                old = best(args.runs, lambda c=command: before(bwrap, toolchain, ws.path, c))
                caged = best(args.runs, lambda c=command: cage.run(CageJob(c, ws.path, 300)))
                fresh = best(args.runs, lambda r=runner: r.run_commit(ws))
                print(f"{label:>7}: before {old:.3f}s | cage in place {caged:.3f}s "
                      f"({caged / old:.2f}x) | cage on a fresh checkout {fresh:.3f}s "
                      f"({fresh / old:.2f}x)")  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
