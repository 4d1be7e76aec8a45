"""A repository on the sandbox, the fake model servers, and ourobot's job parts in-process.

`rw` (review world) gives: the sandbox repo (config on main names two fake models), a JobContext
whose settings point the model keys at the fakes, a router with the review trigger, and helpers
to open a PR as ourobot or as a person, push to it, and read back check runs and reviews.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.controls.halt import HaltRegistry
from app.controls.ledger import Ledger
from app.github_client import GitHubClients, RetryPolicy
from app.handlers import review_triggers
from app.handlers.router import Router
from app.jobs.context import JobContext
from app.jobs.registry import Job, load_job_modules, registered_jobs
from app.settings import Settings, load_settings
from app.store import Store
from reviewers.fake_servers import FakeModels, Text
from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink

A = "anthropic:claude-a"
B = "openai:gpt-b"
APPROVE = Text("The change does what the ticket asks.\nVERDICT: APPROVE")
CANARY_FILE = "canary-in-a-repo-file-0f3c9e1d"
CANARY_ENV = "canary-in-the-worker-env-7b2a55"

CONFIG = f"""version: 1
project: {{name: demo, description: a tiny calculator}}
review:
  models: ["{A}", "{B}"]
  quorum: 2
  timeout_s: 20
guards:
  apply_to: bot
"""
BASE_FILES = {
    "README.md": "# demo\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "calc/settings.py": f'API_TOKEN = "{CANARY_FILE}"\n',
    ".github/ourobot.yml": CONFIG,
    ".github/ourobot/CONSTITUTION.md": "Every function has a docstring.\n",
}
DIVIDE = "\n\ndef divide(a: int, b: int) -> float:\n    return a / b\n"


@dataclass
class ReviewWorld:
    sandbox: SandboxHandle
    sink: WebhookSink
    models: FakeModels
    repo: SeededRepo
    settings: Settings
    store: Store
    ctx: JobContext
    router: Router
    work: Path
    clients: dict[str, Any] = field(default_factory=dict)

    # ---- people and the bot ------------------------------------------------------------------

    def user(self, login: str) -> Any:
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    @property
    def bot(self) -> Any:
        if "bot" not in self.clients:
            installation = self.repo.installation_id
            assert installation is not None
            self.clients["bot"] = self.sandbox.github_installation(installation)
        return self.clients["bot"]

    @property
    def ledger(self) -> Ledger:
        return Ledger(self.store)

    # ---- git ---------------------------------------------------------------------------------

    def push(
        self,
        branch: str,
        files: dict[str, str],
        *,
        start: str = "origin/main",
        guards: str | None = "success",
    ) -> str:
        """Commit `files` on `branch` (from `start`) and push it; the new head SHA. A head
        pushed to a branch other than main gets an `ourobot/guards` run by the App with the
        conclusion `guards` (None: none), as the guards job would post it: cheap first, the
        panel reviews a head only after the guards passed on it."""
        git, token = self.sandbox.git, self.repo.owner_token
        if not self.work.exists():
            git("clone", "-q", self.repo.clone_url, str(self.work), token=token)
        git("fetch", "-q", "origin", cwd=self.work, token=token)
        git("checkout", "-q", "-B", branch, start, cwd=self.work)
        for name, text in files.items():
            path = self.work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "-m", f"change {branch}", cwd=self.work)
        git("push", "-q", "-f", "origin", branch, cwd=self.work, token=token)
        head = git("rev-parse", "HEAD", cwd=self.work).stdout.strip()
        if guards is not None and branch != "main":
            self.post_guards(head, guards)
        return head

    def post_guards(self, sha: str, conclusion: str) -> None:
        """A completed `ourobot/guards` run on `sha` by ourobot's App."""
        self.bot.rest.checks.create(
            self.repo.owner,
            self.repo.name,
            data={
                "name": "ourobot/guards",
                "head_sha": sha,
                "status": "completed",
                "conclusion": conclusion,
                "output": {"title": f"Guards {conclusion}", "summary": "posted by the test"},
            },
        )

    def open_pull(
        self,
        files: dict[str, str],
        *,
        branch: str = "ourobot/issue-1",
        by: str = "bot",
        body: str = "Adds divide().",
        title: str = "Add divide",
        guards: str | None = "success",
    ) -> tuple[int, str, dict[str, Any]]:
        """Push a branch and open a PR as `by`; (number, head sha, opened webhook payload)."""
        head = self.push(branch, files, guards=guards)
        client = self.bot if by == "bot" else self.user(by)
        made = client.rest.pulls.create(
            self.repo.owner, self.repo.name, title=title, head=branch, base="main", body=body
        ).parsed_data
        payload = self.sink.wait_for_one(
            "pull_request", "opened", lambda d: d.payload["number"] == made.number
        ).payload
        return made.number, head, payload

    # ---- running -----------------------------------------------------------------------------

    def jobs_for(self, payload: dict[str, Any], action: str = "opened") -> list[Job]:
        return self.router.route("pull_request", action, payload, delivery_id="d-1")

    def run(self, job: Job) -> None:
        registered_jobs()[job.name](self.ctx, **job.kwargs)

    def run_in_thread(self, job: Job) -> tuple[threading.Thread, list[BaseException]]:
        errors: list[BaseException] = []

        def target() -> None:
            try:
                self.run(job)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread, errors

    # ---- reading back ------------------------------------------------------------------------

    def check_runs(self, sha: str) -> list[Any]:
        listed = self.user(self.repo.owner).rest.checks.list_for_ref(
            self.repo.owner, self.repo.name, sha, check_name="ourobot/review", filter_="all"
        )
        return list(listed.parsed_data.check_runs)

    def annotations(self, run_id: int) -> list[Any]:
        listed = self.user(self.repo.owner).rest.checks.list_annotations(
            self.repo.owner, self.repo.name, run_id
        )
        return list(listed.parsed_data)

    def reviews(self, number: int) -> list[Any]:
        listed = self.user(self.repo.owner).rest.pulls.list_reviews(
            self.repo.owner, self.repo.name, number
        )
        return list(listed.parsed_data)

    def review_comments(self, number: int) -> list[Any]:
        listed = self.user(self.repo.owner).rest.pulls.list_review_comments(
            self.repo.owner, self.repo.name, number
        )
        return list(listed.parsed_data)

    def prompts(self) -> list[str]:
        """Every request body any fake model received, raw."""
        return [request.raw.decode("utf-8", "replace") for request in self.models.requests]


