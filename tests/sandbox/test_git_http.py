"""GitHttp served by uvicorn on 127.0.0.1 and driven by the real git client over real HTTP."""

from __future__ import annotations

import base64
import gzip
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from app.sandbox.git_http import AuthDecision, GitHttp, _token, ref_updates
from app.sandbox.gitops import ZERO_SHA, BareRepo, RefUpdate, repo_lock

pytestmark = pytest.mark.slow

WRITER, READER = "tok-write", "tok-read"


@dataclass
class World:
    """What the test server knows: repos, tokens and what it was told about."""

    repos: dict[tuple[str, str], Path] = field(default_factory=dict)
    tokens: dict[str, bool] = field(default_factory=dict)  # token -> may write
    pushes: list[tuple[str, str, str, list[RefUpdate]]] = field(default_factory=list)
    decisions: list[AuthDecision] = field(default_factory=list)
    lookups: list[tuple[str, str]] = field(default_factory=list)

    def repo_path(self, owner: str, repo: str) -> Path | None:
        self.lookups.append((owner, repo))
        return self.repos.get((owner, repo))

    def authorize(self, owner: str, repo: str, token: str | None, write: bool) -> AuthDecision:
        decision: AuthDecision
        if token is None or token not in self.tokens:
            decision = "unauthenticated"
        elif write and not self.tokens[token]:
            decision = "forbidden"
        else:
            decision = "ok"
        self.decisions.append(decision)
        return decision

    def on_push(self, owner: str, repo: str, token: str, updates: list[RefUpdate]) -> None:
        self.pushes.append((owner, repo, token, updates))


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, World]]:
    world = World(tokens={WRITER: True, READER: False})
    app = Starlette(routes=GitHttp(world.repo_path, world.authorize, world.on_push).routes())
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert uv.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", world
    uv.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def world(server: tuple[str, World], tmp_path: Path) -> Iterator[World]:
    w = server[1]
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "README.md").write_text("# hello\n")
    w.repos[("octo", "demo")] = BareRepo.create(tmp_path / "repos/octo/demo.git", seed).path
    yield w
    w.repos.clear()
    w.pushes.clear()
    w.decisions.clear()
    w.lookups.clear()


@pytest.fixture
def url(server: tuple[str, World], world: World) -> str:
    return f"{server[0]}/octo/demo.git"


def client_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "client-home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "NO_PROXY": "*",
        "no_proxy": "*",
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
    }


def basic(token: str) -> str:
    return "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()


