"""The loop against the sandbox: a repository with a small project and tests, the fake model
servers, and ourobot's production router and jobs run in this process.

`lw` (loop world) pumps what the sandbox delivers through the production routing table and
runs the resulting jobs, so one label on an issue goes all the way: the ticket job, the pull
request it opens, that pull request's guards and review checks, a rejection's fix round and the
re-review of the new head. The end-to-end tests (`test_loop_e2e.py`) do the same with real
worker processes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.controls.halt import HaltRegistry
from app.github_client import GitHubClients, RetryPolicy
from app.handlers.router import Router
from app.handlers.routes import build_router
from app.jobs.context import JobContext
from app.jobs.registry import Job, load_job_modules, registered_jobs
from app.settings import Settings, load_settings
from app.store import Store
from reviewers.fake_servers import FakeModels, Text, append_block, replace_block
from tests.plugins.sandbox import Delivery, SandboxHandle, SeededRepo, WebhookSink

IMPLEMENTER = "anthropic:claude-impl"
A = "anthropic:claude-a"
B = "openai:gpt-b"
APPROVE = Text("The change does what the ticket asks.\nVERDICT: APPROVE")
REJECT = Text(
    "FINDING major calc.py:2 mul() has no docstring, which the constitution requires\n"
    "VERDICT: REJECT"
)
PY = sys.executable
UNITTEST = f"{PY} -m unittest discover -s tests -t . -q"
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
CALC_TESTS = (
    "import unittest\n\nfrom calc import add, mul\n\n\nclass CalcTest(unittest.TestCase):\n"
    "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
)
ADD_TEST = (
    "\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n"
)
FIX = replace_block("calc.py", ("    return a - b\n", "    return a + b\n"))
WITH_TEST = append_block("tests/test_calc.py", ADD_TEST)
DOCSTRING = replace_block("calc.py", ("def mul(a, b):\n", 'def mul(a, b):\n    """a times b."""\n'))
TICKET_TITLE = "add() subtracts"
TICKET_BODY = "Make add(a, b) return a + b, with a test."


def config_text(**extra: str) -> str:
    lines = [
        "version: 1",
        "project: {name: demo, description: a tiny calculator}",
        f"test_command: {UNITTEST!r}",
        f"models: {{implementer: {IMPLEMENTER}, planner: {IMPLEMENTER}}}",
        "budgets: {implementer_iterations: 3, fix_iterations: 2, test_timeout_s: 60}",
        f'review: {{models: ["{A}", "{B}"], quorum: 2, timeout_s: 20, rounds: 2}}',
        "guards: {apply_to: bot}",
    ]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def project_files(config: str | None = None) -> dict[str, str]:
    return {
        "README.md": "# demo\n",
        "calc.py": CALC,
        "tests/__init__.py": "",
        "tests/test_calc.py": CALC_TESTS,
        ".github/ourobot.yml": config if config is not None else config_text(),
        ".github/ourobot/CONSTITUTION.md": "Every function has a docstring.\n",
    }


@dataclass
class LoopWorld:
    sandbox: SandboxHandle
    sink: WebhookSink
    models: FakeModels
    repo: SeededRepo
    settings: Settings
    store: Store
    ctx: JobContext
    router: Router
    clients: dict[str, Any] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    ran: list[Job] = field(default_factory=list)
    skip: Callable[[Job], bool] = lambda job: False

    # ---- people ------------------------------------------------------------------------------
    def user(self, login: str) -> Any:
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    @property
    def owner(self) -> Any:
        return self.user(self.repo.owner)

    def issue(self, title: str = TICKET_TITLE, body: str = TICKET_BODY) -> int:
        made = self.owner.rest.issues.create(
            self.repo.owner, self.repo.name, title=title, body=body
        )
        return int(made.parsed_data.number)

    def label(self, number: int, by: str, name: str = "ourobot:ticket") -> None:
        self.user(by).rest.issues.add_labels(self.repo.owner, self.repo.name, number, labels=[name])

    def unlabel(self, number: int, by: str, name: str = "ourobot:ticket") -> None:
        self.user(by).rest.issues.remove_label(self.repo.owner, self.repo.name, number, name)

    def comment(self, by: str, number: int, body: str) -> None:
        self.user(by).rest.issues.create_comment(self.repo.owner, self.repo.name, number, body=body)

    # ---- running -----------------------------------------------------------------------------
    def jobs_of(self, delivery: Delivery) -> list[Job]:
        return self.router.route(
            delivery.event, delivery.action or "", delivery.payload, delivery_id=delivery.guid
        )

    def new_deliveries(self) -> list[Delivery]:
        self.sandbox.control.wait_idle()
        fresh = []
        for delivery in list(self.sink.deliveries):
            key = f"{delivery.guid}:{delivery.event}:{delivery.action}"
            if key not in self.seen:
                self.seen.add(key)
                fresh.append(delivery)
        return fresh

    def run(self, job: Job) -> None:
        self.ran.append(job)
        registered_jobs()[job.name](self.ctx, **job.kwargs)

    def pump(self, *, rounds: int = 30, only: tuple[str, ...] | None = None) -> list[Job]:
        """Route every new delivery and run its jobs, until nothing new arrives."""
        done: list[Job] = []
        for _ in range(rounds):
            jobs = [job for d in self.new_deliveries() for job in self.jobs_of(d)]
            jobs = [j for j in jobs if (only is None or j.name in only) and not self.skip(j)]
            if not jobs:
                return done
            for job in jobs:
                self.run(job)
                done.append(job)
        raise AssertionError(f"the loop did not settle after {rounds} rounds: {done}")

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
    def pulls(self, state: str = "all") -> list[Any]:
        listed = self.owner.rest.pulls.list(self.repo.owner, self.repo.name, state=state)
        return list(listed.parsed_data)

    def branches(self) -> list[str]:
        """The repository's branches, as git sees them over HTTP."""
        out = self.sandbox.git(
            "ls-remote", "--heads", self.repo.clone_url, token=self.repo.owner_token
        ).stdout
        return [line.split("refs/heads/", 1)[1] for line in out.splitlines() if line.strip()]

    def bot_comments(self, number: int) -> list[Any]:
        listed = self.owner.rest.issues.list_comments(
            self.repo.owner, self.repo.name, number, per_page=100
        )
        return [c for c in listed.parsed_data if c.user.login == self.sandbox.app.bot_login]

    def labels(self, number: int) -> set[str]:
        issue = self.owner.rest.issues.get(self.repo.owner, self.repo.name, number).parsed_data
        return {label.name for label in issue.labels}

    def check_runs(self, sha: str, name: str) -> list[Any]:
        listed = self.owner.rest.checks.list_for_ref(
            self.repo.owner, self.repo.name, sha, check_name=name, filter_="all"
        )
        return list(listed.parsed_data.check_runs)

    def file_at(self, ref: str, path: str) -> str:
        got = self.owner.rest.repos.get_content(
            self.repo.owner,
            self.repo.name,
            path,
            ref=ref,
            headers={"Accept": "application/vnd.github.raw"},
        )
        return got.text

    def prompts(self, model: str = IMPLEMENTER) -> list[str]:
        return [request.prompt_text for request in self.models.requests_for(model)]


def loop_settings(
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
) -> LoopWorld:
    repo = sandbox.create_repo("octo", "demo", files=files or project_files())
    people = [
        ("writer", "write"),
        ("admin-ish", "maintain"),
        ("reader", "read"),
        ("triager", "triage"),
    ]
    for login, level in people:
        sandbox.create_user(login)
        sandbox.control.set_permission("octo", "demo", login, level)
    settings = loop_settings(sandbox, models, tmp_path, **overrides)
    store = Store.open(settings)
    store.migrate()
    clients = GitHubClients(
        settings, retry=RetryPolicy(backoff_base_s=0.05), write_guard=HaltRegistry(store).check
    )
    ctx = JobContext(settings=settings, store=store, github=clients, redis=None)
    load_job_modules(settings)
    return LoopWorld(sandbox, sink, models, repo, settings, store, ctx, build_router(settings))


@pytest.fixture
def lw(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, fake_models: FakeModels, tmp_path: Path
) -> Iterator[LoopWorld]:
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path)
    yield world
    world.store.close()