def review_settings(
    sandbox: SandboxHandle, models: FakeModels, tmp_path: Path, **overrides: Any
) -> Settings:
    env = models.env()
    return load_settings(
        env={},
        app_id=sandbox.app.id,
        private_key=sandbox.app.private_key_pem,
        github_api_url=sandbox.url,
        data_dir=tmp_path / "ourobot-data",
        webhook_secret="s3cret-webhook-value",
        anthropic_api_key=env["ANTHROPIC_API_KEY"],
        anthropic_base_url=env["ANTHROPIC_BASE_URL"],
        openai_api_key=env["OPENAI_API_KEY"],
        openai_base_url=env["OPENAI_BASE_URL"],
        **overrides,
    )


def make_world(
    sandbox: SandboxHandle,
    sink: WebhookSink,
    models: FakeModels,
    tmp_path: Path,
    *,
    files: dict[str, str] | None = None,
    **overrides: Any,
) -> ReviewWorld:
    repo = sandbox.create_repo("octo", "demo", files=files or BASE_FILES)
    for login, level in [("writer", "write"), ("reader", "read")]:
        sandbox.create_user(login)
        sandbox.control.set_permission("octo", "demo", login, level)
    settings = review_settings(sandbox, models, tmp_path, **overrides)
    store = Store.open(settings)
    store.migrate()
    clients = GitHubClients(
        settings, retry=RetryPolicy(backoff_base_s=0.05), write_guard=HaltRegistry(store).check
    )
    ctx = JobContext(settings=settings, store=store, github=clients, redis=None)
    load_job_modules(settings)
    router = Router()
    review_triggers.register(router, settings)
    return ReviewWorld(sandbox, sink, models, repo, settings, store, ctx, router, tmp_path / "work")


@pytest.fixture
def rw(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, fake_models: FakeModels, tmp_path: Path
) -> Iterator[ReviewWorld]:
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path)
    yield world
    world.store.close()