def git(
    tmp_path: Path, *args: str, auth: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    header = ["-c", f"http.extraHeader=Authorization: {auth}"] if auth else []
    return subprocess.run(
        ["git", "-c", "credential.helper=", *header, *args],
        cwd=cwd or tmp_path,
        env=client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def clone(tmp_path: Path, url: str, auth: str | None = basic(WRITER)) -> Path:
    dest = tmp_path / "clone"
    proc = git(tmp_path, "clone", "-q", url, str(dest), auth=auth)
    assert proc.returncode == 0, proc.stderr
    return dest


def commit(tmp_path: Path, work: Path, rel: str, text: str) -> str:
    (work / rel).write_text(text)
    for args in (("add", rel), ("commit", "-q", "-m", f"edit {rel}")):
        assert git(tmp_path, *args, cwd=work).returncode == 0
    return git(tmp_path, "rev-parse", "HEAD", cwd=work).stdout.strip()


# --- read side ----------------------------------------------------------------------------------


def test_clone_and_fetch_with_basic_token(tmp_path: Path, url: str, world: World) -> None:
    work = clone(tmp_path, url)
    assert (work / "README.md").read_text() == "# hello\n"

    repo = BareRepo(world.repos[("octo", "demo")])
    main = repo.resolve("main")
    assert main is not None
    tree = repo.commit_info(main).tree_sha
    env = {"GIT_AUTHOR_NAME": "S", "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "S"}
    newer = repo._out("commit-tree", tree, "-p", main, input=b"server side", env=env)
    repo.update_ref("refs/heads/main", newer, main)
    proc = git(tmp_path, "fetch", "-q", "origin", auth=basic(WRITER), cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert git(tmp_path, "rev-parse", "origin/main", cwd=work).stdout.strip() == newer
    assert world.pushes == []


@pytest.mark.parametrize("scheme", ["Bearer", "token"])
def test_clone_with_bearer_or_token_header(
    tmp_path: Path, url: str, world: World, scheme: str
) -> None:
    work = clone(tmp_path, url, auth=f"{scheme} {READER}")
    assert (work / "README.md").exists()


def test_clone_without_or_with_wrong_token_is_refused(
    tmp_path: Path, url: str, world: World
) -> None:
    for auth in (None, basic("wrong"), "Bearer wrong"):
        proc = git(tmp_path, "clone", "-q", url, str(tmp_path / "nope"), auth=auth)
        assert proc.returncode != 0
        assert not (tmp_path / "nope").exists()
    assert world.decisions == ["unauthenticated"] * 3
    response = httpx.get(f"{url}/info/refs", params={"service": "git-upload-pack"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="GitHub"'


def test_unknown_repo_is_404(tmp_path: Path, server: tuple[str, World], world: World) -> None:
    base = server[0]
    proc = git(tmp_path, "clone", "-q", f"{base}/octo/ghost.git", "x", auth=basic(WRITER))
    assert proc.returncode != 0
    assert "not found" in proc.stderr.lower()
    headers = {"Authorization": basic(WRITER)}
    query = {"service": "git-upload-pack"}
    assert httpx.get(f"{base}/octo/ghost.git/info/refs", params=query).status_code == 404
    for bad in ("octo/a..b.git", "oc%20to/demo.git", "..%2F..%2Fetc/demo.git"):
        response = httpx.get(f"{base}/{bad}/info/refs", params=query, headers=headers)
        assert response.status_code == 404, bad
    assert ("octo", "a..b") not in world.lookups


def test_dumb_protocol_is_refused(url: str) -> None:
    assert (
        httpx.get(f"{url}/info/refs", headers={"Authorization": basic(WRITER)}).status_code == 403
    )


def test_gzip_encoded_protocol_v2_request(url: str, world: World) -> None:
    main = BareRepo(world.repos[("octo", "demo")]).resolve("main")
    request = b"0014command=ls-refs\n" + b"0001" + b"0009peel\n" + b"0000"
    response = httpx.post(
        f"{url}/git-upload-pack",
        content=gzip.compress(request),
        headers={
            "Authorization": f"token {READER}",
            "Content-Type": "application/x-git-upload-pack-request",
            "Content-Encoding": "gzip",
            "Git-Protocol": "version=2",
        },
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-git-upload-pack-result"
    assert f"{main} refs/heads/main".encode() in response.content


# --- pushes -------------------------------------------------------------------------------------


def test_push_create_update_delete_reports_ref_updates(
    tmp_path: Path, url: str, world: World
) -> None:
    work = clone(tmp_path, url)
    base = git(tmp_path, "rev-parse", "HEAD", cwd=work).stdout.strip()
    first = commit(tmp_path, work, "a.txt", "a\n")

    def push(*refspecs: str) -> None:
        proc = git(tmp_path, "push", "-q", "origin", *refspecs, auth=basic(WRITER), cwd=work)
        assert proc.returncode == 0, proc.stderr

    push("HEAD:refs/heads/feature")
    second = commit(tmp_path, work, "a.txt", "a2\n")
    push("HEAD:refs/heads/feature")
    push("HEAD:refs/heads/other", "HEAD:refs/tags/v1")
    push(":refs/heads/feature")

    updates = [p[3] for p in world.pushes]
    assert updates == [
        [RefUpdate("refs/heads/feature", ZERO_SHA, first)],
        [RefUpdate("refs/heads/feature", first, second)],
        [
            RefUpdate("refs/heads/other", ZERO_SHA, second),
            RefUpdate("refs/tags/v1", ZERO_SHA, second),
        ],
        [RefUpdate("refs/heads/feature", second, ZERO_SHA)],
    ]
    assert {(p[0], p[1], p[2]) for p in world.pushes} == {("octo", "demo", WRITER)}
    refs = BareRepo(world.repos[("octo", "demo")]).refs()
    assert refs == {"refs/heads/main": base, "refs/heads/other": second, "refs/tags/v1": second}


def test_large_push_is_received_whole(tmp_path: Path, url: str, world: World) -> None:
    work = clone(tmp_path, url)
    (work / "blob.bin").write_bytes(os.urandom(3 * 1024 * 1024))  # > http.postBuffer: chunked
    assert git(tmp_path, "add", "blob.bin", cwd=work).returncode == 0
    assert git(tmp_path, "commit", "-q", "-m", "big", cwd=work).returncode == 0
    head = git(tmp_path, "rev-parse", "HEAD", cwd=work).stdout.strip()
    proc = git(
        tmp_path, "push", "-q", "origin", "HEAD:refs/heads/big", auth=basic(WRITER), cwd=work
    )
    assert proc.returncode == 0, proc.stderr
    repo = BareRepo(world.repos[("octo", "demo")])
    assert repo.read_blob("big", "blob.bin") == (work / "blob.bin").read_bytes()
    assert world.pushes[-1][3] == [RefUpdate("refs/heads/big", ZERO_SHA, head)]


def test_push_with_read_only_token_is_forbidden(tmp_path: Path, url: str, world: World) -> None:
    work = clone(tmp_path, url)
    before = BareRepo(world.repos[("octo", "demo")]).refs()
    commit(tmp_path, work, "a.txt", "a\n")
    for refspec in ("HEAD:refs/heads/feature", "HEAD:refs/heads/main"):
        proc = git(tmp_path, "push", "origin", refspec, auth=basic(READER), cwd=work)
        assert proc.returncode != 0
        assert "403" in proc.stderr
    assert BareRepo(world.repos[("octo", "demo")]).refs() == before
    assert world.pushes == []
    proc = git(tmp_path, "push", "origin", "HEAD:refs/heads/feature", cwd=work)
    assert proc.returncode != 0
    assert world.decisions[-1] == "unauthenticated"
    response = httpx.post(
        f"{url}/git-receive-pack", content=b"0000", headers={"Authorization": basic(READER)}
    )
    assert response.status_code == 403


def test_push_waits_for_ref_lock_and_reports_only_its_own_refs(
    tmp_path: Path, url: str, world: World
) -> None:
    path = world.repos[("octo", "demo")]
    repo = BareRepo(path)
    main = repo.resolve("main")
    assert main is not None
    work = clone(tmp_path, url)
    head = commit(tmp_path, work, "a.txt", "a\n")
    lock = repo_lock(path)
    with lock:  # as a REST merge would, mid-way through moving a ref
        pusher = subprocess.Popen(
            [
                "git",
                "-c",
                f"http.extraHeader=Authorization: {basic(WRITER)}",
                "push",
                "-q",
                "origin",
                "HEAD:refs/heads/feature",
            ],
            cwd=work,
            env=client_env(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.5)
        assert pusher.poll() is None, "the push did not wait for the ref lock"
        # The server keeps serving other requests while the push waits.
        query = {"service": "git-upload-pack"}
        auth = {"Authorization": basic(READER)}
        assert httpx.get(f"{url}/info/refs", params=query, headers=auth).status_code == 200
        repo._git("update-ref", "refs/heads/merged", main)
    assert pusher.wait(timeout=30) == 0
    assert world.pushes[-1][3] == [RefUpdate("refs/heads/feature", ZERO_SHA, head)]
    assert len(world.pushes) == 1


# --- pieces -------------------------------------------------------------------------------------


def test_token_parsing() -> None:
    assert _token(basic("abc")) == "abc"
    assert _token("Basic " + base64.b64encode(b"abc:").decode()) == "abc"
    assert _token("Bearer xyz") == "xyz"
    assert _token("token xyz") == "xyz"
    for bad in (None, "", "Basic !!!", "Digest abc", "Bearer ", "Basic "):
        assert _token(bad) is None


def test_ref_updates_diff() -> None:
    a, b = "a" * 40, "b" * 40
    before = {"refs/heads/x": a, "refs/heads/gone": a, "refs/heads/same": a}
    after = {"refs/heads/x": b, "refs/heads/same": a, "refs/heads/new": b}
    assert ref_updates(before, after) == [
        RefUpdate("refs/heads/gone", a, ZERO_SHA),
        RefUpdate("refs/heads/new", ZERO_SHA, b),
        RefUpdate("refs/heads/x", a, b),
    ]
