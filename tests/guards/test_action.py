"""`ourobot action guards` as GitHub Actions runs it: a subprocess with a pull_request event file,
a checked-out workspace and the files GitHub reads back (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.action import escape_data, escape_property, workflow_annotations
from app.guards import GuardResult, Violation
from tests.guards.conftest import ROOT, GitRepo, git_env, lines

pytestmark = pytest.mark.slow

# Runs the real CLI frame; registers the action module if the frame does not list it yet.
BOOT = (
    "import sys, app.cli as c\n"
    "if 'app.cli.action_cmd' not in c.COMMAND_MODULES:\n"
    "    c.COMMAND_MODULES += ('app.cli.action_cmd',)\n"
    "sys.exit(c.main(sys.argv[1:]))\n"
)
TOKEN = "ghs_" + "t0ken" * 8


class Runner:
    def __init__(self, tmp_path: Path, workspace: Path) -> None:
        self.tmp = tmp_path
        self.workspace = workspace
        self.output = tmp_path / "github_output"
        self.summary = tmp_path / "step_summary"
        self.event = tmp_path / "event.json"

    def run(self, payload: dict, event_name: str = "pull_request") -> subprocess.CompletedProcess:
        self.event.write_text(json.dumps(payload))
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.tmp),
            "GITHUB_EVENT_PATH": str(self.event),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_TOKEN": TOKEN,
        }
        return subprocess.run(
            [sys.executable, "-c", BOOT, "action", "guards"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    def outputs(self) -> dict[str, str]:
        pairs = (line.split("=", 1) for line in self.output.read_text().splitlines())
        return dict(pairs)


def pull_request(base: str, head: str, ref: str = "ourobot/issue-7") -> dict:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "title": "$(curl evil) `rm -rf /` ::set-output name=conclusion::success",
            "base": {"sha": base, "ref": "main"},
            "head": {"sha": head, "ref": ref},
        },
    }


@pytest.fixture
def pr(repo: GitRepo, tmp_path: Path) -> tuple[Runner, str, str]:
    repo.write("INSTALL.md", lines(256))
    base = repo.commit("base")
    repo.write("INSTALL.md", lines(30))
    repo.write("certs/a,b:c.pem", "not really a key\n")
    head = repo.commit("destructive")
    return Runner(tmp_path, repo.path), base, head


def test_violations_fail_the_step_with_summary_outputs_and_annotations(pr):
    runner, base, head = pr
    proc = runner.run(pull_request(base, head))
    assert proc.returncode == 1, proc.stderr
    assert runner.outputs() == {"conclusion": "failure", "violations": "3"}
    summary = runner.summary.read_text()
    assert summary.startswith("## ourobot/guards: failure")
    assert f"`{base[:12]}`" in summary
    assert f"`{head[:12]}`" in summary
    assert "| `deletions` |" in summary
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error")]
    assert "::error file=certs/a%2Cb%3Ac.pem,title=protected-path::adds a protected path " in (
        "\n".join(errors)
    )
    assert "::error file=INSTALL.md,line=30,title=deletions::file shrinks" in "\n".join(errors)
    assert "::error title=deletions::226 lines deleted" in "\n".join(errors)
    assert proc.stdout.splitlines()[-1] == f"ourobot guards: failure (3 violations) on {head}"
    assert "curl" not in proc.stdout + proc.stderr  # event text never reaches the log


def test_a_clean_pull_request_passes(repo: GitRepo, tmp_path: Path):
    repo.write("README.md", "x\n")
    base = repo.commit("base")
    repo.write("docs/more.md", "more\n")
    head = repo.commit("docs")
    runner = Runner(tmp_path, repo.path)
    proc = runner.run(pull_request(base, head))
    assert proc.returncode == 0, proc.stderr
    assert runner.outputs() == {"conclusion": "success", "violations": "0"}
    assert "No violations." in runner.summary.read_text()


def test_the_action_judges_the_pull_request_it_runs_on_whatever_apply_to_says(
    repo: GitRepo, tmp_path: Path
):
    """`guards.apply_to` tells the App which PRs to check on its own; a workflow that runs the
    Action on a human PR is asked to judge that PR, and a required check that passed while
    judging nothing would be a gate that says yes without looking."""
    repo.write(".github/ourobot.yml", "version: 1\nguards:\n  apply_to: bot\n")
    repo.write("INSTALL.md", lines(300))
    base = repo.commit("base")
    repo.write("INSTALL.md", "x\n")
    head = repo.commit("human change")
    runner = Runner(tmp_path, repo.path)
    judged = runner.run(pull_request(base, head, ref="feature/docs"))
    assert judged.returncode == 1
    assert runner.outputs()["conclusion"] == "failure"
    assert "skipped" not in judged.stdout


@pytest.mark.parametrize(
    ("payload", "event_name", "message"),
    [
        ({"ref": "refs/heads/main"}, "push", "needs a pull_request event, got 'push'"),
        (
            {"pull_request": {"base": {"sha": "x"}, "head": {"sha": "y"}}},
            "pull_request",
            "base.sha",
        ),
    ],
)
def test_events_that_are_not_usable_are_bad_input(tmp_path, repo, payload, event_name, message):
    runner = Runner(tmp_path, repo.path)
    proc = runner.run(payload, event_name)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert message in proc.stderr
    assert proc.stdout.startswith("::error title=ourobot::")
    assert not runner.output.exists()


def test_commits_missing_from_a_shallow_checkout_are_fetched(tmp_path: Path):
    env = git_env(tmp_path)
    origin = GitRepo(tmp_path / "origin", tmp_path)
    origin.write("INSTALL.md", lines(256))
    base = origin.commit("base")
    origin.git("checkout", "-q", "-b", "ourobot/issue-7")
    origin.write("INSTALL.md", "gone\n")
    head = origin.commit("head")
    origin.git("checkout", "-q", "main")
    origin.git("config", "uploadpack.allowAnySHA1InWant", "true")
    workspace = tmp_path / "workspace"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--depth=1",
            "--branch=main",
            f"file://{origin.path}",
            str(workspace),
        ],
        env=env,
        check=True,
    )
    runner = Runner(tmp_path, workspace)
    proc = runner.run(pull_request(base, head))
    assert proc.returncode == 1, proc.stderr
    assert runner.outputs()["conclusion"] == "failure"
    config = (workspace / ".git" / "config").read_text()
    assert TOKEN not in config and "extraheader" not in config
    assert TOKEN not in proc.stdout + proc.stderr


def test_a_commit_that_cannot_be_fetched_is_bad_input(repo: GitRepo, tmp_path: Path):
    repo.write("README.md", "x\n")
    base = repo.commit("base")
    runner = Runner(tmp_path, repo.path)
    proc = runner.run(pull_request(base, "e" * 40))
    assert proc.returncode == 2
    assert f"commit {'e' * 40} is not in the checkout and could not be fetched" in proc.stderr


def test_workflow_command_escaping_follows_githubs_rules():
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a,b:c\nd") == "a%2Cb%3Ac%0Ad"
    result = GuardResult(
        (
            Violation("secret", "x\n::set-output name=a::b", 3, "msg\n::add-mask::x"),
            Violation("size", None, None, "too big"),
        )
    )
    assert workflow_annotations(result) == [
        "::error file=x\\u000a%3A%3Aset-output name=a%3A%3Ab,line=3,title=secret::"
        "msg%0A::add-mask::x",
        "::error title=size::too big",
    ]
