"""git as ourobot runs it: isolated from the host, tokens never persisted or printed."""

import subprocess
from pathlib import Path

import pytest

from app.errors import UserError
from app.workspace.git import GitError, git, is_object_id, isolated_env, redact, run_git


def make_origin(tmp_path: Path) -> Path:
    work = tmp_path / "seed"
    work.mkdir()
    (work / "a.txt").write_text("hello\n")
    git(["init", "-q", "-b", "main"], cwd=work)
    git(["add", "."], cwd=work)
    git(["commit", "-q", "-m", "seed"], cwd=work)
    bare = tmp_path / "origin.git"
    git(["clone", "-q", "--bare", str(work), str(bare)])
    return bare


def test_clone_with_a_token_leaves_no_trace_in_config(tmp_path):
    origin = make_origin(tmp_path)
    token = "ghs_" + "A" * 36
    git(["clone", "-q", f"file://{origin}", str(tmp_path / "clone")], token=token)
    config = (tmp_path / "clone" / ".git" / "config").read_text()
    assert token not in config
    assert "extraHeader" not in config
    assert (tmp_path / "clone" / "a.txt").read_text() == "hello\n"


def test_failure_is_redacted_and_one_line(tmp_path):
    token = "ghs_" + "B" * 36
    with pytest.raises(GitError) as info:
        git(["clone", "-q", f"file://{tmp_path}/missing/{token}", str(tmp_path / "x")], token=token)
    message = str(info.value)
    assert token not in message
    assert "***" in message
    assert "\n" not in message


def test_host_identity_and_config_do_not_leak(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Host User\n[alias]\n\tst = status\n")
    monkeypatch.setenv("HOME", str(home))
    origin = make_origin(tmp_path)
    log = subprocess.run(
        ["git", "--git-dir", str(origin), "log", "-1", "--format=%an"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert log == "ourobot"
    with pytest.raises(GitError):
        git(["st"], cwd=tmp_path)


def test_redact_covers_the_basic_auth_form():
    import base64

    token = "tok123"
    encoded = base64.b64encode(b"x-access-token:tok123").decode()
    assert redact(f"Authorization: Basic {encoded} and tok123", token) == (
        "Authorization: Basic *** and ***"
    )


def test_timeout_is_reported(tmp_path):
    with pytest.raises(GitError, match="timed out"):
        git(["-c", "alias.slow=!sleep 5", "slow"], cwd=tmp_path, timeout_s=0.5)


# ---- run_git: the one place ourobot starts git (the workspace, the guards, the reviewers) ----


def test_run_git_returns_the_exit_code_for_the_caller_to_judge(tmp_path):
    proc = run_git(["rev-parse", "--git-dir"], env=isolated_env(), cwd=tmp_path)
    assert proc.returncode != 0 and b"not a git repository" in proc.stderr
    assert is_object_id("a" * 40) and is_object_id("b" * 64)
    assert not is_object_id("a" * 39) and not is_object_id("A" * 40) and not is_object_id("")


def test_run_git_without_git_says_to_install_it(tmp_path):
    with pytest.raises(UserError, match="git is not installed"):
        run_git(["--version"], env={"PATH": str(tmp_path / "no-bin")})


def test_run_git_in_a_missing_directory_says_so_not_that_git_is_missing(tmp_path):
    with pytest.raises(GitError, match="no such directory"):
        run_git(["status"], env=isolated_env(), cwd=tmp_path / "gone")


def test_run_git_that_does_not_finish_is_a_git_error(tmp_path):
    # An alias starting with "!" runs a command: here one that outlasts the timeout.
    alias = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "alias.wait",
        "GIT_CONFIG_VALUE_0": "!sleep 1",
    }
    with pytest.raises(GitError, match=r"^git wait timed out after 0\.2s$"):
        run_git(["wait"], env=isolated_env(alias), timeout_s=0.2)
