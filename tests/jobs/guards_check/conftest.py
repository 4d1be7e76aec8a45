"""A repository on the sandbox, ourobot's in-process worker parts, and pull requests made the
way they are made for real: branches pushed over git smart HTTP (as the installation for
ourobot's own PRs, as a person otherwise) and opened through githubkit, with the webhook
payloads the sandbox then delivers.
"""

from __future__ import annotations

import time
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
from tests.plugins.sandbox import SEED_FILES, SandboxHandle, SeededRepo, WebhookSink

CONFIG_PATH = ".github/ourobot.yml"
BIG_FILE = "docs/guide.md"
BIG_LINES = 400
HUMAN = "writer"

Changes = dict[str, str | None]  # path -> new content, None = delete


def big_text(lines: int = BIG_LINES) -> str:
    return "".join(f"Line {n} of the install guide.\n" for n in range(1, lines + 1))


@dataclass
class Branch:
    """A local clone with one branch checked out, pushed to the sandbox."""

    path: Path
    name: str
    token: str
    head: str


@dataclass
class GuardsWorld:
    sandbox: SandboxHandle
    sink: WebhookSink
    repo: SeededRepo
    settings: Settings
    store: Store
    ctx: JobContext
    router: Router
    halts: HaltRegistry
    tmp_path: Path
    clients: dict[str, Any] = field(default_factory=dict)

    # ---- who acts ----------------------------------------------------------------------------
    @property
    def installation_id(self) -> int:
        assert self.repo.installation_id is not None
        return self.repo.installation_id

    def installation(self) -> Any:
        """githubkit as the installation (ourobot's bot user); kept, namespaces are weak."""
        if "@installation" not in self.clients:
            self.clients["@installation"] = self.sandbox.github_installation(self.installation_id)
        return self.clients["@installation"]

    def user(self, login: str) -> Any:
        if login not in self.clients:
            self.clients[login] = self.sandbox.github_user(login)
        return self.clients[login]

    def installation_token(self) -> str:
        return self.sandbox.control.installation_token(self.installation_id)

    # ---- branches and pull requests ----------------------------------------------------------
    def push_branch(self, name: str, changes: Changes, *, token: str) -> Branch:
        dest = self.tmp_path / f"clone-{name.replace('/', '-')}-{time.monotonic_ns()}"
        self.sandbox.git("clone", "-q", self.repo.clone_url, str(dest), token=token)
        self.sandbox.git("checkout", "-q", "-b", name, cwd=dest)
        branch = Branch(dest, name, token, "")
        return self.commit(branch, changes, message=f"work on {name}")

    def commit(
        self, branch: Branch, changes: Changes, *, message: str = "more", force: bool = False
    ) -> Branch:
        for rel, content in changes.items():
            target = branch.path / rel
            if content is None:
                self.sandbox.git("rm", "-q", "--", rel, cwd=branch.path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            self.sandbox.git("add", "--", rel, cwd=branch.path)
        amend = ["--amend"] if force else []
        self.sandbox.git("commit", "-q", *amend, "-m", message, cwd=branch.path)
        push = ["push", "-q", *(["--force"] if force else []), "origin", branch.name]
        self.sandbox.git(*push, cwd=branch.path, token=branch.token)
        head = self.sandbox.git("rev-parse", "HEAD", cwd=branch.path).stdout.strip()
        branch.head = head
        return branch

    def open_pull(self, client: Any, branch: Branch, title: str = "A change") -> dict[str, Any]:
        """Open a PR from `branch` as `client`; the `pull_request.opened` payload delivered."""
        made = client.rest.pulls.create(
            self.repo.owner, self.repo.name, title=title, head=branch.name, base="main"
        ).parsed_data
        return self.pull_event("opened", made.number, branch.head)

    def bot_pull(self, changes: Changes, branch: str = "ourobot/issue-1") -> dict[str, Any]:
        """ourobot's own PR: pushed with the installation token, opened by the installation."""
        pushed = self.push_branch(branch, changes, token=self.installation_token())
        return self.open_pull(self.installation(), pushed)

    def human_pull(self, changes: Changes, branch: str = "feature") -> dict[str, Any]:
        pushed = self.push_branch(branch, changes, token=self.sandbox.tokens[HUMAN])
        return self.open_pull(self.user(HUMAN), pushed)

    def pull_event(
        self, action: str, number: int, head_sha: str, timeout_s: float = 15
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for sent in self.sink.of("pull_request", action):
                pull = sent.payload["pull_request"]
                if pull["number"] == number and pull["head"]["sha"] == head_sha:
                    return sent.payload
            time.sleep(0.02)
        raise AssertionError(f"no pull_request.{action} for #{number} at {head_sha[:12]}")

    # ---- ourobot's side ----------------------------------------------------------------------
    def jobs_for(self, payload: dict[str, Any]) -> list[Job]:
        return self.router.route("pull_request", payload["action"], payload, delivery_id="t")

    def run(self, job: Job) -> None:
        registered_jobs()[job.name](self.ctx, **job.kwargs)

    def handle(self, payload: dict[str, Any]) -> list[Job]:
        """Route a delivered payload and run the guards jobs it asks for, in-process."""
        jobs = [job for job in self.jobs_for(payload) if job.name == "guards_check"]
        for job in jobs:
            self.run(job)
        return jobs

    # ---- what GitHub shows -------------------------------------------------------------------
    def guards_runs(self, sha: str) -> list[Any]:
        listed = self.user(self.repo.owner).rest.checks.list_for_ref(
            self.repo.owner, self.repo.name, sha, check_name="ourobot/guards", filter_="all"
        )
        return list(listed.parsed_data.check_runs)

    def only_run(self, sha: str) -> Any:
        runs = self.guards_runs(sha)
        assert len(runs) == 1, [(r.id, r.status, r.conclusion) for r in runs]
        return runs[0]

    def annotations(self, run_id: int) -> list[Any]:
        listed = self.user(self.repo.owner).rest.checks.list_annotations(
            self.repo.owner, self.repo.name, run_id, per_page=100
        )
        return list(listed.parsed_data)

    def request_count(self, route: str) -> int:
        return int(self.sandbox.control.stats()["routes"].get(route, 0))


def sandbox_settings(sandbox: SandboxHandle, data_dir: Path) -> Settings:
    return load_settings(
        env={},
        app_id=sandbox.app.id,
        private_key=sandbox.app.private_key_pem,
        github_api_url=sandbox.url,
        data_dir=data_dir,
        webhook_secret="s3cret",
    )


WorldFactory = Callable[..., GuardsWorld]


@pytest.fixture
def make_world(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, tmp_path: Path
) -> Iterator[WorldFactory]:
    """`make_world(config=YAML or None)`: the base branch holds that `.github/ourobot.yml`."""
    stores: list[Store] = []

    def build(config: str | None = None, extra_files: dict[str, str] | None = None) -> GuardsWorld:
        files = {**SEED_FILES, BIG_FILE: big_text(), **(extra_files or {})}
        if config is not None:
            files[CONFIG_PATH] = config
        repo = sandbox.create_repo("octo", "demo", files=files)
        sandbox.create_user(HUMAN)
        sandbox.control.set_permission("octo", "demo", HUMAN, "write")
        settings = sandbox_settings(sandbox, tmp_path / "ourobot-data")
        store = Store.open(settings)
        store.migrate()
        stores.append(store)
        halts = HaltRegistry(store)
        clients = GitHubClients(
            settings, retry=RetryPolicy(backoff_base_s=0.05), write_guard=halts.check
        )
        ctx = JobContext(settings=settings, store=store, github=clients, redis=None)
        load_job_modules(settings)
        return GuardsWorld(
            sandbox,
            webhook_sink,
            repo,
            settings,
            store,
            ctx,
            build_router(settings),
            halts,
            tmp_path,
        )

    yield build
    for store in stores:
        store.close()
