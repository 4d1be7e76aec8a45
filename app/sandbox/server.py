"""The sandbox server: the Starlette app (REST, git smart HTTP, `/_sandbox` control) and
`SandboxServer`, which runs it with uvicorn in a background thread on 127.0.0.1.

    server = SandboxServer(port=0).start()     # returns once it listens
    control = server.control()                 # SandboxControl for setup
    ...
    server.stop()
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import BaseRoute

from app.sandbox import (
    api_actions,
    api_app,
    api_branches,
    api_checks,
    api_issues,
    api_pulls,
    api_repos,
    manifests,
    pushes,
)
from app.sandbox.ci import CiRunner
from app.sandbox.control import SandboxControl, control_routes
from app.sandbox.faults import FaultBook
from app.sandbox.git_http import AuthDecision, GitHttp
from app.sandbox.gitops import RefUpdate
from app.sandbox.routing import Services, fallback_routes
from app.sandbox.runner import WorkflowRunner
from app.sandbox.state import DEFAULT_TOKEN_TTL_S, SandboxState
from app.sandbox.tap import DeliverySink, RequestSink, RequestTap
from app.sandbox.webhooks import WebhookDispatcher

START_TIMEOUT_S = 15.0
KEY_FILE = "app-private-key.pem"
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def build_app(sb: Services, admin_token: str, key_path: Path | None = None) -> Starlette:
    def repo_path(owner: str, name: str) -> Path | None:
        with sb.state.lock:
            repo = sb.state.repo(owner, name)
            return repo.path if repo else None

    def authorize(owner: str, name: str, token: str | None, write: bool) -> AuthDecision:
        return pushes.authorize(sb, owner, name, token, write)

    def on_push(owner: str, name: str, token: str, updates: list[RefUpdate]) -> None:
        pushes.on_push(sb, owner, name, token, updates)

    def count_git(round_trip: str) -> None:
        with sb.state.lock:
            sb.faults.git[round_trip] += 1

    routes: list[BaseRoute] = [
        *control_routes(sb, admin_token, key_path),
        *api_app.routes(sb),
        *manifests.routes(sb),
        # Before api_repos: `/commits/{ref:path}` would otherwise swallow `/commits/x/status`.
        *api_checks.routes(sb),
        *api_actions.routes(sb),
        *api_repos.routes(sb),
        *api_issues.routes(sb),
        *api_pulls.routes(sb),
        *api_branches.routes(sb),
        *GitHttp(repo_path, authorize, on_push, count_git).routes(),
        *fallback_routes(sb, ALL_METHODS),
    ]
    return Starlette(routes=routes)


class SandboxServer:
    """Runs the sandbox in a background thread; `start()` returns once it accepts connections."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: Path | str | None = None,
        *,
        admin_token: str | None = None,
        token_ttl_s: float = DEFAULT_TOKEN_TTL_S,
        fault_seed: int = 0,
        app_slug: str = "ourobot-sandbox",
        request_sink: RequestSink | None = None,
        delivery_sink: DeliverySink | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self._owns_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="sandbox-"))
        self.admin_token = admin_token or "sbx_" + secrets.token_hex(16)
        self._token_ttl_s = token_ttl_s
        self._fault_seed = fault_seed
        self._app_slug = app_slug
        self._request_sink = request_sink
        self._delivery_sink = delivery_sink
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.services: Services | None = None
        self.app: Starlette | None = None
        self.url = ""

    @property
    def key_path(self) -> Path:
        return self.data_dir / KEY_FILE

    @property
    def state(self) -> SandboxState:
        assert self.services is not None, "the sandbox is not started"
        return self.services.state

    def start(self) -> SandboxServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        state = SandboxState(self.data_dir, app_slug=self._app_slug, token_ttl_s=self._token_ttl_s)
        self._write_key(state.app.private_key_pem)
        hooks = WebhookDispatcher(state, self._delivery_sink)
        ci = CiRunner()
        runner = WorkflowRunner()
        sb = Services(state, hooks, FaultBook(seed=self._fault_seed), ci, runner)
        self.services = sb
        self.app = build_app(sb, self.admin_token, self.key_path)
        served: Any = self.app
        if self._request_sink is not None:
            served = RequestTap(self.app, self._request_sink)
        config = uvicorn.Config(
            served,
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="sandbox-http", daemon=True)
        self._thread.start()
        self._wait_started()
        sockets = self._server.servers[0].sockets
        port = sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{port}"
        state.base_url = self.url
        hooks.start()
        ci.start(sb)
        runner.start(sb)
        return self

    def _wait_started(self) -> None:
        assert self._server is not None
        assert self._thread is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the sandbox could not listen on {self.host}:{self.port}")
            if time.monotonic() > deadline:
                raise RuntimeError("the sandbox did not start in time")
            time.sleep(0.01)

    def _write_key(self, pem: str) -> None:
        fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(pem)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self.services is not None:
            self.services.hooks.stop()
            self.services.ci.stop()
            self.services.runner.stop()
        if self._owns_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def control(self) -> SandboxControl:
        return SandboxControl(self.url, self.admin_token)

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
