"""`ourobot demo`: the loop against the local GitHub sandbox, with no accounts and no Redis.

This is the one product module (with `ourobot sandbox`) that drives the sandbox: it starts the
GitHub double and two fake model servers, runs the real `ourobot serve` in embedded mode
against them, plays the people (a maintainer, and the implementer whose loop is a later
milestone), and prints each step as it happens. It shows the lesson ourobot is built on: a
review panel (here one that approves everything) would approve a destructive rewrite; the
guards, a measurement, refuse it, and because they run first no model is paid to review it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TextIO, TypeVar, cast

import httpx
from githubkit import GitHub, TokenAuthStrategy

from app.github_client import GitHubClients
from app.settings import load_settings
from app.workspace.git import git

INSTALL_LINES = 256
DEMO_FILES = {
    "README.md": "# calculator\n\nA tiny calculator used by the ourobot demo.\n",
    "calculator/__init__.py": "",
    "calculator/ops.py": (
        "def add(a: float, b: float) -> float:\n    return a + b\n\n\n"
        "def subtract(a: float, b: float) -> float:\n    return a - b\n"
    ),
    "tests/test_ops.py": (
        "from calculator.ops import add, subtract\n\n\n"
        "def test_add() -> None:\n    assert add(2, 3) == 5\n\n\n"
        "def test_subtract() -> None:\n    assert subtract(5, 3) == 2\n"
    ),
    "INSTALL.md": "# Installing calculator\n\n"
    + "".join(f"{n}. A careful installation step, written once and kept.\n" for n in range(254)),
    ".github/ourobot.yml": (
        "version: 1\n"
        "project:\n  name: calculator\n  description: A tiny calculator.\n"
        'review:\n  models: ["anthropic:demo-claude", "openai:demo-gpt"]\n  quorum: 2\n'
    ),
}
MULTIPLY = "\n\ndef multiply(a: float, b: float) -> float:\n    return a * b\n"
WAIT_S = 60.0
T = TypeVar("T")


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
        self.number += 1
        began = time.monotonic()
        print(f"[{self.number:>2}] {title} ...", file=self.out, flush=True)

        def note(text: str) -> None:
            print(f"     {text}", file=self.out, flush=True)

        yield note
        print(f"     done in {time.monotonic() - began:.2f}s", file=self.out, flush=True)

    def total(self) -> float:
        return time.monotonic() - self.started


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = WAIT_S) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.2)
    raise DemoFailed(f"{what}: nothing after {timeout_s:.0f}s")


class Ourobot:
    """The real `ourobot serve` (embedded mode) as a child process, logging to a file."""

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
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def run_demo(out: TextIO, *, keep_dir: Path | None = None) -> int:
    """Run the demo end to end; returns the exit code."""
    workdir = keep_dir or Path(tempfile.mkdtemp(prefix="ourobot-demo-"))
    try:
        Demo(out, workdir).run()
        return 0
    except DemoFailed as exc:
        print(f"demo failed: {exc}", file=out)
        return 1
    finally:
        if keep_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


class Demo:
    def __init__(self, out: TextIO, workdir: Path) -> None:
        self.out = out
        self.workdir = workdir
        self.steps = Steps(out)
        self.keep: list[Any] = []  # githubkit namespaces hold their clients weakly

    def run(self) -> None:
        from app.sandbox.server import SandboxServer  # the demo is the sandbox's product user
        from reviewers.fake_servers import (
            FAKE_ANTHROPIC_KEY,
            FAKE_OPENAI_KEY,
            FakeModelServer,
            Text,
        )

        server = SandboxServer(data_dir=self.workdir / "sandbox")
        anthropic = FakeModelServer("anthropic", api_key=FAKE_ANTHROPIC_KEY)
        openai = FakeModelServer("openai", api_key=FAKE_OPENAI_KEY)
        ourobot: Ourobot | None = None
        try:
            with self.steps.step("start the local GitHub sandbox") as note:
                server.start()
                note(f"GitHub stand-in at {server.url} (REST, git smart HTTP, signed webhooks)")
            with self.steps.step("start two fake model servers (Anthropic and OpenAI APIs)") as n:
                anthropic.start()
                openai.start()
                # A panel that approves everything: the point is what happens anyway.
                anthropic.default("demo-claude", Text("Looks complete.\nVERDICT: APPROVE"))
                openai.default("demo-gpt", Text("No issues found.\nVERDICT: APPROVE"))
                n(f"anthropic:demo-claude at {anthropic.base_url}")
                n(f"openai:demo-gpt at {openai.base_url}")
            control = server.control()
            with self.steps.step("create a maintainer and the repository calculator") as note:
                maintainer_token = control.create_user("maintainer")
                seed = self.workdir / "seed"
                for rel, text in DEMO_FILES.items():
                    (seed / rel).parent.mkdir(parents=True, exist_ok=True)
                    (seed / rel).write_text(text)
                repo = control.create_repo("maintainer", "calculator", seed)
                installation_id = control.install_app("maintainer", ["calculator"])
                note(f"{repo['full_name']} at {repo['head_sha'][:10]}, the ourobot App installed")
            app_info = control.app_info()
            secret = secrets.token_hex(20)
            env = self.serve_env(app_info, server.url, secret, anthropic, openai)
            ourobot = Ourobot(env, self.workdir / "ourobot-serve.log")
            self.serve_log, self.seen_deliveries = ourobot.log, set[str]()
            with self.steps.step("start `ourobot serve` in embedded mode (no Redis)") as note:
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
            self.ticket()
            head = self.implementer_pull("ourobot/issue-1", self.add_multiply, "Add multiply")
            self.checks(head, guards="success", review="success")
            asked = len(anthropic.requests) + len(openai.requests)
            head = self.implementer_pull(
                "ourobot/issue-2", self.rewrite_install, "Tidy up INSTALL.md"
            )
            self.checks(head, guards="failure", review="failure")
            more = len(anthropic.requests) + len(openai.requests) - asked
            print(f"     model requests for this pull request: {more}", file=self.out)
            self.commands(ourobot)
            print(
                f"demo finished in {self.steps.total():.1f}s. The panel approved the first pull "
                "request; the guards refused the destructive one before any model was paid to "
                "review it. The merge button stays with a person.",
                file=self.out,
            )
        finally:
            if ourobot is not None:
                ourobot.stop()
            anthropic.stop()
            openai.stop()
            server.stop()

    def serve_env(
        self, app_info: dict[str, Any], url: str, secret: str, anthropic: Any, openai: Any
    ) -> dict[str, str]:
        from reviewers.fake_servers import FAKE_ANTHROPIC_KEY, FAKE_OPENAI_KEY

        key_path = self.workdir / "app.pem"
        key_path.write_text(app_info["private_key_pem"])
        key_path.chmod(0o600)
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "HOME", "TMPDIR")}
        return {
            **keep,
            "OUROBOT_APP_ID": str(app_info["id"]),
            "OUROBOT_PRIVATE_KEY_PATH": str(key_path),
            "OUROBOT_WEBHOOK_SECRET": secret,
            "OUROBOT_GITHUB_API_URL": url,
            "OUROBOT_DATA_DIR": str(self.workdir / "ourobot-data"),
            "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY,
            "ANTHROPIC_BASE_URL": anthropic.base_url,
            "OPENAI_API_KEY": FAKE_OPENAI_KEY,
            "OPENAI_BASE_URL": openai.base_url,
        }

    # ----- the story ---------------------------------------------------------------------------
    def ticket(self) -> None:
        with self.steps.step("a maintainer files issue #1 and labels it ourobot:ticket") as note:
            issue = self.maintainer.rest.issues.create(
                "maintainer", "calculator", title="Add multiply", body="calculator needs a *."
            ).parsed_data
            self.maintainer.rest.issues.add_labels(
                "maintainer", "calculator", issue.number, labels=["ourobot:ticket"]
            )
            reply = wait_for("ourobot's answer on the ticket", lambda: self.bot_comment(1))
            note(f"ourobot on #1: {first_line(reply)}")

    def implementer_pull(self, branch: str, change: Callable[[Path], str], title: str) -> str:
        """Play the implementer (its model-driven loop is a later milestone): push, open a PR."""
        with self.steps.step(f"the implementer pushes {branch} and opens a pull request") as note:
            token = self.clients.git_token(self.installation_id)
            clone = self.workdir / branch.replace("/", "-")
            git(["clone", "-q", self.clone_url, str(clone)], token=token)
            message = change(clone)
            git(["checkout", "-q", "-b", branch], cwd=clone)
            git(["commit", "-q", "-am", message], cwd=clone)
            git(["push", "-q", "origin", branch], cwd=clone, token=token)
            head = git(["rev-parse", "HEAD"], cwd=clone).stdout.strip()
            pull = self.bot.rest.pulls.create(
                "maintainer", "calculator", title=title, head=branch, base="main",
                body="Closes #1" if branch.endswith("-1") else "Housekeeping.",
            ).parsed_data  # fmt: skip
            files = self.bot.rest.pulls.list_files("maintainer", "calculator", pull.number)
            entries = cast("list[Any]", files.parsed_data)
            changed = ", ".join(f"{e.filename} +{e.additions} -{e.deletions}" for e in entries)
            note(f"PR #{pull.number} at {head[:10]}: {changed}")
            note("cloned and pushed over git smart HTTP; the token went in a header, never a URL")
            delivery = wait_for("the signed pull_request.opened webhook", self.opened_delivery)
            note(f"ourobot serve verified and recorded pull_request.opened (delivery {delivery})")
            return head

    def opened_delivery(self) -> str | None:
        """The newest pull_request.opened delivery the receiver accepted, once it is new."""
        found = [
            line.split("delivery=")[1].split()[0]
            for line in self.serve_log.read_text().splitlines()
            if "event=pull_request action=opened outcome=accepted" in line
        ]
        fresh = [d for d in found if d not in self.seen_deliveries]
        if not fresh:
            return None
        self.seen_deliveries.add(fresh[-1])
        return fresh[-1][:8]

    def add_multiply(self, clone: Path) -> str:
        ops = clone / "calculator" / "ops.py"
        ops.write_text(ops.read_text() + MULTIPLY)
        return "Add multiply (#1)"

    def rewrite_install(self, clone: Path) -> str:
        # The seed's TICKET-004: a "tidy-up" that cuts the install guide from 256 to 36 lines.
        install = clone / "INSTALL.md"
        install.write_text("".join(install.read_text().splitlines(keepends=True)[:36]))
        return "Tidy up INSTALL.md"

    def checks(self, head: str, *, guards: str, review: str) -> None:
        for name, expected in (("ourobot/guards", guards), ("ourobot/review", review)):
            with self.steps.step(f"{name} on {head[:10]}") as note:
                run = wait_for(f"a completed {name} check", partial(self.check, head, name))
                note(f"{run.conclusion}: {run.output.title}")
                if run.conclusion != expected:
                    raise DemoFailed(f"{name} concluded {run.conclusion}, expected {expected}")

    def commands(self, ourobot: Ourobot) -> None:
        with self.steps.step("the maintainer comments /ourobot help") as note:
            before = self.bot_comment_count(1)
            self.comment(1, "/ourobot help")
            wait_for("the answer to /ourobot help", lambda: self.more_bot_comments(1, before))
            note("answered once, in place (a hidden marker finds it again)")
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


def first_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("<!--")]
    return lines[0][:110] if lines else ""
