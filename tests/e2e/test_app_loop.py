"""The App as deployed: the sandbox delivers signed webhooks to a real `ourobot serve`, which
records them and hands them to a real `ourobot worker` over a real Redis; replies land back on
the sandbox. No part is faked but GitHub itself, at its HTTP boundary."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.jobs.registry import Job
from app.settings import load_settings
from tasks.celery_app import create_celery
from tasks.dispatch import send_job
from tests.e2e import jobs_for_e2e  # noqa: F401 - registers the job this process sends
from tests.plugins.processes import REDIS_SERVER, RedisServer, WorkerProcess, worker_env
from tests.plugins.sandbox import SandboxHandle, SeededRepo
from tests.webhooks.serve_process import ServeProcess

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed"),
]
SECRET = "e2e-webhook-secret"


@dataclass
class Deployment:
    sandbox: SandboxHandle
    repo: SeededRepo
    serve: ServeProcess
    worker: WorkerProcess
    env: dict[str, str]
    clients: dict

    def user(self, login: str):
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    def issue(self, title: str = "ticket") -> int:
        made = self.user(self.repo.owner).rest.issues.create(
            self.repo.owner, self.repo.name, title=title
        )
        return made.parsed_data.number

    def comment(self, login: str, number: int, body: str) -> int:
        made = self.user(login).rest.issues.create_comment(
            self.repo.owner, self.repo.name, number, body=body
        )
        return made.parsed_data.id

    def bot_comments(self, number: int) -> list:
        listed = self.user(self.repo.owner).rest.issues.list_comments(
            self.repo.owner, self.repo.name, number, per_page=100
        )
        return [c for c in listed.parsed_data if c.user.login == self.sandbox.app.bot_login]

    def wait_for_bot_comments(self, number: int, count: int, timeout_s: float = 30) -> list:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.bot_comments(number)
            if len(found) >= count:
                return found
            time.sleep(0.2)
        raise AssertionError(f"expected {count} bot comment(s) on #{number}, saw {found}")


@pytest.fixture
def deployment(sandbox: SandboxHandle, tmp_path: Path) -> Iterator[Deployment]:
    redis_server = RedisServer(tmp_path / "redis")
    redis_server.start()
    repo = sandbox.create_repo()
    for login, level in [("admin1", "admin"), ("writer", "write"), ("reader", "read")]:
        sandbox.create_user(login)
        sandbox.control.set_permission(repo.owner, repo.name, login, level)
    env = worker_env(
        {
            "OUROBOT_APP_ID": str(sandbox.app.id),
            "OUROBOT_PRIVATE_KEY": sandbox.app.private_key_pem,
            "OUROBOT_GITHUB_API_URL": sandbox.url,
            "OUROBOT_WEBHOOK_SECRET": SECRET,
            "OUROBOT_REDIS_URL": redis_server.url,
            "OUROBOT_DATA_DIR": str(tmp_path / "data"),
            "OUROBOT_EXTRA_JOB_MODULES": "tests.e2e.jobs_for_e2e",
        },
        tmp_path / "home",
    )
    (tmp_path / "home").mkdir()
    serve = ServeProcess(env, tmp_path / "serve.log").start()
    worker = WorkerProcess(env, tmp_path / "worker.log", "--concurrency", "2")
    worker.start()
    sandbox.control.set_webhook(f"{serve.url}/api/github/webhooks", SECRET)
    yield Deployment(sandbox, repo, serve, worker, env, {})
    sandbox.control.set_webhook(None)
    worker.stop()
    serve.stop()
    redis_server.stop()


def test_a_command_travels_webhook_to_worker_to_reply(deployment):
    number = deployment.issue()
    deployment.comment("writer", number, "/ourobot help")
    [reply] = deployment.wait_for_bot_comments(number, 1)
    assert "ourobot commands" in reply.body
    deployment.comment("reader", number, "/ourobot implement")
    replies = deployment.wait_for_bot_comments(number, 2)
    assert "needs **write**" in replies[-1].body


def test_redelivery_has_one_effect(deployment):
    number = deployment.issue()
    deployment.comment("writer", number, "/ourobot status")
    deployment.wait_for_bot_comments(number, 1)
    app = deployment.sandbox.github_app()
    deployment.clients["app"] = app
    sent = [
        d for d in deployment.sandbox.control.deliveries()
        if d["event"] == "issue_comment" and d["action"] == "created"
    ]  # fmt: skip
    app.rest.apps.redeliver_webhook_delivery(sent[-1]["id"])
    time.sleep(3)
    assert len(deployment.bot_comments(number)) == 1


def test_panic_stops_work_in_flight_and_resume_restores(deployment, capsys):
    sandbox, repo = deployment.sandbox, deployment.repo
    number = deployment.issue("busy")
    settings = load_settings(env={}, redis_url=deployment.env["OUROBOT_REDIS_URL"])
    send_job(
        create_celery(settings),
        Job(
            "e2e.busy_writer",
            {
                "installation_id": repo.installation_id,
                "repo": repo.full_name,
                "number": number,
                "writes": 300,
            },
        ),
    )
    deployment.wait_for_bot_comments(number, 3)  # the job is writing
    control = deployment.issue("control room")  # the panic's own acknowledgement goes here
    asked = time.time()
    deployment.comment("admin1", control, "/ourobot panic")
    acknowledged = None
    deadline = time.monotonic() + 20
    while acknowledged is None and time.monotonic() < deadline:
        for delivery in sandbox.control.deliveries():
            body = (delivery["payload"].get("comment") or {}).get("body", "")
            if "/ourobot panic" in body and delivery.get("status_code") == 202:
                acknowledged = delivery["delivered_at"]
        time.sleep(0.05)
    assert acknowledged is not None, "the panic delivery was not acknowledged"
    time.sleep(2)  # give the job every chance to write again
    writes = [
        entry for entry in sandbox.control.stats()["log"]
        if entry["identity"] and entry["identity"].startswith("installation:")
        and entry["method"] == "POST" and entry["path"].endswith(f"/issues/{number}/comments")
        and 200 <= entry["status"] < 300
    ]  # fmt: skip
    late = [w for w in writes if w["t"] > acknowledged + 0.05]
    busy = [w for w in writes if w["t"] <= acknowledged]
    with capsys.disabled():
        print(
            f"\n[panic] acknowledged {acknowledged - asked:.3f}s after the comment; "
            f"{len(busy)} writes before, {len(late)} after"
        )
    assert late == []
    assert len(busy) < 300  # the job was stopped, not finished
    halted = [c for c in deployment.bot_comments(control) if "halted" in c.body]
    assert len(halted) == 1
    deployment.comment("admin1", control, "/ourobot resume")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any("Halt lifted" in c.body for c in deployment.bot_comments(control)):
            break
        time.sleep(0.2)
    other = deployment.issue("after resume")
    deployment.comment("writer", other, "/ourobot help")
    [reply] = deployment.wait_for_bot_comments(other, 1)
    assert "ourobot commands" in reply.body
