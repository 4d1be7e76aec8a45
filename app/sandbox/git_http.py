"""git smart HTTP for the sandbox's bare repositories: clone, fetch and push with GitHub's auth
rules, by running `git http-backend` as a CGI program for each request.

Pushes are reported to the sandbox (`on_push`) as the refs they changed, read before and after
under the repository's ref lock, so a REST merge running at the same time is never mistaken for
part of a push.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from app.sandbox.gitops import ZERO_SHA, BareRepo, RefUpdate, isolated_env, repo_lock

AuthDecision = Literal["ok", "unauthenticated", "forbidden", "not_found"]

RepoPath = Callable[[str, str], Path | None]
Authorize = Callable[[str, str, str | None, bool], AuthDecision]
OnPush = Callable[[str, str, str, list[RefUpdate]], None]

_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_SERVICES = ("git-upload-pack", "git-receive-pack")
_BACKEND_TIMEOUT_S = 300
_log = logging.getLogger(__name__)


class GitHttp:
    """The three smart-HTTP endpoints of every sandbox repository."""

    def __init__(
        self,
        repo_path: RepoPath,
        authorize: Authorize,
        on_push: OnPush,
        count: Callable[[str], None] = lambda round_trip: None,
    ) -> None:
        self._repo_path = repo_path
        self._authorize = authorize
        self._on_push = on_push
        self._count = count  # every git HTTP round trip, as "METHOD endpoint (service)"

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/{owner}/{repo}.git/info/refs", self._info_refs, methods=["GET"]),
            Route("/{owner}/{repo}.git/git-upload-pack", self._upload_pack, methods=["POST"]),
            Route("/{owner}/{repo}.git/git-receive-pack", self._receive_pack, methods=["POST"]),
        ]

    async def _info_refs(self, request: Request) -> Response:
        service = request.query_params.get("service", "")
        if service not in _SERVICES:
            return PlainTextResponse("Only the smart HTTP protocol is supported.\n", 403)
        return await self._serve(request, service, "info/refs")

    async def _upload_pack(self, request: Request) -> Response:
        return await self._serve(request, "git-upload-pack", "git-upload-pack")

    async def _receive_pack(self, request: Request) -> Response:
        return await self._serve(request, "git-receive-pack", "git-receive-pack")

    async def _serve(self, request: Request, service: str, endpoint: str) -> Response:
        owner, name = request.path_params["owner"], request.path_params["repo"]
        await asyncio.to_thread(self._count, f"{request.method} {endpoint} ({service})")
        if not (_valid_name(owner) and _valid_name(name)):
            return _not_found()
        path = await asyncio.to_thread(self._repo_path, owner, name)
        if path is None:
            return _not_found()
        token = _token(request.headers.get("authorization"))
        write = service == "git-receive-pack"
        decision = await asyncio.to_thread(self._authorize, owner, name, token, write)
        if decision != "ok":
            return _refusal(decision)
        body = await request.body()
        if endpoint != "git-receive-pack":
            return await _run_backend(request, path, endpoint, body)
        async with _holding(repo_lock(path)):
            before = await asyncio.to_thread(BareRepo(path).refs)
            response = await _run_backend(request, path, endpoint, body)
            after = await asyncio.to_thread(BareRepo(path).refs)
        updates = ref_updates(before, after)
        if updates:
            await self._report_push(owner, name, token or "", updates)
        return response

    async def _report_push(
        self, owner: str, name: str, token: str, updates: list[RefUpdate]
    ) -> None:
        # The push has already landed; a failing listener must not turn it into an error for git.
        try:
            await asyncio.to_thread(self._on_push, owner, name, token, updates)
        except Exception:
            _log.exception("on_push failed for %s/%s", owner, name)


def ref_updates(before: dict[str, str], after: dict[str, str]) -> list[RefUpdate]:
    """The refs that differ between two snapshots, by name."""
    names = sorted(set(before) | set(after))
    return [
        RefUpdate(ref, before.get(ref, ZERO_SHA), after.get(ref, ZERO_SHA))
        for ref in names
        if before.get(ref) != after.get(ref)
    ]


def _valid_name(name: str) -> bool:
    return bool(_NAME.match(name)) and ".." not in name and name not in (".", "..")


def _token(header: str | None) -> str | None:
    """The token in an Authorization header: Basic (password, else username), Bearer or token."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() in ("bearer", "token"):
        return value or None
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return password or user or None


def _not_found() -> Response:
    return PlainTextResponse("Repository not found.\n", 404)


def _refusal(decision: AuthDecision) -> Response:
    if decision == "unauthenticated":
        return PlainTextResponse(
            "Authentication required.\n", 401, headers={"WWW-Authenticate": 'Basic realm="GitHub"'}
        )
    if decision == "forbidden":
        return PlainTextResponse("Permission denied.\n", 403)
    return _not_found()


@asynccontextmanager
async def _holding(lock: threading.Lock) -> AsyncIterator[None]:
    """Hold a thread lock from async code without blocking the event loop."""
    acquiring = asyncio.ensure_future(asyncio.to_thread(lock.acquire))
    try:
        await asyncio.shield(acquiring)
    except asyncio.CancelledError:
        # The thread may still get the lock after we stop waiting: hand it straight back.
        acquiring.add_done_callback(lambda _: lock.release())
        raise
    try:
        yield
    finally:
        lock.release()


def _cgi_env(request: Request, path: Path, endpoint: str, body: bytes) -> dict[str, str]:
    headers = request.headers
    env = {
        "GIT_PROJECT_ROOT": str(path.parent),
        "PATH_INFO": f"/{path.name}/{endpoint}",
        "REQUEST_METHOD": request.method,
        "QUERY_STRING": request.url.query,
        "GIT_HTTP_EXPORT_ALL": "1",
        # http-backend only runs receive-pack for an authenticated user; we did the auth.
        "REMOTE_USER": "x-access-token",
        "REMOTE_ADDR": request.client.host if request.client else "127.0.0.1",
        "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
    }
    if request.method == "POST":
        env["CONTENT_TYPE"] = headers.get("content-type", "")
        env["CONTENT_LENGTH"] = str(len(body))
    if "content-encoding" in headers:
        env["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
    if "git-protocol" in headers:
        env["HTTP_GIT_PROTOCOL"] = headers["git-protocol"]
        env["GIT_PROTOCOL"] = headers["git-protocol"]
    return isolated_env(env)


async def _run_backend(request: Request, path: Path, endpoint: str, body: bytes) -> Response:
    proc = await asyncio.create_subprocess_exec(
        "git",
        "http-backend",
        env=_cgi_env(request, path, endpoint, body),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(body), _BACKEND_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return PlainTextResponse("git http-backend timed out.\n", 504)
    if err:
        _log.debug("git http-backend stderr: %s", err.decode("utf-8", "replace").strip())
    return cgi_response(out)


def cgi_response(output: bytes) -> Response:
    """A Starlette response from a CGI program's output (headers, blank line, body)."""
    head, sep, body = output.partition(b"\r\n\r\n")
    if not sep:
        head, sep, body = output.partition(b"\n\n")
    if not sep:
        return PlainTextResponse("git http-backend gave no response.\n", 500)
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key.lower() == "status":
            status = int(value.split(" ", 1)[0])
        elif key and key.lower() != "content-length":
            headers[key] = value
    return Response(body, status_code=status, headers=headers)
