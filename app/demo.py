"""`ourobot demo`: ourobot against the local GitHub sandbox, with no accounts and no Redis.

This is the one product module (with `ourobot sandbox`) that drives the sandbox: it starts the
double, plays the people, and prints each step as it happens, so a new user sees what ourobot
does before installing the App anywhere real.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import queue
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

from githubkit import webhooks
from githubkit_schemas.latest.models import WebhookPullRequestOpened

from app.github_client import GitHubClients
from app.settings import Settings, load_settings
from app.workspace.git import git

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
    ".github/ourobot.yml": "version: 1\nproject:\n  name: calculator\n",
}
MULTIPLY = "\n\ndef multiply(a: float, b: float) -> float:\n    return a * b\n"
WEBHOOK_WAIT_S = 15.0


@dataclass(frozen=True)
class ReceivedWebhook:
    event: str
    delivery_id: str
    body: bytes
    signature: str
    signature_ok: bool


class WebhookListener:
    """A local HTTP endpoint that checks each delivery's signature the way GitHub's docs say."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: queue.Queue[ReceivedWebhook] = queue.Queue()
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                signature = self.headers.get("X-Hub-Signature-256", "")
                expected = (
                    "sha256=" + hmac.new(listener.secret.encode(), body, hashlib.sha256).hexdigest()
                )
                ok = hmac.compare_digest(signature, expected)
                listener.received.put(
                    ReceivedWebhook(
                        event=self.headers.get("X-GitHub-Event", ""),
                        delivery_id=self.headers.get("X-GitHub-Delivery", ""),
                        body=body,
                        signature=signature,
                        signature_ok=ok,
                    )
                )
                self.send_response(202 if ok else 401)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/webhooks"

    def start(self) -> WebhookListener:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for(self, event: str, action: str, timeout_s: float) -> ReceivedWebhook | None:
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                hook = self.received.get(timeout=left)
            except queue.Empty:
                return None
            if hook.event == event and json.loads(hook.body).get("action") == action:
                return hook
        return None


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
        notes: list[str] = []
        print(f"[{self.number:>2}] {title} ...", file=self.out, flush=True)
        yield notes.append
        elapsed = time.monotonic() - began
        detail = f" — {'; '.join(notes)}" if notes else ""
        print(f"     done in {elapsed:.2f}s{detail}", file=self.out, flush=True)

    def total(self) -> float:
        return time.monotonic() - self.started


class DemoFailed(Exception):
    """A demo step did not see what it should have; the message says which."""


