"""`ourobot beat`: the scheduler alone sends the periodic sweep to the queue the workers read,
on its interval, and stops on SIGTERM (a private redis-server, a real process)."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.plugins.processes import OUROBOT, REPO, RedisServer, wait_for, worker_env

pytestmark = pytest.mark.slow


def test_beat_sends_the_sweep_on_schedule_and_stops_on_sigterm(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    env = worker_env(
        {
            "OUROBOT_REDIS_URL": redis_server.url,
            "OUROBOT_DATA_DIR": str(tmp_path / "data"),
            "OUROBOT_SWEEP_INTERVAL_S": "0.5",
        },
        tmp_path,
    )
    log = (tmp_path / "beat.log").open("wb")
    beat = subprocess.Popen(
        [str(OUROBOT), "beat"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
    )
    client = redis_server.client()
    try:
        # Celery's Redis transport keeps a queue as a list named after it.
        wait_for(lambda: client.llen("ourobot") >= 2, 30, "two sweeps queued by beat")
    finally:
        beat.send_signal(signal.SIGTERM)
        code = beat.wait(20)
        log.close()
    text = (tmp_path / "beat.log").read_text()
    assert "Sending due task sweep-overdue-inbox (ourobot.sweep)" in text
    assert code == 0, text
    assert "Traceback" not in text
