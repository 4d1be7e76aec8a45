"""`ourobot demo` end to end, as `make demo` runs it: real processes, real git, real HTTP."""

import subprocess
import sys
from pathlib import Path

import pytest

OUROBOT = Path(sys.executable).parent / "ourobot"


@pytest.mark.slow
def test_demo_runs_the_loop_and_exits_0(tmp_path):
    proc = subprocess.run(
        [str(OUROBOT), "demo", "--keep", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    titles = [line for line in out.splitlines() if line.startswith("[")]
    assert len(titles) >= 12
    assert "verified and recorded pull_request.opened" in out
    # the clean pull request passes both checks; the destructive rewrite is refused by the
    # guards, and the panel (which approves everything) is never asked about it: cheap first
    assert out.count("success: No violations") == 1
    assert "failure: 2 violation(s): deletions" in out
    assert out.count("success: Review passed: 2 of 2 approved") == 1
    assert "failure: Not reviewed: the guards failed on" in out
    assert "model requests for this pull request: 0" in out
    assert "halted" in out
    assert "Halt lifted" in out
    assert out.splitlines()[-1].startswith("demo finished")
    log = (tmp_path / "demo" / "ourobot-serve.log").read_text()
    assert "Traceback" not in log
    for clone in (tmp_path / "demo").glob("ourobot-issue-*"):
        config = (clone / ".git" / "config").read_text().lower()
        assert "extraheader" not in config
        assert "authorization" not in config