def run_demo(out: TextIO, *, keep_dir: Path | None = None) -> int:
    """Run the demo end to end; returns the exit code."""
    from app.sandbox.server import SandboxServer  # the demo is the sandbox's one product user

    workdir = keep_dir or Path(tempfile.mkdtemp(prefix="ourobot-demo-"))
    steps = Steps(out)
    server = SandboxServer(data_dir=workdir / "sandbox")
    listener = WebhookListener(secrets.token_hex(20))
    try:
        with steps.step("start the local GitHub sandbox") as note:
            server.start()
            note(server.url)
        control = server.control()
        with steps.step("create a maintainer and a repository with a small Python project") as note:
            control.create_user("maintainer")
            seed = workdir / "seed"
            for rel, text in DEMO_FILES.items():
                (seed / rel).parent.mkdir(parents=True, exist_ok=True)
                (seed / rel).write_text(text)
            repo = control.create_repo("maintainer", "calculator", seed)
            note(f"{repo['full_name']} at {repo['head_sha'][:10]}")
        with steps.step(
            "install the ourobot App and point its webhook at a local listener"
        ) as note:
            installation_id = control.install_app("maintainer", ["calculator"])
            listener.start()
            control.set_webhook(listener.url, listener.secret)
            note(f"installation {installation_id}, webhook {listener.url}")
        settings = sandbox_settings(control.app_info(), server.url, workdir)
        clients = GitHubClients(settings)
        with steps.step("authenticate as the App (JWT) and as the installation (token)") as note:
            as_app = clients.app()  # githubkit's namespaces hold the client weakly: keep it
            app = as_app.rest.apps.get_authenticated().parsed_data
            github = clients.installation(installation_id)
            seen = github.rest.repos.get("maintainer", "calculator").parsed_data
            note(f"App {app.slug if app else '?'}; installation sees {seen.full_name}")
        with steps.step("clone over git smart HTTP with the installation token") as note:
            token = github.rest.apps.create_installation_access_token(
                installation_id
            ).parsed_data.token
            clone = workdir / "clone"
            git(["clone", "-q", repo["clone_url"], str(clone)], token=token)
            note(f"{len(list(clone.rglob('*.py')))} Python files, token never written to disk")
        with steps.step("commit a change on branch ourobot/issue-1 and push it") as note:
            issue = github.rest.issues.create(
                "maintainer", "calculator", title="Add multiply", body="calculator needs a *."
            ).parsed_data
            ops = clone / "calculator" / "ops.py"
            ops.write_text(ops.read_text() + MULTIPLY)
            git(["checkout", "-q", "-b", "ourobot/issue-1"], cwd=clone)
            git(["commit", "-q", "-am", "Add multiply (#1)"], cwd=clone)
            git(["push", "-q", "origin", "ourobot/issue-1"], cwd=clone, token=token)
            head = git(["rev-parse", "HEAD"], cwd=clone).stdout.strip()
            note(f"issue #{issue.number}, head {head[:10]}")
        with steps.step("open a pull request through githubkit") as note:
            pull = github.rest.pulls.create(
                "maintainer",
                "calculator",
                title="Add multiply",
                head="ourobot/issue-1",
                base="main",
                body=f"Closes #{issue.number}",
            ).parsed_data
            files = github.rest.pulls.list_files("maintainer", "calculator", pull.number)
            entries = cast("list[Any]", files.parsed_data)
            changed = [(e.filename, e.additions, e.deletions) for e in entries]
            note(f"PR #{pull.number}: {changed}")
        with steps.step("receive the signed pull_request.opened webhook") as note:
            hook = listener.wait_for("pull_request", "opened", WEBHOOK_WAIT_S)
            if hook is None:
                raise DemoFailed(f"no pull_request.opened webhook within {WEBHOOK_WAIT_S:.0f}s")
            if not hook.signature_ok:
                raise DemoFailed("the pull_request.opened webhook had a bad signature")
            # The one model this event needs: parsing against every webhook type costs seconds.
            event = WebhookPullRequestOpened.model_validate_json(hook.body)
            verified = webhooks.verify(listener.secret, hook.body, hook.signature)
            note(
                f"delivery {hook.delivery_id[:8]}, {type(event).__name__}, "
                f"signature verified={verified}, head {event.pull_request.head.sha[:10]}"
            )
            if event.pull_request.head.sha != head:
                raise DemoFailed("the webhook names a different head commit than we pushed")
        print(
            f"demo finished in {steps.total():.1f}s: sandbox, App auth, git over HTTP, "
            "a pull request and its signed webhook all worked.",
            file=out,
        )
        return 0
    except DemoFailed as exc:
        print(f"demo failed: {exc}", file=out)
        return 1
    finally:
        listener_stop(listener)
        server.stop()
        if keep_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def listener_stop(listener: WebhookListener) -> None:
    if listener._thread.is_alive():
        listener.stop()


def sandbox_settings(app_info: dict[str, Any], url: str, workdir: Path) -> Settings:
    """Server settings for an ourobot talking to the sandbox instead of GitHub."""
    return load_settings(
        env={},
        app_id=app_info["id"],
        private_key=app_info["private_key_pem"],
        github_api_url=url,
        data_dir=workdir / "ourobot-data",
        webhook_secret=secrets.token_hex(20),
    )
