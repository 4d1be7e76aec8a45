"""The scout in a real `ourobot worker` (its Celery beat included) on a private Redis, against
the sandbox and the scripted model servers: the schedule runs only where a repository asks,
and a GitHub 502 halfway is retried by the worker without a duplicate."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.jobs.scout.conftest import CONFIG, FILES, FOUR, SCOUT, answer
from tests.plugins.processes import REDIS_SERVER, RedisServer, WorkerProcess, worker_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed"),
]


def proposed(sandbox, repo) -> list:
    client = sandbox.github_user(repo.owner)
    listed = client.rest.issues.list_for_repo(
        repo.owner, repo.name, state="all", labels="ourobot:proposed", per_page=100
    )
    return sorted(listed.parsed_data, key=lambda i: i.number)


def wait_for_proposals(sandbox, repo, count: int, timeout_s: float, log) -> list:
    deadline = time.monotonic() + timeout_s
    found: list = []
    while time.monotonic() < deadline:
        found = proposed(sandbox, repo)
        if len(found) >= count:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{len(found)} of {count} proposals after {timeout_s}s:\n{log()}")


def test_the_beat_scouts_the_configured_repository_only_and_a_502_leaves_no_duplicate(
    sandbox, fake_models, tmp_path: Path
):
    scheduled_files = {**FILES, ".github/ourobot.yml": CONFIG + "scout:\n  every_hours: 1\n"}
    scheduled = sandbox.create_repo("octo", "scheduled", files=scheduled_files)
    plain = sandbox.create_repo("octo", "plain", files=FILES)
    fake_models.script(SCOUT, answer(*FOUR))
    # The third issue fails past githubkit's own retries: the task fails, the worker retries.
    path = r"^/repos/octo/scheduled/issues$"
    sandbox.control.add_fault("latency", method="POST", path=path, times=2)
    sandbox.control.add_fault("502", method="POST", path=path, times=4)

    redis = RedisServer(tmp_path / "redis")
    redis.start()
    env = worker_env(
        {
            "OUROBOT_APP_ID": str(sandbox.app.id),
            "OUROBOT_PRIVATE_KEY": sandbox.app.private_key_pem,
            "OUROBOT_GITHUB_API_URL": sandbox.url,
            "OUROBOT_WEBHOOK_SECRET": "worker-secret",
            "OUROBOT_REDIS_URL": redis.url,
            "OUROBOT_DATA_DIR": str(tmp_path / "data"),
            "OUROBOT_SCOUT_SWEEP_INTERVAL_S": "1",
            "OUROBOT_TASK_TIME_LIMIT_S": "60",
            **fake_models.env(),
        },
        tmp_path / "home",
    )
    (tmp_path / "home").mkdir()
    worker = WorkerProcess(env, tmp_path / "worker.log", "--concurrency", "2")
    worker.start()
    try:
        opened = wait_for_proposals(sandbox, scheduled, 4, 90, worker.log)
        time.sleep(3)  # more sweeps go by: the slot has had its run
        assert [i.title for i in proposed(sandbox, scheduled)] == [i.title for i in opened]
    finally:
        worker.stop()
        redis.stop()
    assert [i.title for i in opened] == [
        "Add a multiply operation to calc",
        "Document the operations in the README",
        "Type-check the package in CI",
        "Reject booleans in add",
    ]
    assert proposed(sandbox, plain) == []
    assert len(fake_models.requests_for(SCOUT)) == 1
    fired = {f["kind"]: f["fired"] for f in sandbox.control.stats()["faults"]}
    assert fired == {"latency": 2, "502": 4}
    log = worker.log()
    assert "job scout: RequestFailed" in log and "; retry 1 in" in log  # the worker's retry
