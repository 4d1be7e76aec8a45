"""`ourobot demo`: the loop against the local GitHub sandbox, with no accounts and no Redis.

This is the one product module (with `ourobot sandbox`) that drives the sandbox: it starts the
GitHub double and two scripted model servers, runs the real `ourobot serve` in embedded mode
against them, plays the maintainer through the sandbox's API, and prints each step live with
its elapsed time. The story is in `demo_script`: ticket 1 is labeled, ourobot's implementer
opens a pull request, the panel rejects it with a specific finding, the fix round is approved,
the sandbox's CI passes, the maintainer approves and the gate merges with `sha=`; ticket 2's
destructive rewrite of the install guide is refused by the iteration guard every time, and the
ticket ends labeled blocked with no pull request.

`--json` makes the last stdout line the summary (`summary_json`); `--record DIR` writes every
HTTP request the sandbox and the model servers received (the sandbox's with its answer) and
every webhook the sandbox sent, secrets scrubbed (`demo_record`). Its folders are checked
before anything starts (`demo_files`). SIGTERM, SIGINT and SIGHUP stop it cleanly
(`stopped_by_signals`): its children stopped, the temporary folder (which holds the sandbox
App's key) removed, one line, exit 2. A ticket that ends blocked ends the wait for its pull
request at once, with ourobot's explanation.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO, TypeVar, cast

import httpx
from githubkit import GitHub, TokenAuthStrategy

from app.cli import EXIT_BAD_INPUT, demo_setup
from app.cli import demo_script as script
from app.cli.demo_files import Workdir, make_workdir
from app.cli.demo_record import RequestRecord, Scrubber
from app.gate.merge import merge_commit_of
from app.github_client import GitHubClients
from app.settings import load_settings
from app.workspace.cage.entry import bwrap_problem, find_bwrap

WAIT_S = 60.0
CYCLE_WAIT_S = 180.0  # a cycle clones, asks the model and runs the tests
T = TypeVar("T")


def sandbox_problem() -> str | None:
    """Why bubblewrap cannot run here, or None."""
    bwrap = find_bwrap()
    return "not installed" if bwrap is None else bwrap_problem(bwrap)


class DemoFailed(Exception):
    """A demo step did not see what it should have; the message says which."""


class Steps:
    """Numbered progress lines with timings, so a long demo never looks stuck."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.number = 0
        self.started = time.monotonic()

    @contextmanager
    def step(self, title: str) -> Iterator[Callable[[str], None]]:
        raise_if_stopped()
        self.number += 1
        began = time.monotonic()
        elapsed = began - self.started
        print(f"[{self.number:>2}] +{elapsed:6.1f}s {title} ...", file=self.out, flush=True)

        def note(text: str) -> None:
            print(f"     {text}", file=self.out, flush=True)

        yield note
        print(f"     done in {time.monotonic() - began:.2f}s", file=self.out, flush=True)

    def total(self) -> float:
        return time.monotonic() - self.started


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = WAIT_S) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        raise_if_stopped()
        found = probe()
        if found is not None:
            return found
        time.sleep(0.2)
    raise DemoFailed(f"{what}: nothing after {timeout_s:.0f}s")


class Ourobot:
    """The real `ourobot serve` as a child process, logging to a file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "app", "serve", "--port", str(self.port)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )

        def healthy() -> bool | None:
            if self.process is not None and self.process.poll() is not None:
                raise DemoFailed(f"ourobot serve exited: {self.log.read_text()[-500:]}")
            try:
                return httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200 or None
            except httpx.HTTPError:
                return None

        wait_for("ourobot serve to answer /healthz", healthy, 30)

    def stop(self) -> None:
        _stop(self.process)


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


class Worker:
    """A real `ourobot worker` (Celery, Redis mode) as a child process, logging to a file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "app", "worker", "--concurrency", "2"]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )

        def ready() -> bool | None:
            if self.process is not None and self.process.poll() is not None:
                raise DemoFailed(f"ourobot worker exited: {self.log.read_text()[-500:]}")
            return True if " ready." in self.log.read_text(errors="replace") else None

        wait_for("ourobot worker to be ready", ready, 60)

    def stop(self) -> None:
        _stop(self.process)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class RealModel:
    """`--model` (and `--base-url`): a real model for the implementer and the panel."""

    id: str  # as the review config names models: "anthropic:<name>" or "openai:<name>"
    provider: str
    key_variable: str
    key: str | None = field(repr=False)  # None: its endpoint wants none (a local server)
    base_url: str | None = None  # `--base-url`, else the provider's (the env's or the vendor's)
    home_url: str | None = None  # the environment's `<PROVIDER>_BASE_URL`, if it names one
    warnings: tuple[str, ...] = ()  # from the check: a model its server does not list, say

    def said(self) -> str:
        where = f" at {self.base_url}" if self.base_url else ""
        key = f", with {self.key_variable} from the environment" if self.key else ""
        return f"the model is real: {self.id}{where}{key}"


