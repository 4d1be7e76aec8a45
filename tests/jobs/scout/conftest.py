"""A repository on the sandbox, the fake model servers, and ourobot's job parts in-process.

`sw` (scout world): the sandbox repo (its config names a fake scout model and a fake planner),
a maintainer, a writer and a reader, a JobContext whose model keys point at the fakes, the
production router, and helpers to comment as a person, run the jobs the router asks for, and
read back issues and ourobot's comments.
"""

from __future__ import annotations

from collections.abc import Iterator
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
from app.settings import Settings
from app.store import Store
from reviewers.fake_servers import FakeModels, Text
from tests.jobs.review_check.conftest import review_settings
from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink

SCOUT = "anthropic:claude-scout"
PLANNER = "openai:gpt-planner"
CONFIG = f"""version: 1
project: {{name: demo, description: a tiny calculator}}
models:
  scout: "{SCOUT}"
  planner: "{PLANNER}"
"""
FILES = {
    "README.md": "# demo\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add() -> None:\n"
    "    assert add(1, 2) == 3\n",
    ".github/ourobot.yml": CONFIG,
}
PROPOSED = "ourobot:proposed"
DIVIDE_BODY = (
    "calc/ops.py has add but no way to divide two numbers. Add divide(a, b) returning a float "
    "and raise ZeroDivisionError with a clear message when b is zero."
)


def proposal(title: str, body: str, *criteria: str) -> str:
    lines = ["### PROPOSAL", f"Title: {title}", "", body, "", "Acceptance criteria:"]
    return "\n".join([*lines, *(f"- {c}" for c in criteria or ("It has a test.",)), "### END\n"])


# Four proposals that differ from each other and from the seeded repository's issues.
FOUR = [
    proposal(
        "Add a multiply operation to calc",
        "calc/ops.py can add but cannot multiply. Add multiply(a, b) returning the product, "
        "with tests for negative numbers and for zero.",
        "multiply(3, 4) == 12",
        "tests/test_ops.py covers negative factors",
    ),
    proposal(
        "Document the operations in the README",
        "The README says nothing about what calc offers. List each operation with a short "
        "example of its use.",
        "README.md lists add with an example",
    ),
    proposal(
        "Type-check the package in CI",
        "Nothing runs mypy over calc/. Add a strict mypy configuration in pyproject.toml so "
        "annotations stay honest as the package grows.",
        "mypy --strict calc passes",
    ),
    proposal(
        "Reject booleans in add",
        "add(True, 2) returns 3 silently because bool is an int. Raise TypeError for bool "
        "arguments so mistakes surface early.",
        "add(True, 2) raises TypeError",
    ),
]


@dataclass
class ScoutWorld:
    sandbox: SandboxHandle
    sink: WebhookSink
    models: FakeModels
    repo: SeededRepo
    settings: Settings
    store: Store
    ctx: JobContext
    router: Router
    clients: dict[str, Any] = field(default_factory=dict)

    def user(self, login: str) -> Any:
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    def issue(self, title: str, body: str = "", *, by: str = "maintainer") -> int:
        made = self.user(by).rest.issues.create("octo", "demo", title=title, body=body)
        return int(made.parsed_data.number)

    def say(self, login: str, number: int, text: str) -> list[Job]:
        """`login` comments `text` on `number`; the jobs the router asks for."""
        made = self.user(login).rest.issues.create_comment("octo", "demo", number, body=text)
        comment_id = made.parsed_data.id
        payload = self.sink.wait_for_one(
            "issue_comment", "created", lambda d: d.payload["comment"]["id"] == comment_id
        ).payload
        return self.router.route("issue_comment", "created", payload, delivery_id="c")

    def run(self, job: Job) -> None:
        registered_jobs()[job.name](self.ctx, **job.kwargs)

    def ask(self, login: str, number: int, text: str) -> str:
        """Comment, run the command job, and return ourobot's reply to it."""
        [job] = self.say(login, number, text)
        self.run(job)
        return self.reply(number, job)

    def reply(self, number: int, job: Job) -> str:
        key = f"<!-- ourobot:reply.{job.kwargs['comment_id']}.{job.kwargs['verb']} -->"
        [body] = [c.body for c in self.bot_comments(number) if key in c.body]
        return str(body)

    def bot_comments(self, number: int) -> list[Any]:
        listed = self.user("octo").rest.issues.list_comments("octo", "demo", number, per_page=100)
        return [c for c in listed.parsed_data if c.user.login == self.sandbox.app.bot_login]

    def issues(self, *, label: str | None = None) -> list[Any]:
        listed = self.user("octo").rest.issues.list_for_repo(
            "octo", "demo", state="all", per_page=100, **({"labels": label} if label else {})
        )
        return sorted(listed.parsed_data, key=lambda i: i.number)

    def proposed(self) -> list[Any]:
        return self.issues(label=PROPOSED)

    def writes(self) -> int:
        routes = self.sandbox.control.stats()["routes"]
        return sum(n for k, n in routes.items() if k.split()[0] in {"POST", "PATCH", "PUT"})


def make_world(
    sandbox: SandboxHandle,
    sink: WebhookSink,
    models: FakeModels,
    tmp_path: Path,
    files: dict[str, str] | None = None,
) -> ScoutWorld:
    repo = sandbox.create_repo("octo", "demo", files=files or FILES)
    for login, level in [("maintainer", "maintain"), ("writer", "write"), ("reader", "read")]:
        sandbox.create_user(login)
        sandbox.control.set_permission("octo", "demo", login, level)
    settings = review_settings(sandbox, models, tmp_path)
    store = Store.open(settings)
    store.migrate()
    clients = GitHubClients(
        settings, retry=RetryPolicy(backoff_base_s=0.05), write_guard=HaltRegistry(store).check
    )
    ctx = JobContext(settings=settings, store=store, github=clients, redis=None)
    load_job_modules(settings)
    return ScoutWorld(sandbox, sink, models, repo, settings, store, ctx, build_router(settings))


@pytest.fixture
def sw(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, fake_models: FakeModels, tmp_path: Path
) -> Iterator[ScoutWorld]:
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path)
    yield world
    world.store.close()


def answer(*blocks: str) -> Text:
    return Text("Here are my proposals.\n\n" + "\n".join(blocks))
