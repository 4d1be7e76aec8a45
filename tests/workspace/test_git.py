"""git as ourobot runs it: isolated from the host, tokens never persisted or printed."""

import subprocess
from pathlib import Path

import pytest

from app.workspace.git import GitError, git, redact


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
