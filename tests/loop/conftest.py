"""A real project in a real git repository, the fake model servers and a real ledger: what the
cycle tests drive the implementer with.

    def test_x(loop):
        loop.project()                                   # calc.py (broken add) and its tests
        loop.models.script(IMPLEMENTER, edits_reply(replace_block("calc.py", (old, new))))
        result = loop.run("Fix add()")
        assert result.outcome == "ready"

The test command runs under bubblewrap where it can (`sandbox: auto`), else scrubbed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from app.controls.ledger import Ledger, Subject
from app.controls.pricing import PriceTable
from app.controls.spend_caps import Caps
from app.loop.caging import suite_runner
from app.loop.cycle import CycleDeps, CycleRequest, CycleResult, Reviewer, run_cycle
from app.loop.metering import ModelGate
from app.loop.setup_phase import prepare as prepare_setup
from app.loop.ticket import Ticket
from app.repo_config import ModelRef, RepoConfig, load_repo_config
from app.settings import Settings
from app.store import Store
from app.workspace.cage.entry import Cage
from reviewers.fake_servers import FakeModels
from reviewers.providers import ProviderCredentials, build_client
from tests.guards.conftest import GitRepo

IMPLEMENTER = "anthropic:claude-impl"
PLANNER = "anthropic:claude-plan"
PY = sys.executable
UNITTEST = f"{PY} -m unittest discover -s tests -t . -q"
PYTEST = f"{PY} -m pytest -q -p no:cacheprovider"

CALC = """\
def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""

CALC_TESTS = """\
import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
"""

ADD_TEST = """

class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
"""


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    store = Store.open(Settings(data_dir=tmp_path / "data", database_url=None))
    store.migrate()
    try:
        yield store
    finally:
        store.close()


class Loop:
    def __init__(self, tmp_path: Path, models: FakeModels, store: Store) -> None:
        home = tmp_path / "home"
        home.mkdir()
        self.tmp = tmp_path
        self.repo = GitRepo(tmp_path / "repo", home)
        self.models = models
        self.store = store
        self.ledger = Ledger(store)
        self.progress: list[str] = []
        self.runs = 0
        self.settings = Settings(data_dir=tmp_path / "data", database_url=None)

    def project(
        self,
        *,
        command: str = UNITTEST,
        extra_config: str = "",
        budgets: str = "{implementer_iterations: 3, test_timeout_s: 60}",
        files: dict[str, str] | None = None,
    ) -> str:
        """calc.py with a broken add(), its tests (which pass), and the config; the base."""
        self.repo.write("calc.py", CALC)
        self.repo.write("tests/__init__.py", "")
        self.repo.write("tests/test_calc.py", CALC_TESTS)
        for path, text in (files or {}).items():
            self.repo.write(path, text)
        self.repo.write(".github/ourobot.yml", self.config_text(command, extra_config, budgets))
        return self.repo.commit("base")

    def config_text(self, command: str, extra: str, budgets: str) -> str:
        return (
            "version: 1\n"
            f"test_command: {command!r}\n"
            f"models: {{implementer: {IMPLEMENTER}, planner: {PLANNER}}}\n"
            f"budgets: {budgets}\n" + extra
        )

    def config(self) -> RepoConfig:
        return load_repo_config(self.repo.git("show", "HEAD:.github/ourobot.yml"))

    def run(
        self,
        text: str,
        *,
        ticket_id: str = "T-1",
        labels: Sequence[str] = (),
        reviewer: Reviewer | None = None,
        config: RepoConfig | None = None,
        usd: float = 5.0,
        env_secrets: Sequence[str] = (),
        cancel: Callable[[], bool] | None = None,
    ) -> CycleResult:
        config = config or self.config()
        ticket = Ticket(ticket_id, f"local:{self.repo.path}#{ticket_id}", "", text, tuple(labels))
        self.runs += 1
        subject = Subject(f"cycle:{ticket.key}:{self.runs}", ticket=ticket.key)
        gate = ModelGate(self.ledger, PriceTable(), Caps(usd_per_ticket=usd), subject)
        credentials = ProviderCredentials.from_env(self.models.env())

        def client(model_id: str):
            return build_client(ModelRef.model_validate(model_id), credentials, max_retries=0)

        runner = suite_runner(config, Cage.for_host(config.sandbox))
        deps = CycleDeps(
            implementer=client(config.models.implementer[0].id),
            planner=client(config.models.planner[0].id),
            gate=gate,
            runner=runner,
            reviewer=reviewer,
            secrets=(*credentials.secrets(), *env_secrets),
            progress=self.progress.append,
            cancel=cancel,
            setup=lambda ws: prepare_setup(ws, config, runner.cage, self.settings, "local:test"),
        )
        base = self.repo.git("rev-parse", "HEAD")
        request = CycleRequest(self.repo.path, base, ticket, config, worktree_root=self.tmp)
        return run_cycle(request, deps)

    def prompts(self, model: str = IMPLEMENTER) -> list[str]:
        return [request.prompt_text for request in self.models.requests_for(model)]

    def branch_file(self, path: str, branch: str = "ourobot/T-1") -> str:
        return self.repo.git("show", f"{branch}:{path}")


@pytest.fixture
def loop(tmp_path: Path, fake_models: FakeModels, sqlite_store: Store) -> Loop:
    return Loop(tmp_path, fake_models, sqlite_store)
