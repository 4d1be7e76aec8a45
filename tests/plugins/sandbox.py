"""Pytest fixtures for the local GitHub sandbox.

- `sandbox_server` (session): one running `SandboxServer` on 127.0.0.1.
- `sandbox` (function): resets the server's state and yields a `SandboxHandle` with `.url`,
  `.control` (a `SandboxControl`), `.app` (the App's id, slug, key, bot login) and helpers:
  `seed_project()`, `create_repo()` (repo + owner + installation in one call), `github_app()`,
  `github_installation()`, `github_user()`, `git()`.
- `webhook_sink` (function): a real HTTP listener on 127.0.0.1 that the sandbox's App webhook
  points at; it records every delivery and can verify signatures with githubkit.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from githubkit import AppAuthStrategy, AppInstallationAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.webhooks import verify

from app.sandbox.control import SandboxControl
from app.sandbox.server import SandboxServer
from tests.plugins.github_traffic import TrafficLog

SEED_FILES = {
    "README.md": "# demo\n\nA tiny project the sandbox seeds repositories with.\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add() -> None:\n"
    "    assert add(2, 3) == 5\n",
}


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """githubkit builds an httpx client per request; sharing one SSL context saves ~30 ms each."""
    return ssl.create_default_context()


def _client_options(options: dict[str, Any]) -> dict[str, Any]:
    options.setdefault("http_cache", False)
    options.setdefault("ssl_verify", _ssl_context())
    return options


@dataclass(frozen=True)
class AppInfo:
    id: int
    slug: str
    client_id: str
    private_key_pem: str
    private_key_path: str
    bot_login: str
    bot_id: int


@dataclass(frozen=True)
class SeededRepo:
    owner: str
    name: str
    full_name: str
    owner_token: str
    installation_id: int | None
    clone_url: str
    head_sha: str
    default_branch: str


@dataclass
class SandboxHandle:
    url: str
    control: SandboxControl
    app: AppInfo
    server: SandboxServer
    tmp_path: Path
    tokens: dict[str, str] = field(default_factory=dict)  # login -> personal token

    def seed_project(self, files: dict[str, str] | None = None, *, name: str = "seed") -> Path:
        """A directory holding a tiny Python project (or `files`), under tmp_path."""
        root = self.tmp_path / name
        for rel, text in (files if files is not None else SEED_FILES).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        root.mkdir(parents=True, exist_ok=True)
        return root

    def requests(self, method: str, path: str) -> list[dict[str, Any]]:
        """The REST requests the sandbox served for `method path`, oldest first: each with its
        time `t`, `status`, `identity` (e.g. `app:1`, `anonymous`) and `route`."""
        log = self.control.stats()["log"]
        return [e for e in log if e["method"] == method and e["path"] == path]

    def create_user(self, login: str, *, type: str = "User") -> str:
        token = self.control.create_user(login, type=type)
        self.tokens[login] = token
        return token

    def create_repo(
        self,
        owner: str = "octo",
        name: str = "demo",
        *,
        files: dict[str, str] | None = None,
        install: bool = True,
        private: bool = True,
        default_branch: str = "main",
    ) -> SeededRepo:
        """A repo seeded with the tiny project, its owner created if needed, the App installed."""
        if owner not in self.tokens:
            self.create_user(owner)
        seed = self.seed_project(files, name=f"seed-{owner}-{name}")
        made = self.control.create_repo(
            owner, name, seed, default_branch=default_branch, private=private
        )
        installation = self.control.install_app(owner, [name]) if install else None
        return SeededRepo(
            owner=owner,
            name=name,
            full_name=made["full_name"],
            owner_token=self.tokens[owner],
            installation_id=installation,
            clone_url=made["clone_url"],
            head_sha=made["head_sha"],
            default_branch=default_branch,
        )

    def github_app(self, **options: Any) -> GitHub[AppAuthStrategy]:
        """githubkit authenticated as the App (JWT)."""
        auth = AppAuthStrategy(self.app.id, self.app.private_key_pem)
        return GitHub(auth, base_url=self.url, **_client_options(options))

    def github_installation(
        self, installation_id: int, **options: Any
    ) -> GitHub[AppInstallationAuthStrategy]:
        """githubkit acting as an installation (JWT -> access token, as in production)."""
        auth = AppAuthStrategy(self.app.id, self.app.private_key_pem)
        return GitHub(
            auth.as_installation(installation_id), base_url=self.url, **_client_options(options)
        )

    def github_user(self, login: str, **options: Any) -> GitHub[TokenAuthStrategy]:
        token = TokenAuthStrategy(self.tokens[login])
        return GitHub(token, base_url=self.url, **_client_options(options))

    def git(
        self, *args: str, cwd: Path | None = None, token: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run the real git client, isolated from the host config, token sent as a header."""
        home = self.tmp_path / "git-home"
        home.mkdir(exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "Test Author",
            "GIT_AUTHOR_EMAIL": "author@example.invalid",
            "GIT_COMMITTER_NAME": "Test Author",
            "GIT_COMMITTER_EMAIL": "author@example.invalid",
        }
        extra = ["-c", f"http.extraHeader=Authorization: Bearer {token}"] if token else []
        return subprocess.run(
            ["git", *extra, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=check,
            timeout=60,
        )


@pytest.fixture(scope="session")
def sandbox_server(
    tmp_path_factory: pytest.TempPathFactory, github_traffic: TrafficLog
) -> Iterator[SandboxServer]:
    server = SandboxServer(
        data_dir=tmp_path_factory.mktemp("sandbox-data"),
        # What the covered tests send and get, for the check against GitHub's description.
        request_sink=github_traffic.request,
        delivery_sink=github_traffic.delivery,
    ).start()
    yield server
    server.stop()


def open_handle(server: SandboxServer, tmp_path: Path) -> SandboxHandle:
    """Reset the server and wrap it in a handle (what the `sandbox` fixture yields)."""
    control = server.control()
    control.reset()
    info = control.app_info()
    app = AppInfo(
        id=info["id"],
        slug=info["slug"],
        client_id=info["client_id"],
        private_key_pem=info["private_key_pem"],
        private_key_path=info["private_key_path"],
        bot_login=info["bot_login"],
        bot_id=info["bot_id"],
    )
    return SandboxHandle(server.url, control, app, server, tmp_path)


@pytest.fixture
def sandbox(sandbox_server: SandboxServer, tmp_path: Path) -> Iterator[SandboxHandle]:
    handle = open_handle(sandbox_server, tmp_path)
    yield handle
    handle.control.close()


# ----- the webhook sink ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Delivery:
    event: str
    guid: str
    headers: dict[str, str]
    body: bytes

    @property
    def payload(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.body)
        return result

    @property
    def action(self) -> str | None:
        return self.payload.get("action")


class WebhookSink:
    """Records signed deliveries; `status` sets what it answers (e.g. 500 to fail them)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.status = 202
        self.deliveries: list[Delivery] = []
        self._cond = threading.Condition()
        sink = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                delivery = Delivery(
                    headers.get("x-github-event", ""),
                    headers.get("x-github-delivery", ""),
                    headers,
                    body,
                )
                with sink._cond:
                    sink.deliveries.append(delivery)
                    sink._cond.notify_all()
                self.send_response(sink.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/webhooks"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def verify(self, delivery: Delivery) -> bool:
        """Both signatures check out with githubkit against the sink's secret."""
        return self.verify_with(self.secret, delivery)

    @staticmethod
    def verify_with(secret: str, delivery: Delivery) -> bool:
        headers = delivery.headers
        return verify(secret, delivery.body, headers["x-hub-signature-256"]) and verify(
            secret, delivery.body, headers["x-hub-signature"]
        )

    def of(self, event: str, action: str | None = None) -> list[Delivery]:
        with self._cond:
            return [d for d in self.deliveries if d.event == event and action in (None, d.action)]

    def wait_for(
        self, event: str, action: str | None = None, *, count: int = 1, timeout_s: float = 15
    ) -> list[Delivery]:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while len(found := self.of(event, action)) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(d.event, d.action) for d in self.deliveries]
                    raise AssertionError(f"no {count} x {event}.{action} delivered; saw {seen}")
                self._cond.wait(left)
            return found

    def wait_for_one(
        self,
        event: str,
        action: str | None,
        where: Callable[[Delivery], bool],
        *,
        timeout_s: float = 15,
    ) -> Delivery:
        """The first delivery of that kind that `where` accepts (others may arrive around it)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not (found := [d for d in self.of(event, action) if where(d)]):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching {event}.{action} delivered")
                self._cond.wait(left)
            return found[0]


@pytest.fixture
def webhook_sink(sandbox: SandboxHandle) -> Iterator[WebhookSink]:
    sink = WebhookSink(secret="sink-secret-" + str(os.getpid()))
    sandbox.control.set_webhook(sink.url, sink.secret)
    yield sink
    sandbox.control.set_webhook(None)
    sink.close()
