"""`ourobot serve` in Redis mode with its Redis stopped: /healthz says 503 naming Redis, and a
SIGTERM still stops it cleanly, without an error in the log (a private redis-server, killed)."""

from __future__ import annotations

import signal

import httpx
import pytest

from tests.plugins.processes import RedisServer
from tests.webhooks.serve_process import ServeProcess, serve_env

pytestmark = pytest.mark.slow


def test_healthz_is_503_with_redis_stopped_and_shutdown_stays_quiet(
    tmp_path, redis_server: RedisServer
):
    env = serve_env(
        tmp_path / "data", OUROBOT_WEBHOOK_SECRET="s", OUROBOT_REDIS_URL=redis_server.url
    )
    served = ServeProcess(env, tmp_path / "serve.log").start()
    try:
        healthy = httpx.get(served.url + "/healthz", timeout=5)
        assert healthy.status_code == 200
        assert healthy.json()["checks"] == {"inbox_process": "ok", "store": "ok", "redis": "ok"}

        redis_server.stop()
        down = httpx.get(served.url + "/healthz", timeout=5)
        assert down.status_code == 503
        assert down.json()["status"] == "unavailable"
        assert down.json()["checks"] == {
            "inbox_process": "ok",
            "store": "ok",
            "redis": "unavailable",
        }
    finally:
        code = served.stop(signal.SIGTERM)
    assert code == 0
    log = served.log()
    assert "Traceback" not in log
    # The health check's own line says why; nothing else is an error, shutdown included.
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert errors and all("health check: Redis unavailable" in line for line in errors), errors
    assert "ourobot serve: stopped" in log
