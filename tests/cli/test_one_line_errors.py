"""Every settings and startup error of the long-running commands is one line with a documented
exit code, through the installed console script as an operator runs it (issue 19's list)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.workspace.git import git

pytestmark = pytest.mark.slow

OUROBOT = Path(sys.executable).with_name("ourobot")


def clean_env(tmp_path: Path, **variables: str) -> dict[str, str]:
    """No OUROBOT_* or model key from the developer's shell; a private data dir."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OUROBOT_", "ANTHROPIC_", "OPENAI_"))
    }
    env["OUROBOT_DATA_DIR"] = str(tmp_path / "data")
    env.update(variables)
    return env


def ourobot(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OUROBOT), *args], env=env, capture_output=True, text=True, timeout=60, check=False,
        cwd=cwd,
    )  # fmt: skip


def assert_one_line(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["worker"], ["beat"]])
def test_a_malformed_redis_url_is_one_line_naming_the_variable(tmp_path, command):
    env = clean_env(tmp_path, OUROBOT_WEBHOOK_SECRET="s", OUROBOT_REDIS_URL="notaurl")
    proc = ourobot(env, *command)
    assert_one_line(proc, 2, "ourobot: OUROBOT_REDIS_URL: not a Redis URL")


def test_a_malformed_database_url_is_one_line(tmp_path):
    env = clean_env(tmp_path, OUROBOT_WEBHOOK_SECRET="s", OUROBOT_DATABASE_URL="db.sqlite")
    proc = ourobot(env, "serve", "--port", "0")
    assert_one_line(proc, 2, "OUROBOT_DATABASE_URL: not a database URL")


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["worker"]])
def test_a_missing_private_key_file_stops_the_process_before_it_starts(tmp_path, command):
    env = clean_env(
        tmp_path,
        OUROBOT_WEBHOOK_SECRET="s",
        OUROBOT_APP_ID="1",
        OUROBOT_PRIVATE_KEY_PATH=str(tmp_path / "missing.pem"),
        OUROBOT_REDIS_URL="redis://127.0.0.1:1/0",
    )
    proc = ourobot(env, *command)
    assert_one_line(proc, 2, "OUROBOT_PRIVATE_KEY_PATH: cannot read", "missing.pem")
    assert proc.stdout == ""
    assert not (tmp_path / "data").exists()  # nothing migrated, nothing half-made


def test_a_key_file_that_is_not_a_key_is_refused(tmp_path):
    (tmp_path / "key.pem").write_text("not a key\n")
    env = clean_env(
        tmp_path,
        OUROBOT_WEBHOOK_SECRET="s",
        OUROBOT_APP_ID="1",
        OUROBOT_PRIVATE_KEY_PATH=str(tmp_path / "key.pem"),
    )
    assert_one_line(ourobot(env, "serve", "--port", "0"), 2, "not a PEM private key")


def test_an_app_id_without_a_key_is_refused(tmp_path):
    env = clean_env(tmp_path, OUROBOT_WEBHOOK_SECRET="s", OUROBOT_APP_ID="1")
    assert_one_line(ourobot(env, "serve", "--port", "0"), 2, "OUROBOT_APP_ID is set but no key")


def test_serve_without_a_webhook_secret_is_one_line(tmp_path):
    assert_one_line(
        ourobot(clean_env(tmp_path), "serve", "--port", "0"), 2, "OUROBOT_WEBHOOK_SECRET"
    )


def test_review_check_without_a_key_names_the_model_once_per_line(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(["init", "-q", "-b", "main"], cwd=repo)
    (repo / ".github").mkdir()
    (repo / ".github/ourobot.yml").write_text(
        "version: 1\nreview:\n  models: [anthropic:claude-a]\n  quorum: 1\n"
    )
    (repo / "a.py").write_text("x = 1\n")
    git(["add", "-A"], cwd=repo)
    git(["commit", "-q", "-m", "base"], cwd=repo)
    git(["checkout", "-q", "-b", "feature"], cwd=repo)
    (repo / "a.py").write_text("x = 2\n")
    git(["commit", "-q", "-am", "change"], cwd=repo)
    proc = ourobot(
        clean_env(tmp_path), "review", "check", "--repo", str(repo), "--base", "main",
        "--head", "feature", "--json",
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    progress = [line for line in proc.stderr.splitlines() if "ANTHROPIC_API_KEY" in line]
    assert len(progress) == 1
    assert progress[0].startswith("ourobot review: anthropic:claude-a: incomplete (")
    assert progress[0].endswith("s): ANTHROPIC_API_KEY is not set")
    assert progress[0].count("anthropic:claude-a") == 1


@pytest.mark.parametrize(
    "command", [["serve", "--port", "0"], ["worker"], ["cycle", "--repo", ".", "--ticket", "t"]]
)
def test_a_data_dir_the_sandbox_would_mount_stops_the_process_before_it_starts(tmp_path, command):
    # A folder on PATH is a toolchain the sandbox shows to the code it runs.
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    env = clean_env(
        tmp_path,
        OUROBOT_WEBHOOK_SECRET="s",
        OUROBOT_REDIS_URL="redis://127.0.0.1:1/0",
        OUROBOT_DATA_DIR=str(tools / "data"),
        PATH=f"{tools}:{os.environ['PATH']}",
    )
    if command[0] == "serve":
        env.pop("OUROBOT_REDIS_URL")
    proc = ourobot(env, *command)
    assert_one_line(proc, 2, "OUROBOT_DATA_DIR", f"lies under {tools}", "move it outside")
    assert not (tools / "data").exists()


def test_serve_without_bubblewrap_refuses_unless_the_operator_allows_it(tmp_path):
    bin_dir = tmp_path / "bin"  # a PATH with no bwrap on it
    bin_dir.mkdir()
    env = clean_env(tmp_path, OUROBOT_WEBHOOK_SECRET="s", PATH=str(bin_dir))
    proc = ourobot(env, "serve", "--port", "0")
    assert_one_line(
        proc, 2, "ourobot serve runs repository code only in the bubblewrap sandbox",
        "bubblewrap (bwrap) is not installed", "OUROBOT_ALLOW_UNSANDBOXED=1",
    )  # fmt: skip
