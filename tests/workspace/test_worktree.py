"""Worktrees per cycle: the user's checkout untouched, stale state recovered, always removed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from app.errors import UserError
from app.workspace.worktree import Trailers, branch_for, open_workspace
from tests.guards.conftest import GitRepo


@pytest.fixture
def user_repo(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "def f():\n    return 1\n")
    repo.write(".gitignore", "build/\n")
    repo.commit("base")
    return repo


def state(repo: GitRepo) -> tuple[str, str, str, str]:
    """What a user sees of their checkout: branch, HEAD, index and status."""
    return (
        repo.git("symbolic-ref", "HEAD"),
        repo.git("rev-parse", "HEAD"),
        repo.git("ls-files", "-s"),
        repo.git("status", "--porcelain", "--untracked-files=all"),
    )


def test_a_cycle_worktree_leaves_the_users_checkout_alone(user_repo: GitRepo, tmp_path: Path):
    user_repo.write("app.py", "def f():\n    return 2  # uncommitted\n")
    user_repo.write("staged.txt", "staged\n")
    user_repo.git("add", "staged.txt")
    user_repo.write("untracked.txt", "mine\n")
    before = state(user_repo)
    base = user_repo.git("rev-parse", "HEAD")
    with open_workspace(user_repo.path, ticket="T-1", base_sha=base, root=tmp_path) as ws:
        assert ws.branch == "ourobot/T-1"
        assert ws.head() == base
        assert (ws.path / "app.py").read_text() == "def f():\n    return 1\n"
        (ws.path / "new.py").write_text("x = 1\n")
        sha = ws.commit("add new.py", Trailers("T-1", 1, "anthropic:m"))
        assert sha is not None
        assert state(user_repo) == before
        path = ws.path
    assert state(user_repo) == before
    assert not path.exists()
    assert "ourobot/T-1" not in user_repo.git("branch", "--list")
    assert user_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_the_branch_is_kept_when_a_human_may_look_and_the_worktree_goes_first(
    user_repo: GitRepo, tmp_path: Path
):
    base = user_repo.git("rev-parse", "HEAD")
    with open_workspace(user_repo.path, ticket="T-2", base_sha=base, root=tmp_path) as ws:
        (ws.path / "x.txt").write_text("x\n")
        sha = ws.commit("x", Trailers("T-2", 1, "openai:m"))
        ws.keep_branch = True
    assert user_repo.git("rev-parse", "ourobot/T-2") == sha
    assert user_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_crash_inside_the_block_still_removes_the_worktree(user_repo: GitRepo, tmp_path: Path):
    base = user_repo.git("rev-parse", "HEAD")
    seen: list[Path] = []

    def crash() -> None:
        with open_workspace(user_repo.path, ticket="T-3", base_sha=base, root=tmp_path) as ws:
            seen.append(ws.path)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        crash()
    assert not seen[0].exists()
    assert user_repo.git("branch", "--list", "ourobot/*") == ""


def test_stale_worktree_and_branch_of_a_killed_run_are_recovered(
    user_repo: GitRepo, tmp_path: Path
):
    base = user_repo.git("rev-parse", "HEAD")
    stale = tmp_path / "stale" / "T-4"
    user_repo.git("worktree", "add", "-q", "-b", "ourobot/T-4", str(stale), base)
    (stale / "half.txt").write_text("half done\n")
    subprocess.run(["git", "add", "-A"], cwd=stale, env=user_repo.env, check=True)
    subprocess.run(["git", "commit", "-qm", "half"], cwd=stale, env=user_repo.env, check=True)
    earlier = user_repo.git("rev-parse", "ourobot/T-4")
    gone = tmp_path / "gone" / "T-5"
    user_repo.git("worktree", "add", "-q", "-b", "ourobot/T-5", str(gone), base)
    subprocess.run(["rm", "-rf", str(gone)], check=True)

    with open_workspace(user_repo.path, ticket="T-4", base_sha=base, root=tmp_path) as ws:
        assert ws.head() == base
        assert any("stale worktree" in note for note in ws.recovered)
        assert any("refs/ourobot/attempts/T-4/1" in note for note in ws.recovered)
    assert not stale.exists()
    assert user_repo.git("rev-parse", "refs/ourobot/attempts/T-4/1") == earlier
    with open_workspace(user_repo.path, ticket="T-5", base_sha=base, root=tmp_path) as ws:
        assert ws.head() == base  # a worktree whose directory vanished is pruned


def test_resume_checks_out_the_existing_branch(user_repo: GitRepo, tmp_path: Path):
    base = user_repo.git("rev-parse", "HEAD")
    with open_workspace(user_repo.path, ticket="T-6", base_sha=base, root=tmp_path) as ws:
        (ws.path / "r1.txt").write_text("round 1\n")
        first = ws.commit("round 1", Trailers("T-6", 1, "m"))
        ws.keep_branch = True
    with open_workspace(
        user_repo.path, ticket="T-6", base_sha=base, root=tmp_path, resume=True
    ) as ws:
        assert ws.head() == first
        assert ws.commits_since_base() == 1


def test_commits_strip_test_artifacts_keep_tracked_ones_and_carry_trailers(
    user_repo: GitRepo, tmp_path: Path
):
    user_repo.write(".coverage", "tracked on purpose\n")
    user_repo.commit("coverage file")
    base = user_repo.git("rev-parse", "HEAD")
    gitignore = (user_repo.path / ".gitignore").read_text()
    with open_workspace(user_repo.path, ticket="T-7", base_sha=base, root=tmp_path) as ws:
        for artifact in ("pkg/__pycache__/m.cpython-311.pyc", ".pytest_cache/v/x", "m.pyc",
                         ".mypy_cache/3.11/x.json", ".coverage.host.1"):  # fmt: skip
            target = ws.path / artifact
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"\0junk")
        (ws.path / ".coverage").write_text("changed by a test run\n")
        (ws.path / "pkg" / "m.py").write_text("x = 1\n")
        sha = ws.commit("ticket T-7: add pkg/m.py", Trailers("T-7", 3, "anthropic:claude-x"))
        assert sha is not None
        files = ws.git("show", "--name-only", "--format=", "HEAD").split()
        assert sorted(files) == [".coverage", "pkg/m.py"]
        message = ws.git("log", "-1", "--format=%an <%ae>%n%B")
        assert message.startswith("ourobot <ourobot@users.noreply.github.com>\nticket T-7")
        assert "Ourobot-Ticket: T-7\nOurobot-Iteration: 3\nOurobot-Model: anthropic:claude-x" in (
            message
        )
        assert (ws.path / ".gitignore").read_text() == gitignore
        assert ws.commit("nothing", Trailers("T-7", 4, "m")) is None


def test_a_same_size_edit_in_the_index_s_own_second_is_committed(
    user_repo: GitRepo, tmp_path: Path
):
    """Git trusts a file's stat data unless the file is as new as the index ("racily clean"):
    the copy of the index a snapshot stages into must keep the index's time, or an edit that
    keeps the size, made within the second of the checkout, is missed."""
    base = user_repo.git("rev-parse", "HEAD")
    with open_workspace(user_repo.path, ticket="T-8", base_sha=base, root=tmp_path) as ws:
        target = ws.path / "app.py"
        moment = (int(time.time()) - 100) * 10**9
        os.utime(target, ns=(moment, moment))
        ws.git("update-index", "-q", "--refresh")  # stat data recorded, nothing smudged
        os.utime(ws.admin / "index", ns=(moment, moment))  # the index as new as the file
        target.write_text(target.read_text().replace("return 1", "return 2"))  # same size
        os.utime(target, ns=(moment, moment))
        sha = ws.commit("ticket T-8: return 2", Trailers("T-8", 1, "m"))
        assert sha is not None
        assert "return 2" in ws.git("show", "HEAD:app.py")


def test_a_bare_mirror_serves_worktrees_too(user_repo: GitRepo, tmp_path: Path):
    mirror = tmp_path / "mirror.git"
    user_repo.git("clone", "-q", "--bare", str(user_repo.path), str(mirror))
    base = user_repo.git("rev-parse", "HEAD")
    with open_workspace(mirror, ticket="issue-12", base_sha=base, root=tmp_path) as ws:
        assert (ws.path / "app.py").is_file()
        (ws.path / "b.txt").write_text("b\n")
        sha = ws.commit("b", Trailers("issue-12", 1, "m"))
        ws.keep_branch = True
    out = subprocess.run(
        ["git", "--git-dir", str(mirror), "rev-parse", "ourobot/issue-12"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == sha


def test_local_hooks_of_the_repository_never_run(user_repo: GitRepo, tmp_path: Path):
    marker = tmp_path / "hook-ran"
    hook = user_repo.path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    (user_repo.path / ".git" / "hooks" / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (user_repo.path / ".git" / "hooks" / "pre-commit").chmod(0o755)
    base = user_repo.git("rev-parse", "HEAD")
    with open_workspace(user_repo.path, ticket="T-8", base_sha=base, root=tmp_path) as ws:
        (ws.path / "c.txt").write_text("c\n")
        assert ws.commit("c", Trailers("T-8", 1, "m")) is not None
    assert not marker.exists()


@pytest.mark.parametrize("ticket", ["../x", "a b", "-rf", "x..y", "x.lock", "", "a/b"])
def test_ticket_ids_that_would_make_bad_branch_names_are_refused(ticket):
    with pytest.raises(UserError):
        branch_for(ticket)


def test_not_a_repository_is_bad_input(tmp_path: Path):
    with (
        pytest.raises(UserError, match="not a git repository"),
        open_workspace(tmp_path, ticket="T", base_sha="0" * 40),
    ):
        pass
