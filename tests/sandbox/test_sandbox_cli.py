"""`ourobot sandbox` runs the server in the foreground, says where it is, and stops cleanly."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow


def test_sandbox_command_serves_until_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "sandbox", "--port", "0", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        url = re.search(r"listening on (http://127\.0\.0\.1:\d+)", lines[0])
        token = re.search(r"admin token: (\S+)", lines[1])
        key = re.search(r"App private key: (\S+)", lines[3])
        assert url and token and key, lines
        assert "App id:" in lines[2]
        assert Path(key.group(1)).read_text().startswith("-----BEGIN RSA PRIVATE KEY-----")
        info = httpx.get(
            f"{url.group(1)}/_sandbox/app",
            headers={"Authorization": f"Bearer {token.group(1)}"},
        )
        assert info.status_code == 200
        assert info.json()["private_key_path"] == key.group(1)
        assert httpx.get(f"{url.group(1)}/_sandbox/app").status_code == 401
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sandbox_command_rejects_a_bad_port() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "sandbox", "--port", "70000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--port" in done.stderr
