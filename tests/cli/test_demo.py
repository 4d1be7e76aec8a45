"""`ourobot demo` end to end, as `make demo` runs it: real processes, real git, real HTTP."""

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.cli.demo import sandbox_problem
from app.cli.demo_record import REDACTED, RequestRecord, Scrubber
from app.cli.demo_setup import unavailable
from tests.plugins.github_traffic import TrafficLog

OUROBOT = Path(sys.executable).parent / "ourobot"
# Secrets in the environment `ourobot demo` is started from: none may reach the record.
PARENT_SECRETS = {
    "ANTHROPIC_API_KEY": "parent-anthropic-" + secrets.token_hex(12),
    "OPENAI_API_KEY": "parent-openai-" + secrets.token_hex(12),
    "OUROBOT_WEBHOOK_SECRET": "parent-webhook-" + secrets.token_hex(12),
    "GITHUB_TOKEN": "parent-github-" + secrets.token_hex(12),
}
TOKEN_SHAPES = re.compile(r"gh[pousr]_[A-Za-z0-9]{16,}|sbx_[0-9a-f]{16,}|sk-[A-Za-z0-9_-]{8,}")


def test_the_scrubber_removes_known_secrets_token_shapes_and_credential_headers(tmp_path):
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEogIBAAKCAQEA1un0\nZIXWXF3F48Jq\n"
        "-----END RSA PRIVATE KEY-----"
    )
    scrubber = Scrubber(["webhook-secret-1234", "MIIEogIBAAKCAQEA1un0"])
    record = RequestRecord(tmp_path, scrubber)
    record.write("sandbox", {
        "method": "PUT",
        "path": "/_sandbox/webhook",
        "headers": [("Authorization", "Bearer anything"), ("X-Api-Key", "k"), ("Accept", "a")],
        "body": json.dumps({"secret": "webhook-secret-1234", "key": pem,
                            "note": "ghs_0123456789abcdef0123 and sk-ant-fake-key"}),
        "status": 200,
    })  # fmt: skip
    line = (tmp_path / "sandbox.jsonl").read_text()
    entry = json.loads(line)
    assert entry["headers"] == [
        ["Authorization", REDACTED], ["X-Api-Key", REDACTED], ["Accept", "a"]
    ]  # fmt: skip
    for secret in (
        "webhook-secret-1234",
        "MIIEogIBAAKCAQEA1un0",
        "ZIXWXF3F48Jq",
        "ghs_01",
        "sk-ant",
    ):
        assert secret not in line
    assert entry["path"] == "/_sandbox/webhook" and entry["status"] == 200
    # A short word is never treated as a secret: it would scrub ordinary text.
    assert Scrubber(["main"]).text("branch main") == "branch main"


@dataclass
class DemoRun:
    proc: subprocess.CompletedProcess[str]
    keep: Path
    record: Path


def demo_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OUROBOT_")}
    return {**env, **PARENT_SECRETS, **extra}


def run_demo(keep: Path, record: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OUROBOT), "demo", "--keep", str(keep), "--record", str(record), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory,
    github_traffic: TrafficLog,
    request: pytest.FixtureRequest,
) -> DemoRun:
    """One embedded demo run (about a minute), kept, shared by the tests that read it."""
    base = tmp_path_factory.mktemp("demo")
    keep, record = base / "demo", base / "record"
    run = DemoRun(run_demo(keep, record, demo_env()), keep, record)
    github_traffic.include_record(record, request.node.nodeid)  # checked against GitHub's
    return run


