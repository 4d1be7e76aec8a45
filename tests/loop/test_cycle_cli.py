"""`ourobot cycle` as a user runs it: the real console script in a subprocess, the fake model
servers, a real repository, progress on stderr, the JSON line, exit codes and --merge."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from app.controls.ledger import Ledger
from app.settings import Settings
from app.store import Store
from reviewers.fake_servers import (
    FakeModelServer,
    Malformed,
    Text,
    append_block,
    edits_reply,
    last_message,
    replace_block,
)
from reviewers.providers import NO_KEY
from tests.guards.conftest import OUROBOT
from tests.loop.conftest import ADD_TEST, IMPLEMENTER, UNITTEST, Loop

pytestmark = pytest.mark.slow

FIX = replace_block("calc.py", ("    return a - b\n", "    return a + b\n"))
REVIEW = "review: {models: ['anthropic:rev-a', 'openai:rev-b'], quorum: 2, rounds: 1}\n"
BUDGET = "{implementer_iterations: 3, fix_iterations: 1, test_timeout_s: 60}"


def cycle(loop: Loop, *args: str, stdin: str = "", ticket: str | None = None):
    ticket_file = loop.tmp / "TICKET-3.md"
    if ticket is None:
        ticket_file.write_text("# add() subtracts\n\nMake add(a, b) return a + b, with a test.\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(loop.tmp / "home"),
        "OUROBOT_DATA_DIR": str(loop.tmp / "data"),
        **loop.models.env(),
    }
    return subprocess.run(
        [str(OUROBOT), "cycle", "--repo", str(loop.repo.path), "--ticket",
         str(ticket_file if ticket is None else ticket), *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def cycle_rows(loop: Loop):
    store = Store.open(Settings(data_dir=loop.tmp / "data", database_url=None))
    try:
        return Ledger(store).entries(kind="cycle")
    finally:
        store.close()


def test_a_ready_branch_with_progress_on_stderr_and_the_json_last_line(loop: Loop):
    loop.project()
    loop.models.script(IMPLEMENTER, edits_reply(append_block("tests/test_calc.py", ADD_TEST)),
                       edits_reply(FIX))  # fmt: skip
    proc = cycle(loop, "--json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout.splitlines()[-1])
    assert outcome == {
        "outcome": "ready", "branch": "ourobot/TICKET-3", "iterations": 2, "tests": "passed",
        "refusals": [], "review": None,
    }  # fmt: skip
    assert "ourobot: iteration 1/3 (implement), 1 edit(s): APPEND tests/test_calc.py" in proc.stderr
    assert "tests failed (exit 1)" in proc.stderr and "tests passed" in proc.stderr
    (row,) = cycle_rows(loop)
    assert (row.outcome.execution, row.outcome.objective, row.outcome.artifact) == (
        "ok",
        "met",
        "none",
    )
    # Two submissions and the DONE that ended the cycle.
    assert row.detail["iterations"] == 2 and row.detail["model_calls"] == 3
    assert row.ticket == f"local:{loop.repo.path.resolve()}#TICKET-3"


def test_a_blocked_cycle_exits_1_with_its_refusals(loop: Loop):
    loop.project()
    loop.models.script(IMPLEMENTER, *[edits_reply(replace_block("../etc/x", ("a", "b")))] * 3)
    proc = cycle(loop, "--json")
    assert proc.returncode == 1, proc.stderr
    outcome = json.loads(proc.stdout.splitlines()[-1])
    assert outcome["outcome"] == "blocked" and outcome["branch"] is None
    assert outcome["refusals"] == [
        {"iteration": n, "rule": "unsafe-path", "path": "../etc/x"} for n in (1, 2, 3)
    ]
    assert cycle_rows(loop)[0].detail["refusals"][0]["reason"] == "'..' component"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("no-repo", "not a git repository"),
        ("no-ticket", "cannot read"),
        ("bad-config", "guards.max_deleted_lines"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(loop: Loop, setup: str, message: str):
    loop.project()
    args: list[str] = []
    ticket = None
    if setup == "no-repo":
        loop.repo.path.joinpath(".git").rename(loop.tmp / "moved-git")
    elif setup == "no-ticket":
        ticket = str(loop.tmp / "missing.md")
    else:
        bad = loop.tmp / "bad.yml"
        bad.write_text("version: 1\nguards: {max_deleted_lines: lots}\n")
        args = ["--config", str(bad)]
    proc = cycle(loop, *args, ticket=ticket)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_merge_asks_and_merges_no_ff_without_touching_the_checkout(loop: Loop):
    base = loop.project()
    loop.repo.git("checkout", "-q", "-b", "work")
    (loop.repo.path / "scratch.txt").write_text("mine, uncommitted\n")
    loop.models.script(IMPLEMENTER, edits_reply(FIX, append_block("tests/test_calc.py", ADD_TEST)))
    proc = cycle(loop, "--merge", "--json", stdin="y\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["outcome"] == "merged"
    assert "Merge ourobot/TICKET-3 into main (--no-ff)? [y/N]" in proc.stderr
    parents = loop.repo.git("log", "-1", "--format=%P", "main").split()
    assert parents[0] == base and len(parents) == 2
    assert "return a + b" in loop.repo.git("show", "main:calc.py")
    assert loop.repo.git("symbolic-ref", "--short", "HEAD") == "work"
    assert (loop.repo.path / "scratch.txt").read_text() == "mine, uncommitted\n"
    assert "return a - b" in (loop.repo.path / "calc.py").read_text()
    assert loop.repo.git("branch", "--list", "ourobot/*") == ""
    assert cycle_rows(loop)[0].outcome.artifact == "merged"


def test_merge_declined_or_onto_a_checked_out_branch_leaves_a_ready_branch(loop: Loop):
    loop.project()
    loop.repo.git("checkout", "-q", "-b", "work")
    loop.models.script(IMPLEMENTER, edits_reply(FIX))
    declined = cycle(loop, "--merge", "--json", stdin="\n")
    assert declined.returncode == 0
    assert json.loads(declined.stdout.splitlines()[-1])["outcome"] == "ready"
    assert "not merged: declined" in declined.stderr
    loop.repo.git("checkout", "-q", "main")
    before = loop.repo.git("rev-parse", "main")
    loop.models.script(IMPLEMENTER, edits_reply(FIX))
    checked_out = cycle(loop, "--merge", "--json", stdin="y\n")
    assert json.loads(checked_out.stdout.splitlines()[-1])["outcome"] == "ready"
    assert "main is checked out in" in checked_out.stderr
    assert "git merge --no-ff ourobot/TICKET-3" in checked_out.stderr
    assert loop.repo.git("rev-parse", "main") == before
    assert "earlier ourobot/TICKET-3" in checked_out.stderr  # the first run's branch, kept aside


def test_a_rejection_is_fixed_and_the_panel_approves(loop: Loop):
    loop.project(extra_config=REVIEW, budgets=BUDGET)
    loop.models.script(
        IMPLEMENTER,
        edits_reply(FIX),
        Text("DONE"),
        edits_reply(append_block("tests/test_calc.py", ADD_TEST)),
    )
    loop.models.script(
        "anthropic:rev-a",
        Text("FINDING major calc.py:2 add() has no test\nVERDICT: REJECT"),
        Text("VERDICT: APPROVE"),
    )
    loop.models.script("openai:rev-b", Text("VERDICT: APPROVE"), Text("VERDICT: APPROVE"))
    proc = cycle(loop, "--json")
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout.splitlines()[-1])
    assert outcome["outcome"] == "ready" and outcome["iterations"] == 2
    assert outcome["review"]["conclusion"] == "success"
    # FIX, DONE; the findings, the test, DONE: one conversation.
    fix_prompt = last_message(loop.models.requests_for(IMPLEMENTER)[2].body)
    assert "add() has no test" in fix_prompt and "review panel rejected" in fix_prompt
    assert "fix round 1" in proc.stderr
    roles = [c.call.role for c in _calls(loop)]
    assert roles.count("reviewer") == 4 and roles.count("implementer") == 4


def test_rejected_after_every_round_needs_a_human_and_keeps_the_branch(loop: Loop):
    loop.project(extra_config=REVIEW, budgets=BUDGET)
    loop.models.script(IMPLEMENTER, edits_reply(FIX), Text("DONE"), edits_reply(append_block(
        "tests/test_calc.py", ADD_TEST)))  # fmt: skip
    reject = Text("FINDING blocker calc.py:2 wrong\nVERDICT: REJECT")
    loop.models.script("anthropic:rev-a", reject, reject)
    loop.models.script("openai:rev-b", Text("VERDICT: APPROVE"), Text("VERDICT: APPROVE"))
    proc = cycle(loop, "--json")
    assert proc.returncode == 1
    outcome = json.loads(proc.stdout.splitlines()[-1])
    assert outcome["outcome"] == "needs-human", proc.stderr
    assert outcome["branch"] == "ourobot/TICKET-3"
    assert outcome["review"]["reason"] == "rejected"
    assert cycle_rows(loop)[0].outcome.review == "rejected"


def _calls(loop: Loop):
    store = Store.open(Settings(data_dir=loop.tmp / "data", database_url=None))
    try:
        return Ledger(store).calls()
    finally:
        store.close()


def test_the_ticket_files_front_matter_names_the_branch_and_labels(loop: Loop, tmp_path: Path):
    loop.project()
    ticket = tmp_path / "t.md"
    ticket.write_text("---\nid: issue-7\nlabels: [bug]\n---\nFix add().\n")
    loop.models.script(IMPLEMENTER, edits_reply(FIX))
    proc = cycle(loop, "--json", ticket=str(ticket))
    assert json.loads(proc.stdout.splitlines()[-1])["branch"] == "ourobot/issue-7"


# ---- a model of the user's own: checked before anything runs, then used ----------------------

LOCAL_MODEL = "qwen2.5-coder:7b"  # a name as Ollama serves it (the colon is part of the name)


def own_env(loop: Loop, **extra: str) -> dict[str, str]:
    """A user's shell: no model variables unless `extra` sets them."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(loop.tmp / "home"),
        "OUROBOT_DATA_DIR": str(loop.tmp / "data"),
        **extra,
    }