def real_model(model_id: str, env: dict[str, str], base_url: str | None = None) -> RealModel:
    """Check `--model` (and `--base-url`): the id, the key, and what the endpoint answers,
    before anything starts; a `UserError` (exit 2) naming the variable or the URL if not."""
    from app.errors import UserError
    from app.loop.local_models import model_option
    from reviewers.model_check import Role, check_roles
    from reviewers.providers import KEY_VARIABLES, ProviderCredentials

    model = model_option(model_id, base_url)
    assert model is not None
    credentials = ProviderCredentials.from_env(env)
    try:
        warnings = check_roles([Role("the demo", (model,))], credentials)
    except UserError as exc:
        raise UserError(f"--model {exc}") from None
    _, key = credentials.endpoint(model)
    home = env.get(f"{model.provider.upper()}_BASE_URL", "").strip() or None
    return RealModel(model.id, model.provider, KEY_VARIABLES[model.provider], key,
                     model.base_url, home, tuple(warnings))  # fmt: skip


@dataclass
class TicketResult:
    """What became of one ticket, as `--json` reports it."""

    issue: int
    outcome: str = "open"  # merged | blocked | needs-human | open
    pr: int | None = None
    merged_sha: str | None = None
    rules: list[str] = field(default_factory=list)


def summary_json(tickets: list[TicketResult], api_requests: int, record: Path | None) -> str:
    """The `--json` line: the tickets in order, the sandbox's REST request count, the record."""
    return json.dumps(
        {
            "tickets": [
                {"issue": t.issue, "outcome": t.outcome, "pr": t.pr,
                 "merged_sha": t.merged_sha, "rules": t.rules}
                for t in tickets
            ],
            "api_requests": api_requests,
            "record": str(record) if record is not None else None,
        }
    )  # fmt: skip


class Stopped(BaseException):
    """A signal asked the demo to stop; the message names it. A BaseException, as
    KeyboardInterrupt is, so no library's `except Exception` takes it for an error of its own."""


@dataclass
class StopSignal:
    """The signal that stopped the demo, once one has."""

    name: str | None = None


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# The signals received while `stopped_by_signals` is active. Python swallows an exception
# raised where it cannot propagate (a weakref callback run by the garbage collector), so the
# demo's waits and steps look here too and raise `Stopped` themselves.
_RECEIVED: list[StopSignal] = []


def raise_if_stopped() -> None:
    for received in _RECEIVED:
        if received.name is not None:
            raise Stopped(received.name)


@contextmanager
def stopped_by_signals() -> Iterator[StopSignal]:
    """SIGTERM (a CI timeout's `kill`), SIGINT (Ctrl-C) and SIGHUP raise `Stopped` in the main
    thread, so every `finally` runs: the children are stopped and the temporary folder, which
    holds the sandbox App's key, is removed. Once stopping, further signals are ignored: a
    second Ctrl-C must not cut the clean-up short and leave `ourobot serve` running."""
    received = StopSignal()

    def stop(number: int, _: object) -> None:
        for each in STOP_SIGNALS:
            signal.signal(each, signal.SIG_IGN)
        received.name = signal.Signals(number).name
        raise Stopped(received.name)

    previous = {each: signal.signal(each, stop) for each in STOP_SIGNALS}
    _RECEIVED.append(received)
    try:
        yield received
    finally:
        _RECEIVED.remove(received)
        for each, handler in previous.items():
            signal.signal(each, handler)


