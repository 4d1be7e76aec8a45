"""The implementer's first view, on real git repositories: the ranking finds the files a
ticket is about without their names, the import graph brings their callers, a large file is
shown by its numbered parts, the map counts every path, and nothing protected or secret is
ever shown."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.loop.context import Context
from app.loop.ranking import rank, ranked_paths
from app.loop.ticket import Ticket
from app.loop.tree_map import repo_map
from app.repo_config import RepoConfig
from app.workspace.worktree import open_workspace
from reviewers.connectivity import build_graph, import_lines
from tests.guards.conftest import GitRepo

SIGNING = '''\
"""Signatures over payloads."""

import hmac


def sign_timestamp(payload: bytes, clock) -> bytes:
    """The payload with the clock's time, signed."""
    return hmac.new(b"k", payload + str(clock()).encode(), "sha256").digest()
'''

UNRELATED = {
    "pkg/tables.py": "def render_rows(rows):\n    return '\\n'.join(map(str, rows))\n",
    "pkg/colors.py": "RED = '\\x1b[31m'\n\n\ndef paint(text):\n    return RED + text\n",
    "pkg/__init__.py": "",
    "README.md": "A small package.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    home = tmp_path / "home"
    home.mkdir()
    return GitRepo(tmp_path / "repo", home)


@contextmanager
def context_for(repo: GitRepo, title: str, body: str = "") -> Iterator[Context]:
    head = repo.commit("base")
    with open_workspace(repo.path, ticket="T-1", base_sha=head) as ws:
        ticket = Ticket("T-1", "local:repo#T-1", title, body)
        yield Context(ws, RepoConfig(), ticket, constitution=None, secrets=())


def first_message(ctx: Context) -> str:
    return ctx.implementer_input(iteration=1, iterations=12, plan=None, feedback="")


def shown_files(message: str) -> list[str]:
    return [line.split(" ", 2)[1] for line in message.splitlines() if line.startswith("File ")]


def test_the_ranking_finds_a_file_the_ticket_does_not_name(repo: GitRepo):
    for path, text in {**UNRELATED, "pkg/signing.py": SIGNING}.items():
        repo.write(path, text)
    with context_for(repo, "Signed timestamps use the wrong clock") as ctx:
        message = first_message(ctx)
    assert shown_files(message)[0] == "pkg/signing.py"
    assert "def sign_timestamp" in message


def test_the_import_graph_brings_the_caller_of_the_file_the_ticket_is_about():
    texts = {
        **UNRELATED,
        "pkg/signing.py": SIGNING,
        "pkg/cli.py": "from pkg.signing import sign_timestamp\n\n\ndef main():\n    pass\n",
    }
    graph = build_graph({p: import_lines(p, t) for p, t in texts.items()}, texts)
    order = ranked_paths(rank("The clock of signed timestamps drifts", texts, graph))
    assert order[:2] == ["pkg/signing.py", "pkg/cli.py"]
    assert "pkg/tables.py" not in order and "pkg/colors.py" not in order

    # A caller that shares no word with the ticket comes in through the graph alone.
    texts["pkg/cli.py"] = "from pkg import signing\n\n\ndef main():\n    pass\n"
    graph = build_graph({p: import_lines(p, t) for p, t in texts.items()}, texts)
    assert ranked_paths(rank("The clock drifts", texts, graph))[:2] == [
        "pkg/signing.py",
        "pkg/cli.py",
    ]
    assert ranked_paths(rank("The clock drifts", texts, build_graph({}, texts))) == [
        "pkg/signing.py"
    ]


def test_a_large_file_is_shown_by_its_numbered_parts(repo: GitRepo):
    filler = "".join(f"def helper_{n}(value):\n    return value + {n}\n\n\n" for n in range(1500))
    big = filler + SIGNING + filler.replace("helper_", "other_")
    repo.write("pkg/big.py", big)
    for path, text in UNRELATED.items():
        repo.write(path, text)
    with context_for(repo, "Signed timestamps use the wrong clock") as ctx:
        message = first_message(ctx)
    start = filler.count("\n") + 1
    assert f"File pkg/big.py ({big.count(chr(10))} lines), too large to show whole" in message
    assert f"{start + 5}| def sign_timestamp(payload: bytes, clock) -> bytes:" in message
    assert "sed -n" in message and "grep -n" in message
    assert len(message) < 75_000  # the files budget holds: 12,000 lines were not pasted
    assert "helper_700" not in message


def test_the_map_counts_every_path_and_lists_the_relevant_ones_first():
    sizes = {f"vendor/lib{n // 50}/mod{n}.py": 100 + n for n in range(3000)}
    sizes["deep/down/in/the/tree/signing.py"] = 500
    sizes["README.md"] = 10
    text = repo_map(sizes, {"deep/down/in/the/tree/signing.py": 2.0}, 3_000)
    assert len(text) <= 3_000
    assert "README.md (10 bytes)" in text
    assert "deep/down/in/the/tree/signing.py (500 bytes)" in text
    listed = sum(1 for line in text.splitlines() if line.endswith(" bytes)"))
    left_out = len(sizes) - listed
    assert f"{left_out:,} of {len(sizes):,} paths are not listed above." in text
    counted = sum(
        int(line.split(": ", 1)[1].split()[0].replace(",", ""))
        for line in text.splitlines()
        if line.endswith((" file", " files")) and ": " in line
    )
    assert counted == left_out  # every path left out is counted under a folder
    folders = {line.split("/mod")[0] for line in text.splitlines() if "/mod" in line}
    assert len(folders) == 60  # each folder shows some of its files before any shows many


def test_the_map_of_a_small_repository_lists_everything(repo: GitRepo):
    for path, text in {**UNRELATED, "pkg/signing.py": SIGNING}.items():
        repo.write(path, text)
    with context_for(repo, "Anything") as ctx:
        text = ctx.repo_map()
    for path in (*UNRELATED, "pkg/signing.py"):
        assert f"{path} (" in text
    assert "not listed" not in text


@pytest.mark.parametrize("title", ["Rotate the deploy token", "Fix the token in settings"])
def test_protected_and_secret_files_are_never_shown(repo: GitRepo, title: str):
    token_words = "deploy token rotate settings " * 20
    repo.write(".env", f"DEPLOY_TOKEN=dpl-0123456789abcdef  # {token_words}\n")
    repo.write("secrets/deploy.txt", f"token {token_words}\n")
    repo.write("deploy.key", f"-----BEGIN RSA PRIVATE KEY-----\n{token_words}\n")
    repo.write("creds.py", f'# {token_words}\naws_access_key_id = "AKIAIOSFODNN7EXAMPLQ"\n')
    repo.write("settings.py", 'TOKEN = "dpl-0123456789abcdef"  # deploy token\n')
    repo.write("pkg/deploy.py", "def rotate_token(settings):\n    return settings.TOKEN\n")
    with context_for(repo, title, "The deploy token must rotate; see `.env`.") as ctx:
        message = first_message(ctx)
    shown = shown_files(message)
    assert "pkg/deploy.py" in shown
    for path in (".env", "secrets/deploy.txt", "deploy.key", "creds.py"):
        assert path not in shown
    assert "dpl-0123456789abcdef" not in message
    assert "AKIAIOSFODNN7EXAMPLQ" not in message
    assert ".env: not shown (a protected file)" in message
    assert "creds.py: not shown (it may hold a credential)" in message


def test_files_come_from_git_at_head_never_the_work_tree(repo: GitRepo):
    repo.write("pkg/signing.py", SIGNING)
    repo.write("README.md", "A small package.\n")
    head = repo.commit("base")
    with open_workspace(repo.path, ticket="T-2", base_sha=head) as ws:
        (ws.path / "pkg" / "signing.py").write_text("def sign_timestamp(): 'uncommitted'\n")
        (ws.path / "pkg" / "clock.py").write_text("def signed_clock(): 'untracked'\n")
        ticket = Ticket("T-2", "local:repo#T-2", "Signed timestamps use the wrong clock", "")
        message = first_message(Context(ws, RepoConfig(), ticket, constitution=None, secrets=()))
    assert "uncommitted" not in message and "untracked" not in message
    assert "hmac.new" in message