def timed_cycle(loop: Loop, env: dict[str, str], *args: str):
    ticket = loop.tmp / "TICKET-3.md"
    ticket.write_text("# add() subtracts\n\nMake add(a, b) return a + b.\n")
    started = time.monotonic()
    proc = subprocess.run(
        [str(OUROBOT), "cycle", "--repo", str(loop.repo.path), "--ticket", str(ticket), *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    return proc, time.monotonic() - started


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def local_server():
    """An OpenAI-compatible server as a local one runs (Ollama, vLLM): it wants no key and
    accepts the placeholder ourobot sends where no key belongs."""
    with FakeModelServer("openai", api_key=NO_KEY) as server:
        yield server


def test_without_a_key_the_cycle_stops_before_anything_runs_naming_the_variable(loop: Loop):
    loop.project()
    proc, elapsed = timed_cycle(loop, own_env(loop))
    assert proc.returncode == 2
    assert proc.stderr == f"ourobot: {IMPLEMENTER}: ANTHROPIC_API_KEY is not set\n"
    assert elapsed < 2, elapsed
    assert cycle_rows(loop) == []  # no baseline (the one stderr line says so), no cycle


def test_a_dead_local_url_stops_the_cycle_before_anything_runs_naming_the_url(loop: Loop):
    loop.project()
    url = f"http://127.0.0.1:{closed_port()}/v1"
    proc, elapsed = timed_cycle(
        loop, own_env(loop), "--model", f"openai:{LOCAL_MODEL}", "--base-url", url
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"ourobot: openai:{LOCAL_MODEL}: cannot connect to {url}: Connection refused\n"
    )
    assert elapsed < 2, elapsed
    assert cycle_rows(loop) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--base-url", "http://127.0.0.1:1/v1"], "--base-url needs --model"),
        (["--model", "qwen", "--base-url", "http://x/v1"], "--model qwen: expected 'anthropic:"),
        (["--model", "openai:q", "--base-url", "127.0.0.1:11434"], "--base-url: expected an http"),
    ],
)
def test_model_options_that_cannot_work_are_one_line_and_exit_2(loop: Loop, args, said):
    loop.project()
    proc, _ = timed_cycle(loop, own_env(loop), *args)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert said in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("form", ["flags", "config"])
