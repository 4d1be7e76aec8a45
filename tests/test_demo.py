"""`ourobot demo` end to end, as `make demo` runs it: real processes, real git, real HTTP."""

import subprocess
import sys
from pathlib import Path

import pytest

OUROBOT = Path(sys.executable).parent / "ourobot"


@pytest.mark.slow
def test_demo_prints_each_step_and_exits_0(tmp_path):
    proc = subprocess.run(
        [str(OUROBOT), "demo", "--keep", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    titles = [line for line in lines if line.startswith("[")]
    assert len(titles) >= 8
    assert any("clone over git smart HTTP" in t for t in titles)
    assert any("pull_request.opened" in t for t in titles)
    assert "signature verified=True" in proc.stdout
    assert lines[-1].startswith("demo finished")
    # the token used for the clone was never written into the clone's config
    config = (tmp_path / "demo" / "clone" / ".git" / "config").read_text()
    assert "extraheader" not in config.lower()
    assert "token" not in config.lower()
