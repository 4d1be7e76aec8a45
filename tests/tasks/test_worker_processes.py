"""Real `ourobot worker` processes on a private redis-server: at-least-once, effect once.

The test jobs (`tests/jobs/jobs_for_tests.py`) reach the workers the way a plugin's would,
through OUROBOT_EXTRA_JOB_MODULES. Their "GitHub" is a file in the shared data directory.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from celery import Celery
from sqlalchemy import func, select

from app.controls.halt import HaltRegistry, installation_scope
from app.jobs.context import JobContext, effect_done
from app.jobs.registry import Job
from app.sandbox.server import SandboxServer
from app.settings import Settings
from app.store import Store
from app.store.schema import webhook_inbox
from app.webhooks.inbox import DONE, Delivery, Inbox
from tasks import CeleryDispatcher, create_celery
from tasks.dispatch import send_job
from tests.jobs.jobs_for_tests import GITHUB_LOG, STARTS_LOG, marker, read_lines
from tests.plugins.processes import (
    OUROBOT,
    REDIS_SERVER,
    RedisServer,
    WorkerProcess,
    wait_for,
    worker_env,
)
from tests.plugins.sandbox import SandboxHandle

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed"),
]

# Short limits so recovery is observable in seconds: visibility timeout = 2 x 6 s. Jobs here
# hold at most 2 s, well inside the 5 s soft limit even on a loaded machine.
TASK_TIME_LIMIT_S = 6


@dataclass
class Deployment:
    """A private Redis, a data directory, and the settings a worker and a sender share."""

    root: Path
    redis: RedisServer
    settings: Settings
    env: dict[str, str]

    @property
    def data(self) -> Path:
        return self.settings.data_dir

    def worker(self, name: str = "worker", *args: str) -> WorkerProcess:
        return WorkerProcess(self.env, self.root / f"{name}.log", *args)

    def starts(self, key: str) -> list[int]:
        """Process ids of every run of the job keyed `key`."""
        lines = read_lines(self.data / STARTS_LOG)
        return [int(line.split()[1]) for line in lines if line.split()[0] == key]

    def effects(self, key: str) -> int:
        return read_lines(self.data / GITHUB_LOG).count(marker(key))


def deploy(root: Path, github_url: str = "https://api.github.invalid") -> Deployment:
    redis = RedisServer(root / "redis")
    redis.start()
    settings_env = {
        "OUROBOT_REDIS_URL": redis.url,
        "OUROBOT_DATA_DIR": str(root / "data"),
        "OUROBOT_GITHUB_API_URL": github_url,
        "OUROBOT_EXTRA_JOB_MODULES": "tests.jobs.jobs_for_tests",
        "OUROBOT_TASK_TIME_LIMIT_S": str(TASK_TIME_LIMIT_S),
        "OUROBOT_SWEEP_INTERVAL_S": "1",
        "OUROBOT_SWEEP_AFTER_S": "2",
    }
    settings = Settings(
        redis_url=redis.url,
        data_dir=root / "data",
        database_url=None,
        github_api_url=github_url,
        extra_job_modules=("tests.jobs.jobs_for_tests",),
        task_time_limit_s=TASK_TIME_LIMIT_S,
    )
    Store.open(settings).migrate()
    return Deployment(root, redis, settings, worker_env(settings_env, root))


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, sandbox_server: SandboxServer
) -> Iterator[tuple[Deployment, WorkerProcess, Celery]]:
    """One deployment and one worker (concurrency 2) for the tests that do not restart it,
    talking to the session's GitHub sandbox (each test's `sandbox` resets its state)."""
    deployment = deploy(tmp_path_factory.mktemp("shared"), sandbox_server.url)
    worker = deployment.worker("worker", "--concurrency", "2", "--no-beat")
    worker.start()
    sender = create_celery(deployment.settings)
    try:
        yield deployment, worker, sender
    finally:
        worker.stop()
        sender.close()
        deployment.redis.stop()


def test_a_job_enqueued_twice_has_one_effect(
    shared: tuple[Deployment, WorkerProcess, Celery],
) -> None:
    deployment, _, sender = shared
    for _ in range(2):
        send_job(sender, Job("tests.post_once", {"key": "twice"}))
    wait_for(lambda: len(deployment.starts("twice")) == 2, 15, "both runs")
    wait_for(lambda: deployment.effects("twice") == 1, 10, "the effect")
    time.sleep(0.5)
    assert deployment.effects("twice") == 1


def test_a_pool_process_killed_mid_task_runs_the_task_again(
    shared: tuple[Deployment, WorkerProcess, Celery],
) -> None:
    deployment, worker, sender = shared
    send_job(sender, Job("tests.post_once", {"key": "killed", "hold_s": 2}))
    wait_for(lambda: len(deployment.starts("killed")) == 1, 15, "the first run")
    os.kill(deployment.starts("killed")[0], signal.SIGKILL)
    wait_for(lambda: deployment.effects("killed") == 1, 20, "the rerun's effect")
    assert len(deployment.starts("killed")) == 2
    assert "WorkerLostError" in worker.log() or "SIGKILL" in worker.log()


def test_a_crash_between_the_github_write_and_the_record_still_acts_once(
    shared: tuple[Deployment, WorkerProcess, Celery],
) -> None:
    deployment, _, sender = shared
    send_job(sender, Job("tests.post_once", {"key": "torn", "die_after_write": True}))
    # The first run writes, then dies holding the effect lease; the rerun waits for the lease
    # (EffectBusy -> retry), finds the marker on "GitHub", and records the effect.
    wait_for(lambda: (deployment.data / "died-torn").exists(), 15, "the crash")
    store = Store.open(deployment.settings)
    try:
        ctx = JobContext.from_settings(deployment.settings, store=store)
        wait_for(lambda: effect_done(ctx, "tests:torn"), 30, "the effect record")
    finally:
        store.close()
    assert len(deployment.starts("torn")) >= 2
    assert deployment.effects("torn") == 1


def test_a_halted_installation_stops_queued_jobs_without_retry(
    shared: tuple[Deployment, WorkerProcess, Celery],
) -> None:
    deployment, worker, sender = shared
    store = Store.open(deployment.settings)
    try:
        HaltRegistry(store).set(installation_scope(77), reason="panic", set_by="admin")
        send_job(sender, Job("tests.post_once", {"key": "halted", "installation_id": 77}))
        # Acknowledged as done ("halted"), not failed and not retried.
        finished = re.compile(r"succeeded in [0-9.]+s: 'halted'")
        wait_for(lambda: finished.search(worker.log()) is not None, 15, "the halted job")
    finally:
        HaltRegistry(store).clear(installation_scope(77))
        store.close()
    assert deployment.starts("halted") == []


def test_a_rate_limited_job_is_retried_after_retry_after(
    shared: tuple[Deployment, WorkerProcess, Celery], sandbox: SandboxHandle
) -> None:
    deployment, _, sender = shared
    repo = sandbox.create_repo(private=False)
    path = f"/repos/{repo.full_name}"
    # Faults fire in the order they were added, each once: a 429, then a 502, then the answer.
    sandbox.control.add_fault("429", method="GET", path=f"^{path}$", retry_after_s=2)
    sandbox.control.add_fault("502", method="GET", path=f"^{path}$")
    send_job(sender, Job("tests.call_github", {"key": "limited", "path": path}))
    wait_for(lambda: deployment.effects("limited") == 1, 30, "the job to get through")
    calls = sandbox.requests("GET", path)
    assert [call["status"] for call in calls] == [429, 502, 200]
    assert calls[1]["t"] - calls[0]["t"] >= 2.0  # retry-after honoured
    assert calls[2]["t"] - calls[1]["t"] >= 1.9  # second retry backs off 4 s x jitter 0.5..1


def test_a_worker_killed_outright_runs_its_task_after_restart(tmp_path: Path) -> None:
    deployment = deploy(tmp_path)
    worker = deployment.worker("worker", "--concurrency", "1", "--no-beat")
    sender = create_celery(deployment.settings)
    try:
        worker.start()
        send_job(sender, Job("tests.post_once", {"key": "outright", "hold_s": 2}))
        wait_for(lambda: len(deployment.starts("outright")) == 1, 15, "the first run")
        worker.kill()  # main process, pool and all: nobody rejects the message
        assert deployment.effects("outright") == 0
        worker.start()
        # Redis hands the unacknowledged message out again after the visibility timeout.
        wait_for(lambda: deployment.effects("outright") == 1, 30, "the rerun after restart")
        assert len(deployment.starts("outright")) == 2
    finally:
        worker.stop()
        sender.close()
        deployment.redis.stop()


def inbox_done(store: Store) -> int:
    with store.read_session() as session:
        count: int = session.execute(
            select(func.count()).where(webhook_inbox.c.state == DONE)
        ).scalar_one()
    return count


def test_redis_restarted_while_deliveries_arrive_loses_none(tmp_path: Path) -> None:
    deployment = deploy(tmp_path)
    worker = deployment.worker("worker", "--concurrency", "2", "--beat")
    sender = create_celery(deployment.settings)
    dispatcher = CeleryDispatcher(sender)
    store = Store.open(deployment.settings)
    inbox = Inbox(store)
    total = 24
    try:
        worker.start()
        for n in range(total):
            if n == 8:
                deployment.redis.stop()  # queued messages die with it (no persistence)
            if n == 16:
                deployment.redis.start()
            body = json.dumps({"zen": f"delivery {n}"}).encode()
            row_id = inbox.record(Delivery(f"guid-{n}", "ping", "", None, body))
            assert row_id is not None
            dispatcher.submit(row_id)  # never raises, even while Redis is down
            time.sleep(0.05)
        # A liveness bound, not a speed claim: after the restart, the worker and beat reconnect
        # on Celery's growing backoff, which a busy machine stretches further.
        wait_for(lambda: inbox_done(store) == total, 90, f"all {total} deliveries done")
        assert "re-submitted" in worker.log()  # the sweeper, not luck, recovered them
    finally:
        worker.stop()
        sender.close()
        store.close()
        deployment.redis.stop()


def test_the_worker_refuses_to_start_without_redis(tmp_path: Path) -> None:
    env = worker_env({"OUROBOT_DATA_DIR": str(tmp_path)}, tmp_path)
    done = subprocess.run(
        [str(OUROBOT), "worker"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "OUROBOT_REDIS_URL is not set" in done.stderr
