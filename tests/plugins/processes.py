"""Real processes for the tests: a private `redis-server` and `ourobot worker`.

Tests never touch the machine's Redis on 6379: each `RedisServer` runs on a free port in its
own directory, and can be stopped and started again on the same port (an outage).

Fixtures:
  redis_server   a started `RedisServer` of the test's own (skips when redis-server is missing)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
import redis

REPO = Path(__file__).resolve().parents[2]
OUROBOT = Path(sys.executable).with_name("ourobot")
REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.05)


class RedisServer:
    def __init__(self, directory: Path, *, appendonly: bool = False) -> None:
        self.directory = directory
        self.appendonly = appendonly
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=2)

    def start(self) -> None:
        assert REDIS_SERVER is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [
            REDIS_SERVER,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
        ]  # fmt: skip
        log = (self.directory / "redis.log").open("ab")
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        wait_for(self._answers, 10, f"redis-server on port {self.port}")

    def _answers(self) -> bool:
        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        """Kill it outright: queued messages without persistence are gone, like a crash."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None


def worker_env(settings_env: Mapping[str, str], home: Path) -> dict[str, str]:
    """A clean environment: nothing OUROBOT_* leaks in from the developer's shell."""
    python_path = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(python_path),
        "PYTHONUNBUFFERED": "1",
        **settings_env,
    }


class WorkerProcess:
    """`ourobot worker` in its own process group, logging to a file."""

    def __init__(self, env: Mapping[str, str], log_path: Path, *args: str) -> None:
        self.env = dict(env)
        self.log_path = log_path
        self.args = args or ("--concurrency", "1")
        self.process: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    def start(self, timeout_s: float = 30) -> None:
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [str(OUROBOT), "worker", *self.args],
                env=self.env,
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(self._ready, timeout_s, f"the worker to be ready (log: {self.log_path})")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[self._log_offset :]

    def _ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"worker exited with {self.process.returncode}:\n{self.log()}")
        return " ready." in self.log()

    def kill(self) -> None:
        """SIGKILL the whole worker: main process, pool children and beat."""
        if self.process is not None:
            _kill_group(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        _kill_group(self.process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(15)
        self.kill()


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()