def run_demo(
    out: TextIO,
    *,
    keep_dir: Path | None = None,
    record_dir: Path | None = None,
    as_json: bool = False,
    redis_url: str | None = None,
    model: RealModel | None = None,
) -> int:
    """Run the demo end to end; returns the exit code. With `as_json` the steps go to stderr
    and the last stdout line is the summary. `keep_dir` and `record_dir` are checked already
    (`demo_files`): absolute, and usable."""
    steps_out = sys.stderr if as_json else out
    tickets: list[TicketResult] = []
    api_requests = 0
    with stopped_by_signals() as stop:
        workdir: Workdir | None = None
        try:
            workdir = make_workdir(keep_dir)
            demo = Demo(steps_out, workdir, record_dir=record_dir, redis_url=redis_url, model=model)
            try:
                print(model.said() if model else SCRIPTED, file=steps_out, flush=True)
                for warning in model.warnings if model else ():
                    print(f"warning: {warning}", file=steps_out, flush=True)
                demo.run()
                raise_if_stopped()  # a stop whose exception was swallowed still stops
                code = 0 if demo.tickets_as_expected() else 1
            finally:
                tickets, api_requests = demo.tickets, demo.api_requests
        except (Stopped, Exception) as exc:
            code = _ended(exc, stop, workdir, steps_out)
        finally:
            if workdir is not None:
                workdir.remove()
    if as_json:
        print(summary_json(tickets, api_requests, record_dir), file=out, flush=True)
    return code


SCRIPTED = "the models are scripted: no real model is called (demo_script.py says what)"


def _ended(exc: BaseException, stop: StopSignal, workdir: Workdir | None, out: TextIO) -> int:
    """The exit code for a demo that did not finish, said in one line; anything but a stop
    or a failed step is raised again."""
    if stop.name is not None:  # whatever comes up after a signal is the stop, however wrapped
        kept = workdir is not None and workdir.kept
        left = f"its files are in {workdir.path}" if workdir and kept else "nothing is left"
        print(f"ourobot: demo stopped by {stop.name}: its processes are stopped, {left}",
              file=sys.stderr, flush=True)  # fmt: skip
        return EXIT_BAD_INPUT
    if isinstance(exc, DemoFailed):
        print(f"demo failed: {exc}", file=out)
        return 1
    raise exc


