"""The cage run by an unprivileged user (as a deployment's `ourobot` user would): the same
sandbox without root, its bounds enforced by rlimits where no cgroup may be created, and each
hit still named. The harness runs as uid 65534 with the system's Python (the suite's own
virtualenv may sit under /root, which that user cannot read); it needs nothing but the
standard library."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = "65534"

HARNESS = """
import json, sys
from pathlib import Path
from app.workspace.cage.entry import Cage, CageJob
from app.workspace.cage.limits import Enforcement, Limits, MiB
from app.workspace.cage.toolchain import Toolchain

project = Path(sys.argv[1])
limits = Limits(processes=64, memory_bytes=256 * MiB, tmp_bytes=64 * MiB, disk_bytes=128 * MiB)
cage = Cage(mode="required", bwrap=sys.argv[2], toolchain=Toolchain.resolve("/usr/bin:/bin"),
            limits=limits)
probes = {
    "caps": "grep CapEff /proc/self/status; cat /proc/1/environ | wc -c; id -u",
    "forks": "python3 -c 'import os, time\\nfor _ in range(2000):\\n try: os.fork()\\n "
             "except OSError: pass\\ntime.sleep(30)'",
    "memory": "python3 -c 'x = bytearray(2 * 1024 ** 3)'",
    "tmp": "head -c 100000000 /dev/zero > /tmp/fill; sleep 1",
}
out = {"how": cage.describe()}
for name, command in probes.items():
    run = cage.run(CageJob(command, project, timeout_s=30))
    out[name] = {"summary": run.summary(), "limit": run.limit, "tail": run.output_tail[-300:]}
print(json.dumps(out))
"""


@pytest.fixture
def nobody_home() -> Iterator[Path]:
    """A folder the unprivileged user owns, outside pytest's root-only temp folder."""
    home = Path(tempfile.mkdtemp(prefix="ourobot-nobody-"))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_an_unprivileged_harness_gets_the_same_cage_with_its_bounds_named(
    bwrap: str, nobody_home: Path
):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("switching to an unprivileged user needs root and setpriv (util-linux)")
    check = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info >= (3, 11))"],
                           capture_output=True, text=True)  # fmt: skip
    if check.stdout.strip() != "True":
        pytest.skip(f"{SYSTEM_PYTHON} (3.11+) is needed to run the harness as another user")
    home = nobody_home
    (home / "project").mkdir()
    (home / "tmp").mkdir()
    home.chmod(0o755)
    for path in (home, home / "project", home / "tmp"):
        os.chown(path, int(NOBODY), int(NOBODY))
    proc = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         SYSTEM_PYTHON, "-c", HARNESS, str(home / "project"), bwrap],
        capture_output=True, text=True, timeout=300, cwd=home,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TMPDIR": str(home / "tmp"),
             "HOME": str(home), "LANG": "C.UTF-8"},
    )  # fmt: skip
    if "cannot build a sandbox" in proc.stderr or "No permissions to creat" in proc.stderr:
        pytest.skip(f"bubblewrap cannot run unprivileged here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = report["caps"]["tail"].split()
    assert lines[:2] == ["CapEff:", "0000000000000000"] and lines[2] == "0"
    assert lines[3] == NOBODY
    assert report["forks"]["limit"] == "processes", report["forks"]
    assert report["memory"]["limit"] == "memory" or "MemoryError" in report["memory"]["tail"]
    assert report["tmp"]["limit"] == "tmp", report["tmp"]
    print(report["how"], file=sys.stderr)
