"""The loop as deployed: the sandbox delivers signed webhooks to a real `ourobot serve`, which
hands them to a real `ourobot worker` over a real Redis (or runs them in its embedded runner);
the cycle runs in the worker process with real git, bubblewrap and the fake model servers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reviewers.fake_servers import FakeModels, delayed, edits_reply
from tests.jobs.loop.conftest import APPROVE, FIX, IMPLEMENTER, WITH_TEST, A, B, project_files
from tests.plugins.processes import REDIS_SERVER, RedisServer, WorkerProcess, worker_env
from tests.plugins.sandbox import SandboxHandle, SeededRepo
from tests.webhooks.serve_process import ServeProcess

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed"),
]
SECRET = "loop-e2e-webhook-secret"
# Short enough that a killed worker's task is handed out again within a minute (visibility
# timeout = 2 x this), long enough for one cycle on a loaded machine.
TASK_TIME_LIMIT_S = 30


@dataclass
class Deployed:
    sandbox: SandboxHandle
    repo: SeededRepo
    serve: ServeProcess
    worker: WorkerProcess | None
    clients: dict[str, Any] = field(default_factory=dict)

    def user(self, login: str) -> Any:
        # githubkit's namespaces hold their client weakly: keep the client.
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    def labeled_issue(self, by: str = "writer") -> int:
        owner = self.user(self.repo.owner)
        number = int(
            owner.rest.issues.create(
                "octo", "demo", title="add() subtracts", body="Make add return a + b."
            ).parsed_data.number
        )
        self.user(by).rest.issues.add_labels("octo", "demo", number, labels=["ourobot:ticket"])
        return number

    def pulls(self) -> list[Any]:
        owner = self.user(self.repo.owner)
        return list(owner.rest.pulls.list("octo", "demo", state="all").parsed_data)

    def bot_comments(self, number: int) -> list[Any]:
        owner = self.user(self.repo.owner)
        listed = owner.rest.issues.list_comments("octo", "demo", number).parsed_data
        return [c for c in listed if c.user.login == self.sandbox.app.bot_login]

    def checks(self, sha: str) -> dict[str, str | None]:
        owner = self.user(self.repo.owner)
        runs = owner.rest.checks.list_for_ref("octo", "demo", sha, filter_="all").parsed_data
        return {run.name: run.conclusion for run in runs.check_runs}

    def branches(self) -> list[str]:
        out = self.sandbox.git(
            "ls-remote", "--heads", self.repo.clone_url, token=self.repo.owner_token
        ).stdout
        return [line.split("refs/heads/", 1)[1] for line in out.splitlines() if line]


def wait(predicate: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def deploy(
    sandbox: SandboxHandle, models: FakeModels, tmp_path: Path, *, embedded: bool
) -> Iterator[Deployed]:
    repo = sandbox.create_repo("octo", "demo", files=project_files())
    sandbox.create_user("writer")
    sandbox.control.set_permission("octo", "demo", "writer", "write")
    redis_server = None
    variables = {
        "OUROBOT_APP_ID": str(sandbox.app.id),
        "OUROBOT_PRIVATE_KEY": sandbox.app.private_key_pem,
        "OUROBOT_GITHUB_API_URL": sandbox.url,
        "OUROBOT_WEBHOOK_SECRET": SECRET,
        "OUROBOT_DATA_DIR": str(tmp_path / "data"),
        "OUROBOT_TASK_TIME_LIMIT_S": str(TASK_TIME_LIMIT_S),
        **models.env(),
    }
    if not embedded:
        redis_server = RedisServer(tmp_path / "redis")
        redis_server.start()
        variables["OUROBOT_REDIS_URL"] = redis_server.url
    (tmp_path / "home").mkdir()
    env = worker_env(variables, tmp_path / "home")
    serve = ServeProcess(env, tmp_path / "serve.log").start()
    worker = None
    if not embedded:
        worker = WorkerProcess(env, tmp_path / "worker.log", "--concurrency", "2", "--no-beat")
        worker.start()
    sandbox.control.set_webhook(f"{serve.url}/api/github/webhooks", SECRET)
    try:
        yield Deployed(sandbox, repo, serve, worker)
    finally:
        sandbox.control.set_webhook(None)
        if worker is not None:
            worker.stop()
        serve.stop()
        if redis_server is not None:
            redis_server.stop()


@pytest.fixture
def celery_loop(sandbox, fake_models, tmp_path) -> Iterator[Deployed]:
    yield from deploy(sandbox, fake_models, tmp_path, embedded=False)


@pytest.fixture
def embedded_loop(sandbox, fake_models, tmp_path) -> Iterator[Deployed]:
    yield from deploy(sandbox, fake_models, tmp_path, embedded=True)


def _approving(models: FakeModels) -> None:
    models.default(A, APPROVE)
    models.default(B, APPROVE)


@pytest.mark.parametrize("where", ["celery_loop", "embedded_loop"])
def test_a_labeled_ticket_becomes_a_pull_request_with_checks_on_its_head(where, request):
    loop: Deployed = request.getfixturevalue(where)
    models: FakeModels = request.getfixturevalue("fake_models")
    models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
    _approving(models)
    number = loop.labeled_issue()
    [pull] = wait(loop.pulls, 120, "the pull request")
    assert pull.head.ref == f"ourobot/issue-{number}"
    checks = wait(
        lambda: (c := loop.checks(pull.head.sha)).get("ourobot/review") and c, 120, "the checks"
    )
    assert checks["ourobot/guards"] == "success" and checks["ourobot/review"] == "success"


def test_a_worker_killed_mid_cycle_leaves_one_branch_one_pull_and_one_status(
    celery_loop: Deployed, fake_models: FakeModels
):
    # The first attempt waits on the model long enough to be killed; the retry gets the change
    # and then (the plugin's default) says DONE.
    fake_models.script(
        IMPLEMENTER, delayed(edits_reply(FIX, WITH_TEST), 8.0), edits_reply(FIX, WITH_TEST)
    )
    _approving(fake_models)
    number = celery_loop.labeled_issue()
    wait(lambda: fake_models.requests_for(IMPLEMENTER), 60, "the cycle's first model call")
    assert celery_loop.worker is not None
    celery_loop.worker.kill()
    celery_loop.worker.start()
    [pull] = wait(celery_loop.pulls, 180, "the pull request after the retry")
    time.sleep(3)  # anything the retry might still post twice
    assert len(celery_loop.pulls()) == 1
    assert [b for b in celery_loop.branches() if b.startswith("ourobot/")] == [pull.head.ref]
    [status] = celery_loop.bot_comments(number)
    assert f"Opened pull request #{pull.number}" in status.body
    # The killed call; the retry's change, then DONE.
    assert len(fake_models.requests_for(IMPLEMENTER)) == 3
