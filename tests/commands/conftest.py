"""A JobContext wired to the sandbox: what a worker process builds at start, in-process."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from app.controls.halt import HaltRegistry
from app.github_client import GitHubClients, RetryPolicy
from app.handlers.router import Router
from app.handlers.routes import build_router
from app.jobs.context import JobContext
from app.jobs.registry import Job, load_job_modules, registered_jobs
from app.settings import Settings, load_settings
from app.store import Store
from app.webhooks.inbox import Delivery
from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink


@dataclass
class World:
    """One repository on the sandbox, its people, and ourobot's in-process worker parts."""

    sandbox: SandboxHandle
    sink: WebhookSink
    repo: SeededRepo
    settings: Settings
    store: Store
    ctx: JobContext
    router: Router
    clients: dict = field(default_factory=dict)

    def user(self, login: str):
        """A githubkit client acting as `login` (kept: githubkit namespaces hold it weakly)."""
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    def comment(self, login: str, number: int, body: str) -> dict:
        """`login` comments on `number`; returns the issue_comment webhook payload."""
        made = self.user(login).rest.issues.create_comment(
            self.repo.owner, self.repo.name, number, body=body
        )
        comment_id = made.parsed_data.id
        return self.sink.wait_for_one(
            "issue_comment", "created", lambda d: d.payload["comment"]["id"] == comment_id
        ).payload

    def delivery(self, login: str, number: int, body: str) -> Delivery:
        # Match by comment id: the bot's own replies arrive on the same sink at any moment.
        made = self.user(login).rest.issues.create_comment(
            self.repo.owner, self.repo.name, number, body=body
        )
        comment_id = made.parsed_data.id
        sent = self.sink.wait_for_one(
            "issue_comment", "created", lambda d: d.payload["comment"]["id"] == comment_id
        )
        return Delivery(
            delivery_id=sent.guid,
            event=sent.event,
            action="created",
            installation_id=self.repo.installation_id,
            body=sent.body,
        )

    def route(self, payload: dict, event: str = "issue_comment", action: str = "created"):
        return self.router.route(event, action, payload, delivery_id="test")

    def run(self, job: Job) -> None:
        registered_jobs()[job.name](self.ctx, **job.kwargs)

    def issue(self, title: str = "A ticket") -> int:
        made = self.user(self.repo.owner).rest.issues.create(
            self.repo.owner, self.repo.name, title=title
        )
        return made.parsed_data.number

    def comments(self, number: int) -> list:
        listed = self.user(self.repo.owner).rest.issues.list_comments(
            self.repo.owner, self.repo.name, number
        )
        return list(listed.parsed_data)


def sandbox_settings(sandbox: SandboxHandle, tmp_path, **overrides) -> Settings:
    return load_settings(
        env={},
        app_id=sandbox.app.id,
        private_key=sandbox.app.private_key_pem,
        github_api_url=sandbox.url,
        data_dir=tmp_path / "ourobot-data",
        webhook_secret="s3cret",
        **overrides,
    )


@pytest.fixture
def world(sandbox: SandboxHandle, webhook_sink: WebhookSink, tmp_path) -> Iterator[World]:
    repo = sandbox.create_repo("octo", "demo")
    for login, level in [("admin1", "admin"), ("writer", "write"), ("reader", "read")]:
        sandbox.create_user(login)
        sandbox.control.set_permission("octo", "demo", login, level)
    sandbox.create_user("other-app[bot]", type="Bot")
    sandbox.control.set_permission("octo", "demo", "other-app[bot]", "write")
    settings = sandbox_settings(sandbox, tmp_path, operators="oncall")
    sandbox.create_user("oncall")
    store = Store.open(settings)
    store.migrate()
    halts = HaltRegistry(store)
    clients = GitHubClients(
        settings, retry=RetryPolicy(backoff_base_s=0.05), write_guard=halts.check
    )
    ctx = JobContext(settings=settings, store=store, github=clients, redis=None)
    load_job_modules(settings)
    yield World(sandbox, webhook_sink, repo, settings, store, ctx, build_router(settings))
    store.close()