def operator(demo: DemoRun, *args: str) -> dict:
    """`ourobot <args> --json` against the demo's kept store, as an operator runs it."""
    env = {**demo_env(), "OUROBOT_DATA_DIR": str(demo.keep / "ourobot-data")}
    proc = subprocess.run(
        [str(OUROBOT), *args, "--json"], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_demo_runs_the_scenario_records_it_and_exits_0(demo: DemoRun):
    proc, keep, record = demo.proc, demo.keep, demo.record
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = proc.stderr  # with --json the steps go to stderr, the summary is stdout's last line
    summary = json.loads(proc.stdout.splitlines()[-1])
    first, second = summary["tickets"]
    assert first["outcome"] == "merged" and re.fullmatch(r"[0-9a-f]{40}", first["merged_sha"])
    assert first["rules"] == [] and isinstance(first["pr"], int)
    assert second == {
        "issue": second["issue"], "outcome": "blocked", "pr": None,
        "merged_sha": None, "rules": ["deletions"],
    }  # fmt: skip
    assert summary["record"] == str(record) and summary["api_requests"] > 50
    titles = [line for line in steps.splitlines() if line.startswith("[")]
    assert len(titles) >= 17
    assert all(re.match(r"\[\s*\d+\] \+\s*\d+\.\ds ", title) for title in titles)
    assert steps.splitlines()[0] == (
        "the models are scripted: no real model is called (demo_script.py says what)"
    )
    assert "start `ourobot serve` in embedded mode (no Redis)" in steps
    assert "250-line INSTALL.md" in steps
    # The project's third-party test dependency, installed by its setup.command in the sandbox
    # on ticket 1's cycle and reused from the cache on ticket 3's (where the phase can run).
    if unavailable(sandbox_problem()) is None:
        assert "its tests need calc-testkit, which ourobot does not have" in steps
        ran = re.findall(r"setup: ran in [\d.]+s, cached as ([0-9a-f]{12}) \(the cycle's", steps)
        cached = re.findall(r"setup: cached \(([0-9a-f]{12})\), [\d.]+s \(the cycle's", steps)
        assert len(ran) == 1 and cached == ran, steps
    else:
        assert "no setup.command: " in steps
    # Ticket 1: ourobot's PR rejected with the finding, fixed by a fix round, approved, CI
    # green, approved by the maintainer and merged by the gate.
    assert "ourobot works #1 and opens a pull request" in steps
    assert "the fix round: the finding goes back to the implementer" in steps
    assert "failure: Review failed: rejected by 1 of 2" in steps
    assert "no test exercises it" in steps
    assert steps.count("success: Review passed: 2 of 2 approved") == 1  # the fix round
    assert "ci/test on" in steps and "the gate merges it" in steps
    # Ticket 2: every iteration's rewrite refused by the iteration guard; blocked, no PR.
    assert "ourobot:blocked" in steps and "Blocked: " in steps
    # The explanation names the guard that refused every iteration.
    assert "every iteration was refused by the guards: deletions (INSTALL.md: " in steps
    assert "4 refusal(s) by deletions before any commit" in steps
    assert "no pull request; INSTALL.md on main keeps its 250 lines" in steps
    assert "halted" in steps and "Halt lifted" in steps
    assert "with the token: " in steps and "without it: 401" in steps
    assert steps.splitlines()[-1].startswith("demo finished")
    log = (keep / "ourobot-serve.log").read_text()
    assert "Traceback" not in log
    for clone in keep.glob("ourobot-issue-*"):
        config = (clone / ".git" / "config").read_text().lower()
        assert "extraheader" not in config
        assert "authorization" not in config
    # The record: every request the sandbox and both model servers received, no secret in it.
    files = {path.name: path.read_text() for path in record.glob("*.jsonl")}
    assert set(files) == {"sandbox.jsonl", "webhooks.jsonl", "anthropic.jsonl", "openai.jsonl"}
    rows = {name: [json.loads(line) for line in text.splitlines()] for name, text in files.items()}
    assert len(rows["sandbox.jsonl"]) > summary["api_requests"]  # REST, git and control
    assert any(r["path"].endswith("/git-receive-pack") for r in rows["sandbox.jsonl"])
    # Two review rounds (one per reviewer each); the implementer: ticket 1 and its fix round
    # (each a change, then DONE), and ticket 2's four refused iterations.
    models = [r["body"]["model"] for r in rows["anthropic.jsonl"]]
    assert models.count("demo-claude") == 2 and models.count("demo-claude-implementer") == 8
    assert len(rows["openai.jsonl"]) == 2
    everything = "".join(files.values())
    key_lines = [ln for ln in (keep / "app.pem").read_text().splitlines() if "-----" not in ln]
    assert key_lines and not any(line in everything for line in key_lines)
    assert TOKEN_SHAPES.search(everything) is None
    assert "PRIVATE KEY" not in everything
    for rows_of_one in rows.values():
        for row in rows_of_one:
            for name, value in row["headers"]:
                if name.lower() in ("authorization", "x-api-key", "api-key"):
                    assert value == REDACTED
    [hook] = [r for r in rows["sandbox.jsonl"] if r["path"] == "/_sandbox/webhook"]
    assert json.loads(hook["body"])["secret"] == REDACTED
    for value in PARENT_SECRETS.values():
        assert value not in everything


@pytest.mark.slow
def test_the_readme_quotes_what_the_demo_prints(demo: DemoRun):
    """README.md's `make demo` block (tests/docs_check.py) against this run's steps: `make
    demo` runs `ourobot demo`, whose steps `--json` sends to stderr unchanged."""
    from tests.docs_check import ROOT, check_quoted, marked_blocks

    assert demo.proc.returncode == 0, demo.proc.stderr[-2000:]
    [block] = [b for b in marked_blocks([ROOT / "README.md"]) if b.scenario == "demo"]
    assert [command.text for command in block.commands] == ["make demo"]
    assert "\ndemo: $(STAMP)\n\t@$(BIN)/ourobot demo\n" in (ROOT / "Makefile").read_text()
    check_quoted(block, [demo.proc.stderr], {})


@pytest.mark.slow
def test_the_operator_commands_show_the_demos_cycles_with_their_outcomes(demo: DemoRun):
    assert demo.proc.returncode == 0, demo.proc.stderr[-2000:]
    first, second = json.loads(demo.proc.stdout.splitlines()[-1])["tickets"]
    entries = operator(demo, "ledger")["entries"]
    ticket_1 = f"maintainer/calculator#{first['issue']}"
    ticket_2 = f"maintainer/calculator#{second['issue']}"
    [cycle_1] = [e for e in entries if e["kind"] == "cycle" and e["ticket"] == ticket_1]
    assert cycle_1["outcome"]["artifact"] == "pr" and cycle_1["detail"]["pr"] == first["pr"]
    [merge] = [e for e in entries if e["kind"] == "merge"]
    assert merge["outcome"]["artifact"] == "merged"
    assert first["merged_sha"] in json.dumps(merge["detail"])
    [cycle_2] = [e for e in entries if e["kind"] == "cycle" and e["ticket"] == ticket_2]
    assert cycle_2["outcome"] == {
        "artifact": "none", "execution": "ok", "objective": "unmet", "review": "skipped"
    }  # fmt: skip
    assert cycle_2["detail"]["outcome"] == "blocked"
    iterations = cycle_2["detail"]["iterations"]
    assert [{r.split()[0] for r in i["refusals"]} for i in iterations] == [{"deletions"}] * 4
    assert "refused by the guards: deletions" in cycle_2["detail"]["reason"]
    refused = operator(demo, "ledger", "--ticket", ticket_2, "--outcome", "unmet")["entries"]
    assert [e["id"] for e in refused] == [cycle_2["id"]]
    status = operator(demo, "status")
    assert status["mode"] == "embedded" and status["open_cycles"] == []
    assert status["queues"]["inbox"]["failed"] == 0 and status["queues"]["inbox"]["done"] > 10
    # The scripted models cost nothing, and status says so rather than showing dollars.
    assert status["spend_today"]["total_micro_usd"] == 0
    assert status["spend_today"]["free_calls_by_model"] == {
        "anthropic:demo-claude": 2, "anthropic:demo-claude-implementer": 8, "openai:demo-gpt": 2
    }  # fmt: skip
    assert status["spend_today"]["unpriced_micro_usd_by_model"] == {}
    patterns = {p["error_class"]: p for p in operator(demo, "patterns")["patterns"]}
    assert patterns["refusal:deletions"]["count"] == 4
    assert patterns["refusal:deletions"]["status"] == "recurring"
    assert patterns["refusal:deletions"]["first"]["number"] == second["issue"]


@pytest.mark.slow
def test_the_status_page_shows_the_demos_cycles_with_their_outcomes(demo: DemoRun):
    from app.controls.ledger_query import LedgerFilter, search
    from app.controls.overview import read_overview
    from app.controls.patterns import read_register
    from app.settings import load_settings
    from app.statuspage.page import PageData, render_page
    from app.store import Store

    assert demo.proc.returncode == 0, demo.proc.stderr[-2000:]
    first, second = json.loads(demo.proc.stdout.splitlines()[-1])["tickets"]
    settings = load_settings(env={}, data_dir=demo.keep / "ourobot-data")
    store = Store.open(settings)
    try:
        html = render_page(
            PageData(
                overview=read_overview(settings, store, None),
                entries=list(reversed(search(store, LedgerFilter(limit=50)))),
                patterns=read_register(store),
                web_url="http://sandbox.invalid",
            )
        )
    finally:
        store.close()
    assert html.count('<tr class="entry">') >= 7
    assert "merged" in html and "refusal:deletions" in html
    assert f"maintainer/calculator/pull/{first['pr']}" in html
    assert f"maintainer/calculator/issues/{second['issue']}" in html
    assert "unmet" in html


@pytest.mark.slow
def test_in_redis_mode_a_real_worker_runs_the_same_scenario(
    tmp_path, redis_server, github_traffic: TrafficLog, request: pytest.FixtureRequest
):
    keep, record = tmp_path / "demo", tmp_path / "record"
    proc = run_demo(keep, record, demo_env(OUROBOT_REDIS_URL=redis_server.url))
    github_traffic.include_record(record, request.node.nodeid)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    first, second = json.loads(proc.stdout.splitlines()[-1])["tickets"]
    assert first["outcome"] == "merged" and re.fullmatch(r"[0-9a-f]{40}", first["merged_sha"])
    assert (second["outcome"], second["pr"], second["rules"]) == ("blocked", None, ["deletions"])
    [queue] = re.findall(r"Redis mode: a Celery worker on OUROBOT_REDIS_URL, queue (\S+)",
                         proc.stderr)  # fmt: skip
    assert queue.startswith("ourobot-demo-")
    assert "start `ourobot serve` in Redis mode, tasks to the worker" in proc.stderr
    worker_log = (keep / "ourobot-worker.log").read_text()
    assert "ourobot.job" in worker_log or "succeeded" in worker_log, worker_log[-2000:]
    assert "Traceback" not in (keep / "ourobot-serve.log").read_text()


@pytest.mark.parametrize(
    ("model", "env", "said"),
    [
        ("anthropic:claude-sonnet-4-5", {}, "ANTHROPIC_API_KEY is not set"),
        ("openai:gpt-5", {"OPENAI_API_KEY": " "}, "OPENAI_API_KEY is not set"),
        ("claude-sonnet-4-5", {}, "expected 'anthropic:<model>' or 'openai:<model>'"),
        ("mistral:large", {"ANTHROPIC_API_KEY": "k"}, "unknown provider 'mistral'"),
    ],
)
def test_a_real_model_without_its_key_is_one_line_and_exit_2_before_anything_starts(
    tmp_path, model, env, said
):
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    keep = tmp_path / "kept"
    proc = subprocess.run(
        [str(OUROBOT), "demo", "--model", model, "--keep", str(keep)],
        capture_output=True, text=True, timeout=60, check=False, env={**base, **env},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert said in proc.stderr and "--model" in proc.stderr and "Traceback" not in proc.stderr
    assert not keep.exists()  # nothing started, nothing written


# ---- a demo that can be stopped and run again --------------------------------------------------


def start_demo(args: list[str], cwd: Path, tmpdir: Path) -> tuple[subprocess.Popen, Path, Path]:
    """`ourobot demo` in the background, its temporary folders under `tmpdir`; its stdout and
    stderr go to files the test reads."""
    out, err = cwd / "demo.out", cwd / "demo.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            [str(OUROBOT), "demo", *args], cwd=cwd, stdout=stdout, stderr=stderr, text=True,
            env=demo_env(TMPDIR=str(tmpdir)),
        )  # fmt: skip
    return proc, out, err


def wait_for_step(proc: subprocess.Popen, out: Path, number: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while f"[{number:>2}] +" not in out.read_text():
        assert proc.poll() is None, out.read_text()
        assert time.monotonic() < deadline, f"no step {number}: {out.read_text()}"
        time.sleep(0.1)


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append(int(stat.parent.name))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.slow
def test_a_killed_demo_stops_ourobot_serve_and_leaves_no_temporary_folder(tmp_path):
    """`kill PID` (a CI timeout) while ourobot works the first ticket."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc, out, err = start_demo([], tmp_path, tmp)
    try:
        wait_for_step(proc, out, 6)  # `ourobot serve` runs and works ticket 1
        serve = [pid for pid in children_of(proc.pid) if " -m app serve " in command_line(pid)]
        assert len(serve) == 1
        assert list(tmp.glob("ourobot-demo-*/app.pem"))  # the key the stop must take away
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 2
    finally:
        proc.kill()
    assert err.read_text() == (
        "ourobot: demo stopped by SIGTERM: its processes are stopped, nothing is left\n"
    )
    assert not running(serve[0])
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
def test_a_relative_kept_folder_survives_an_interrupt_and_a_second_run(tmp_path):
    """Ctrl-C during `demo --keep kept`, then `demo --keep kept` again: it replaces the
    earlier demo's files and runs to the end, its paths absolute."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    kept = tmp_path / "kept"
    proc, out, err = start_demo(["--keep", "kept"], tmp_path, tmp)
    try:
        wait_for_step(proc, out, 5)  # the sandbox has the repository; serve is up
        children = children_of(proc.pid)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 2
    finally:
        proc.kill()
    assert err.read_text() == (
        f"ourobot: demo stopped by SIGINT: its processes are stopped, its files are in {kept}\n"
    )
    assert children and not any(running(pid) for pid in children)
    assert (kept / "sandbox").is_dir()  # the first run's sandbox, which a rerun once hit
    second = subprocess.run(
        [str(OUROBOT), "demo", "--keep", "kept", "--json"], cwd=tmp_path, capture_output=True,
        text=True, timeout=600, check=False, env=demo_env(TMPDIR=str(tmp)),
    )  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    tickets = json.loads(second.stdout.splitlines()[-1])["tickets"]
    assert [t["outcome"] for t in tickets] == ["merged", "blocked"]
    assert f"OUROBOT_DATA_DIR={kept / 'ourobot-data'} ourobot ledger" in second.stderr
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("case", ["record-onto-a-file", "keep-onto-a-file", "keep-foreign"])
def test_unusable_folders_are_one_line_and_exit_2_before_anything_starts(tmp_path, case):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    existing = tmp_path / "existing"
    existing.write_text("mine\n")
    if case == "record-onto-a-file":
        args, said = ["--record", "existing"], "--record existing: exists and is not a folder"
    elif case == "keep-onto-a-file":
        args, said = ["--keep", "existing"], "--keep existing: exists and is not a folder"
    else:
        args, said = ["--keep", "."], "--keep .: the folder is not empty and holds no earlier demo"
    proc = subprocess.run(
        [str(OUROBOT), "demo", *args], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, check=False, env=demo_env(TMPDIR=str(tmp)),
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"ourobot: {said}") and len(proc.stderr.splitlines()) == 1
    assert list(tmp.iterdir()) == [] and existing.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing", "tmp"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_real_model_at_a_dead_url_is_named_at_once(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    proc = subprocess.run(
        [str(OUROBOT), "demo", "--model", "openai:qwen2.5-coder:7b", "--base-url", url,
         "--keep", str(tmp_path / "kept")],
        capture_output=True, text=True, timeout=60, check=False, env=demo_env(),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == (
        f"ourobot: --model openai:qwen2.5-coder:7b: cannot connect to {url}: Connection refused\n"
    )
    # "At once": before the demo starts anything (nothing kept), not after a 180 s wait (the
    # subprocess timeout above bounds it; a wall-clock figure would only measure the CI load).
    assert not (tmp_path / "kept").exists()


@pytest.mark.slow
def test_a_real_model_that_answers_garbage_ends_the_demo_with_the_reason_not_a_timeout(tmp_path):
    """The model's endpoint answers the check, then garbage: ourobot blocks the ticket and the
    demo says why at once, with the URL, instead of waiting for a pull request."""
    from reviewers.fake_servers import FakeModelServer, Malformed
    from reviewers.providers import NO_KEY

    with FakeModelServer("openai", api_key=NO_KEY) as local:
        local.default("qwen2.5-coder:7b", Malformed(b"<html>502</html>", "text/html"))
        started = time.monotonic()
        proc = subprocess.run(
            [str(OUROBOT), "demo", "--model", "openai:qwen2.5-coder:7b", "--base-url",
             local.base_url],
            capture_output=True, text=True, timeout=300, check=False, env=demo_env(),
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == (
        f"the model is real: openai:qwen2.5-coder:7b at {local.base_url}"
    )
    [failed] = [line for line in proc.stdout.splitlines() if line.startswith("demo failed: ")]
    assert failed.startswith("demo failed: #1 ended without a pull request: ")
    assert f"openai:qwen2.5-coder:7b at {local.base_url}" in failed
    assert time.monotonic() - started < 120


def test_a_stop_whose_exception_was_swallowed_still_stops_the_next_wait():
    """Python drops an exception raised where it cannot propagate (a weakref callback during
    garbage collection): the demo's waits look at the signal received, not only at the raise."""
    from app.cli.demo import Stopped, stopped_by_signals, wait_for

    before = signal.getsignal(signal.SIGTERM)
    with stopped_by_signals() as stop:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler raises here ...
        except BaseException:  # noqa: S110 (... and something swallows it, as the GC does)
            pass
        assert stop.name == "SIGTERM"
        with pytest.raises(Stopped, match="SIGTERM"):
            wait_for("anything", lambda: None, timeout_s=5)
    assert signal.getsignal(signal.SIGTERM) == before  # and the handler is given back