def test_a_local_openai_compatible_server_works_the_ticket_to_ready(
    loop: Loop, local_server: FakeModelServer, form: str
):
    """`--model openai:NAME --base-url URL`, or the config form `{id:, base_url:}`."""
    loop.project()
    local_server.script(
        LOCAL_MODEL, edits_reply(FIX, append_block("tests/test_calc.py", ADD_TEST)), Text("DONE")
    )
    args: list[str] = []
    if form == "flags":
        args = ["--model", f"openai:{LOCAL_MODEL}", "--base-url", local_server.base_url]
    else:
        entry = f'{{id: "openai:{LOCAL_MODEL}", base_url: "{local_server.base_url}"}}'
        loop.repo.write(".github/ourobot.yml", loop.config_text(
            UNITTEST, "", "{implementer_iterations: 3, test_timeout_s: 60}"
        ).replace(f"implementer: {IMPLEMENTER}", f"implementer: {entry}"))  # fmt: skip
        loop.repo.commit("a local model")
    proc, _ = timed_cycle(loop, own_env(loop), *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["outcome"] == "ready"
    call, done = local_server.requests  # the change, then DONE
    assert call.model == done.model == LOCAL_MODEL
    assert call.headers["authorization"] == f"Bearer {NO_KEY}"
    assert len(local_server.listings) == 1  # asked before the cycle ran
    # Nobody priced the model: the caps charge it at the dearest price, and the user is told.
    assert f"warning: openai:{LOCAL_MODEL} has no price" in proc.stderr


def test_a_local_model_answering_garbage_is_reported_with_its_url(
    loop: Loop, local_server: FakeModelServer
):
    loop.project()
    local_server.default(LOCAL_MODEL, Malformed(b"<html>502 bad gateway</html>", "text/html"))
    free = json.dumps({f"openai:{LOCAL_MODEL}": {"input": 0, "output": 0}})
    proc, _ = timed_cycle(
        loop, own_env(loop, OUROBOT_MODEL_PRICES=free),
        "--model", f"openai:{LOCAL_MODEL}", "--base-url", local_server.base_url,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith(
        f"blocked: the model failed: openai:{LOCAL_MODEL} at {local_server.base_url}: the answer "
        "has no choices"
    )
    assert "has no price" not in proc.stderr  # priced by the operator