class Demo:
    def __init__(
        self,
        out: TextIO,
        workdir: Workdir,
        *,
        record_dir: Path | None = None,
        redis_url: str | None = None,
        model: RealModel | None = None,
    ) -> None:
        self.out = out
        self.redis_url = redis_url
        self.model = model
        # Its own Celery queue: no other worker on a shared Redis takes the demo's tasks.
        self.queue = f"ourobot-demo-{secrets.token_hex(6)}"
        self.workdir = workdir.path
        self.kept = workdir.kept
        self.steps = Steps(out)
        self.keep: list[Any] = []  # githubkit namespaces hold their clients weakly
        self.tickets: list[TicketResult] = []
        self.api_requests = 0
        self.scrubber = Scrubber()
        self.record = RequestRecord(record_dir, self.scrubber) if record_dir else None
        self.status_token = secrets.token_hex(24)
        self.unsandboxed: str | None = None  # why bubblewrap cannot run here, if it cannot
        self.no_setup: str | None = None  # why the setup phase cannot run here, if it cannot
        self.index: demo_setup.PackageIndex | None = None

    def tickets_as_expected(self) -> bool:
        outcomes = [t.outcome for t in self.tickets]
        return outcomes == ["merged", "blocked"]

    def run(self) -> None:
        from app.sandbox.server import SandboxServer  # the demo is the sandbox's product user
        from reviewers.fake_servers import (
            FAKE_ANTHROPIC_KEY,
            FAKE_OPENAI_KEY,
            FakeModelServer,
        )

        record = self.record
        server = SandboxServer(
            data_dir=self.workdir / "sandbox",
            request_sink=record.sandbox_sink if record is not None else None,
            delivery_sink=record.webhook_sink if record is not None else None,
        )
        self.scrubber.add(server.admin_token, FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY)
        self.scrubber.add(self.status_token)
        if self.model is not None and self.model.key:
            self.scrubber.add(self.model.key)
        anthropic = FakeModelServer("anthropic", api_key=FAKE_ANTHROPIC_KEY)
        openai = FakeModelServer("openai", api_key=FAKE_OPENAI_KEY)
        ourobot: Ourobot | None = None
        worker: Worker | None = None
        try:
            with self.steps.step("start the local GitHub sandbox") as note:
                server.start()
                note(f"GitHub stand-in at {server.url} (REST, git smart HTTP, signed webhooks)")
            with self.steps.step("start two scripted model servers (Anthropic, OpenAI APIs)") as n:
                anthropic.start()
                openai.start()
                self.script_models(anthropic, openai)
                n("the models are scripted (no real model is called): demo_script.py says what;")
                n("priced at 0 (OUROBOT_MODEL_PRICES), so `ourobot status` shows them at no cost")
                n(f"anthropic:{script.REVIEWERS[0]} at {anthropic.base_url}")
                n(f"openai:{script.REVIEWERS[1]} at {openai.base_url}")
            control = server.control()
            with self.steps.step(f"create a maintainer and the repository {script.REPO}") as note:
                maintainer_token = control.create_user(script.OWNER)
                self.scrubber.add(maintainer_token)
                seed = self.workdir / "seed"
                entry = (
                    script.model_entry(self.model.id, self.model.base_url) if self.model else None
                )
                index = self.package_index()
                for rel, text in script.files(entry, index.url if index else None).items():
                    (seed / rel).parent.mkdir(parents=True, exist_ok=True)
                    (seed / rel).write_text(text)
                repo = control.create_repo(script.OWNER, script.REPO, seed)
                installation_id = control.install_app(script.OWNER, [script.REPO])
                ci = [sys.executable, *script.CI_COMMAND[1:]]
                if index is not None:
                    ci = demo_setup.ci_command(sys.executable, index.url)
                control.set_ci_command(script.OWNER, script.REPO, ci)
                note(f"{repo['full_name']} at {repo['head_sha'][:10]}: a tested Python project")
                note(f"with a {script.INSTALL_LINES}-line INSTALL.md; CI runs pytest as ci/test")
                self.note_setup(note, index)
            app_info = control.app_info()
            secret = secrets.token_hex(20)
            self.scrubber.add(secret, str(app_info["private_key_pem"]))
            env = self.serve_env(app_info, server.url, secret, anthropic, openai)
            ourobot = Ourobot(env, self.workdir / "ourobot-serve.log")
            self.serve_log = ourobot.log
            if self.redis_url:
                worker = Worker(env, self.workdir / "ourobot-worker.log")
                with self.steps.step("start `ourobot worker` (Redis mode)") as note:
                    worker.start()
                    note(f"Redis mode: a Celery worker on OUROBOT_REDIS_URL, queue {self.queue}")
            mode = (
                "Redis mode, tasks to the worker" if self.redis_url else "embedded mode (no Redis)"
            )
            if self.unsandboxed is not None:
                print(
                    f"note: bubblewrap cannot run here ({self.unsandboxed}): the demo's own "
                    "scripted code runs unsandboxed (OUROBOT_ALLOW_UNSANDBOXED=1); install "
                    "bubblewrap (apt-get install bubblewrap) for the cage",
                    file=sys.stderr,
                )
            with self.steps.step(f"start `ourobot serve` in {mode}") as note:
                ourobot.start()
                control.set_webhook(f"{ourobot.url}/api/github/webhooks", secret)
                note(f"receiver and jobs at {ourobot.url}; the App's webhook points there")
            settings = load_settings(
                env={}, app_id=app_info["id"], private_key=app_info["private_key_pem"],
                github_api_url=server.url, data_dir=self.workdir / "demo-client",
            )  # fmt: skip
            clients = GitHubClients(settings)
            self.bot_login = str(app_info["bot_login"])
            self.bot = clients.installation(installation_id)
            self.maintainer = GitHub(TokenAuthStrategy(maintainer_token), base_url=server.url)
            self.clients, self.installation_id = clients, installation_id
            self.clone_url = str(repo["clone_url"])
            self.ourobot = ourobot
            self.tickets.append(self.ticket_1())
            self.tickets.append(self.ticket_2())
            self.commands(ourobot)
            self.operator_view(ourobot)
            self.api_requests = int(control.stats()["total"])
            first, second = self.tickets
            print(
                f"demo finished in {self.steps.total():.1f}s: ticket #{first.issue} merged as "
                f"{(first.merged_sha or '?')[:10]} after a rejected first round and a fix; "
                f"ticket #{second.issue}'s destructive rewrite was refused by the iteration "
                f"guard ({', '.join(second.rules)}) every time: blocked, never merged. "
                f"{self.api_requests} REST requests to the sandbox.",
                file=self.out,
            )
        finally:
            if ourobot is not None:
                ourobot.stop()
            if worker is not None:
                worker.stop()
            anthropic.stop()
            openai.stop()
            server.stop()
            if self.index is not None:
                self.index.stop()
            if self.record is not None:
                self.record.model_requests("anthropic", anthropic.requests)
                self.record.model_requests("openai", openai.requests)

    def package_index(self) -> demo_setup.PackageIndex | None:
        """The index serving the project's test dependency, started; None where the setup
        phase cannot run (`self.no_setup` says why)."""
        self.unsandboxed = sandbox_problem()
        self.no_setup = demo_setup.unavailable(self.unsandboxed)
        if self.no_setup is not None:
            return None
        self.index = demo_setup.PackageIndex(self.workdir / "package-index")
        self.index.start()
        return self.index

    def note_setup(
        self, note: Callable[[str], None], index: demo_setup.PackageIndex | None
    ) -> None:
        if index is None:
            note(f"no setup.command: {self.no_setup}, so its tests need nothing installed")
            return
        note(f"its tests need {demo_setup.PROJECT}, which ourobot does not have: setup.command")
        note(f"installs it in the sandbox from a package index at {index.url},")
        note("the one host its setup.network names (a real project's names PyPI)")

    def note_setup_line(self, note: Callable[[str], None], nth: int) -> None:
        """The `nth` ticket's setup line, from its cycle's ledger row."""
        if self.index is None:
            return

        def recorded() -> list[str] | None:
            found = self.setup_lines()
            return found if len(found) > nth else None

        lines = wait_for(f"cycle {nth + 1}'s setup line in the ledger", recorded)
        note(f"{lines[nth]} (the cycle's ledger row)")

    def setup_lines(self) -> list[str]:
        """What the setup phase said in each ticket's cycle (ran, or reused from the cache)."""
        from app.controls.ledger_query import LedgerFilter, search
        from app.store import Store

        data_dir = Path(self.ourobot.env["OUROBOT_DATA_DIR"])
        store = Store.open(load_settings(env={}, data_dir=data_dir))
        try:
            rows = search(store, LedgerFilter(repo=f"{script.OWNER}/{script.REPO}",
                                              kinds=("cycle",)))  # fmt: skip
        finally:
            store.close()
        notes = [str(n) for row in rows for n in row.detail.get("notes") or []]
        return [n for n in notes if n.startswith("setup: ")]

    def script_models(self, anthropic: Any, openai: Any) -> None:
        for fake, model in ((anthropic, script.REVIEWERS[0]), (openai, script.REVIEWERS[1])):
            fake.script(model, *script.reviewer_script()[model])
            fake.default(model, script.APPROVE)
        anthropic.script(script.IMPLEMENTER, script.TICKET_1_CHANGE, script.DONE,
                         script.TICKET_1_FIX, script.DONE)  # fmt: skip
        anthropic.default(script.IMPLEMENTER, script.TICKET_2_REWRITE)

    def serve_env(
        self, app_info: dict[str, Any], url: str, secret: str, anthropic: Any, openai: Any
    ) -> dict[str, str]:
        from reviewers.fake_servers import FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY

        key_path = self.workdir / "app.pem"
        key_path.write_text(app_info["private_key_pem"])
        key_path.chmod(0o600)
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "HOME", "TMPDIR")}
        redis = {}
        if self.redis_url:
            redis = {"OUROBOT_REDIS_URL": self.redis_url, "OUROBOT_CELERY_QUEUE": self.queue}
        # The demo project's tests run with ourobot's own Python, which has pytest.
        keep["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), keep.get("PATH", "")])
        env = {
            **keep,
            "OUROBOT_APP_ID": str(app_info["id"]),
            "OUROBOT_PRIVATE_KEY_PATH": str(key_path),
            "OUROBOT_WEBHOOK_SECRET": secret,
            "OUROBOT_GITHUB_API_URL": url,
            "OUROBOT_DATA_DIR": str(self.workdir / "ourobot-data"),
            "OUROBOT_STATUS_TOKEN": self.status_token,
            "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY,
            "ANTHROPIC_BASE_URL": anthropic.base_url,
            "OPENAI_API_KEY": FAKE_OPENAI_KEY,
            "OPENAI_BASE_URL": openai.base_url,
            **redis,
        }
        if self.model is None:
            env["OUROBOT_MODEL_PRICES"] = json.dumps(script.SCRIPTED_PRICES)
        if self.unsandboxed is not None:
            # The demo's repository and its tests are the demo's own, scripted: on a machine
            # without bubblewrap they may run unsandboxed, said so; a real deployment may not.
            env["OUROBOT_ALLOW_UNSANDBOXED"] = "1"
        return self.real_model_env(env)

    def real_model_env(self, env: dict[str, str]) -> dict[str, str]:
        """With `--model`, its provider's real key (if it has one) and the environment's own
        endpoint for it (else the vendor's) in place of the scripted server's."""
        if self.model is None:
            return env
        env = dict(env)
        for variable, value in (
            (self.model.key_variable, self.model.key),
            (f"{self.model.provider.upper()}_BASE_URL", self.model.home_url),
        ):
            if value:
                env[variable] = value
            else:
                env.pop(variable, None)
        return env

    # ----- the story ---------------------------------------------------------------------------
    def file_ticket(self, index: int) -> int:
        title, body = script.TICKETS[index]
        with self.steps.step(f"the maintainer files “{title}” and labels it ourobot:ticket") as n:
            issue = self.maintainer.rest.issues.create(
                script.OWNER, script.REPO, title=title, body=body
            ).parsed_data
            self.maintainer.rest.issues.add_labels(
                script.OWNER, script.REPO, issue.number, labels=["ourobot:ticket"]
            )
            reply = wait_for(
                "ourobot's answer on the ticket", lambda: self.bot_comment(issue.number)
            )
            n(f"ourobot on #{issue.number}: {first_line(reply)}")
            return int(issue.number)

    def ticket_1(self) -> TicketResult:
        number = self.file_ticket(0)
        result = TicketResult(number)
        branch = f"ourobot/issue-{number}"
        with self.steps.step(f"ourobot works #{number} and opens a pull request") as note:
            made = partial(self.pull_or_why_not, number, branch)
            pull = wait_for(f"ourobot's pull request from {branch}", made, CYCLE_WAIT_S)
            result.pr, head = int(pull["number"]), str(pull["head"]["sha"])
            note(f"PR #{result.pr} at {head[:10]}: {self.changed(result.pr)}")
            self.note_setup_line(note, 0)
            note("the implementer's edits were validated, committed and tested in a worktree,")
            note("then pushed over git smart HTTP with the token in a one-command header")
        self.checks(head, guards="success", review="failure")
        with self.steps.step("the fix round: the finding goes back to the implementer") as note:
            head = wait_for("a new head on the pull request",
                            partial(self.new_head, result.pr, head), CYCLE_WAIT_S)  # fmt: skip
            note(f"new head {head[:10]}: {self.changed(result.pr)}")
        self.checks(head, guards="success", review="success", ci="success")
        result.merged_sha = self.approve_and_merge(result.pr, head)
        result.outcome = "merged"
        return result

    def ticket_2(self) -> TicketResult:
        number = self.file_ticket(1)
        result = TicketResult(number)
        with self.steps.step(f"ourobot works #{number}: every rewrite is refused") as note:
            blocked = partial(self.labeled, number, "ourobot:blocked")
            labels = wait_for(f"#{number} to be labeled blocked", blocked, CYCLE_WAIT_S)
            note(f"#{number} is labeled {', '.join(labels)}")
            said = wait_for("the blocked explanation", partial(self.blocked_comment, number))
            note(f"ourobot on #{number}: {first_line(said, 300)}")  # whole: it says why
            refusals = self.refusals(f"{script.OWNER}/{script.REPO}#{number}")
            result.rules = sorted({name.removeprefix("refusal:") for name, _ in refusals})
            note(f"{len(refusals)} refusal(s) by {', '.join(result.rules)} before any commit, "
                 "one per iteration: max_deletions_per_iteration is 5")  # fmt: skip
            pull = self.pull_of(f"ourobot/issue-{number}")
            if pull is not None:
                raise DemoFailed(f"a pull request was opened for #{number}: #{pull['number']}")
            note(f"no pull request; INSTALL.md on main keeps its {script.INSTALL_LINES} lines")
            self.note_setup_line(note, 1)
        result.outcome = "blocked"
        return result

    def approve_and_merge(self, pull: int, head: str) -> str:
        with self.steps.step(f"the maintainer approves PR #{pull}; the gate merges it") as note:
            self.maintainer.rest.pulls.create_review(
                script.OWNER, script.REPO, pull, event="APPROVE", commit_id=head
            )

            def merged() -> str | None:
                return merge_commit_of(self.maintainer, script.OWNER, script.REPO, pull)

            sha = wait_for(f"PR #{pull} to be merged by the gate", merged)
            note(f"merged with sha={head[:10]} pinned: {sha[:10]} on main; ticket closed")
            return sha

    def pull_of(self, branch: str) -> dict[str, Any] | None:
        listed: Any = self.maintainer.rest.pulls.list(
            script.OWNER, script.REPO, head=f"{script.OWNER}:{branch}", state="all"
        ).json()
        return listed[0] if isinstance(listed, list) and listed else None

    def pull_or_why_not(self, number: int, branch: str) -> dict[str, Any] | None:
        """The pull request from `branch`; `DemoFailed` with ourobot's explanation as soon as
        the ticket ends without one (a model that cannot be reached, say), not at the timeout."""
        pull = self.pull_of(branch)
        if pull is not None:
            return pull
        if self.labeled(number, "ourobot:blocked") or self.labeled(number, "ourobot:needs-human"):
            said = self.blocked_comment(number)  # posted just after the label
            if said is not None:
                raise DemoFailed(f"#{number} ended without a pull request: {first_line(said, 400)}")
        return None

    def new_head(self, pull: int, old: str) -> str | None:
        head = self.maintainer.rest.pulls.get(script.OWNER, script.REPO, pull).parsed_data.head.sha
        return head if head != old else None

    def changed(self, pull: int) -> str:
        files = self.maintainer.rest.pulls.list_files(script.OWNER, script.REPO, pull)
        entries = cast("list[Any]", files.parsed_data)
        return ", ".join(f"{e.filename} +{e.additions} -{e.deletions}" for e in entries)

    def labeled(self, number: int, label: str) -> list[str] | None:
        issue = self.maintainer.rest.issues.get(script.OWNER, script.REPO, number).parsed_data
        names = [x if isinstance(x, str) else str(x.name) for x in issue.labels]
        return names if label in names else None

    def blocked_comment(self, number: int) -> str | None:
        found = [c for c in self.bot_comments(number) if "Blocked:" in str(c.body)]
        return str(found[-1].body) if found else None

    def refusals(self, ticket: str) -> list[tuple[str, str]]:
        """The refusals the ticket's cycles recorded, as the pattern register counts them."""
        from app.controls.ledger_query import LedgerFilter, search
        from app.controls.patterns import failures
        from app.store import Store

        repo, _, number = ticket.partition("#")
        data_dir = Path(self.ourobot.env["OUROBOT_DATA_DIR"])
        store = Store.open(load_settings(env={}, data_dir=data_dir))
        try:
            rows = search(store, LedgerFilter(repo=repo, number=int(number), kinds=("cycle",)))
        finally:
            store.close()
        return [found for row in rows for found in failures(row) if found[0].startswith("refusal:")]

    def checks(self, head: str, *, guards: str, review: str, ci: str | None = None) -> Any:
        """Wait for each check on `head` and compare; the guards' run."""
        expected = {"ourobot/guards": guards, "ourobot/review": review}
        if ci is not None:
            expected["ci/test"] = ci
        runs = {}
        for name, conclusion in expected.items():
            with self.steps.step(f"{name} on {head[:10]}") as note:
                run = wait_for(f"a completed {name} check", partial(self.check, head, name))
                runs[name] = run
                note(f"{run.conclusion}: {run.output.title}")
                if name == "ourobot/review" and run.conclusion == "failure":
                    note(f"the finding: {script.FINDING.split(' ', 2)[2]}")
                if run.conclusion != conclusion:
                    raise DemoFailed(f"{name} concluded {run.conclusion}, expected {conclusion}")
        return runs["ourobot/guards"]

    def commands(self, ourobot: Ourobot) -> None:
        with self.steps.step("the maintainer comments /ourobot status on #1") as note:
            before = self.bot_comment_count(1)
            self.comment(1, "/ourobot status")
            wait_for("the answer to /ourobot status", lambda: self.more_bot_comments(1, before))
            note("one reply per thread, edited in place: the ticket's ledger rows and its spend")
        with self.steps.step("the maintainer comments /ourobot panic, then /ourobot resume") as n:
            before = self.bot_comment_count(1)
            self.comment(1, "/ourobot panic")
            wait_for("the panic acknowledgement", lambda: self.more_bot_comments(1, before))
            n(f"ourobot: {first_line(self.bot_comment(1) or '')}")
            before = self.bot_comment_count(1)
            self.comment(1, "/ourobot resume")
            wait_for("the resume acknowledgement", lambda: self.more_bot_comments(1, before))
            n(f"ourobot: {first_line(self.bot_comment(1) or '')}")
        accepted = sum("outcome=accepted" in line for line in ourobot.log.read_text().splitlines())
        print(
            f"     ourobot serve verified and recorded {accepted} signed deliveries", file=self.out
        )

    def operator_view(self, ourobot: Ourobot) -> None:
        with self.steps.step("the operator's view: the status page and the ledger") as note:
            page = httpx.get(
                f"{ourobot.url}/status",
                headers={"Authorization": f"Bearer {self.status_token}"},
                timeout=10,
            )
            if page.status_code != 200:
                raise DemoFailed(f"the status page answered {page.status_code}")
            refused = httpx.get(f"{ourobot.url}/status", timeout=10).status_code
            rows = page.text.count('<tr class="entry">')
            note(f"{ourobot.url}/status with the token: {rows} ledger rows; without it: {refused}")
            if self.kept:
                data = ourobot.env["OUROBOT_DATA_DIR"]
                note(f"OUROBOT_DATA_DIR={data} ourobot ledger (or status, patterns) reads them")
            else:
                note("the demo's files go when it ends: with --keep DIR, ourobot ledger, status")
                note("and patterns read them afterwards (OUROBOT_DATA_DIR=DIR/ourobot-data)")

    # ----- looking at GitHub ----------------------------------------------------------------
    def comment(self, number: int, body: str) -> None:
        self.maintainer.rest.issues.create_comment("maintainer", "calculator", number, body=body)

    def bot_comments(self, number: int) -> list[Any]:
        listed = self.maintainer.rest.issues.list_comments(
            "maintainer", "calculator", number, per_page=100
        ).parsed_data
        return [c for c in cast("list[Any]", listed) if c.user and c.user.login == self.bot_login]

    def bot_comment(self, number: int) -> str | None:
        found = self.bot_comments(number)
        return str(found[-1].body) if found else None

    def bot_comment_count(self, number: int) -> int:
        return len(self.bot_comments(number))

    def more_bot_comments(self, number: int, before: int) -> bool | None:
        return True if self.bot_comment_count(number) > before else None

    def check(self, head: str, name: str) -> Any:
        runs = self.maintainer.rest.checks.list_for_ref(
            "maintainer", "calculator", head, check_name=name
        ).parsed_data.check_runs
        done = [r for r in runs if r.status == "completed"]
        return done[0] if done else None


def first_line(text: str, limit: int = 110) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("<!--")]
    return lines[0][:limit] if lines else ""


def rules_of(title: str) -> list[str]:
    """The rule ids in a guards check title ("2 violation(s): deletions, secret")."""
    _, _, listed = title.partition("violation(s): ")
    return [rule.strip() for rule in listed.split(",") if rule.strip()]
