"""A real `ourobot serve` process on a free loopback port, for tests that need the real thing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

# The console script installed next to this interpreter; OUROBOT_TEST_CLI points elsewhere
# (an installed build, for instance).
OUROBOT = os.environ.get("OUROBOT_TEST_CLI") or str(Path(sys.executable).with_name("ourobot"))
STARTUP_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve_env(data_dir: Path, **variables: str) -> dict[str, str]:
    """The environment without the developer's OUROBOT_* settings, plus `variables`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OUROBOT_")}
    env["OUROBOT_DATA_DIR"] = str(data_dir)
    env.update(variables)
    return env


def run_ourobot(
    args: list[str], env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [OUROBOT, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


class ServeProcess:
    """`ourobot serve --port <free>`; `start()` returns once /healthz answers 200."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> ServeProcess:
        command = [OUROBOT, "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                command, env=self._env, stdout=log, stderr=subprocess.STDOUT
            )
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ourobot serve exited {self.process.returncode}: {self.log()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"ourobot serve did not become healthy: {self.log()}")

    @property
    def data_dir(self) -> Path:
        return Path(self._env["OUROBOT_DATA_DIR"])

    @property
    def process(self) -> subprocess.Popen[bytes]:
        assert self._process is not None, "not started"
        return self._process

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        """Send `sig` and wait; the exit code (a hung server is killed and fails the test)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"ourobot serve ignored signal {sig}") from None
        return self.process.returncode

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_once_it_has(self, text: str, timeout: float = 10) -> str:
        """The log once `text` is in it (the inbox child logs in batches, after the 202)."""
        deadline = time.monotonic() + timeout
        while text not in (log := self.log()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return log
