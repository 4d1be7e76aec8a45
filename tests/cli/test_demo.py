"""`ourobot demo` end to end, as `make demo` runs it: real processes, real git, real HTTP."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.demo_record import REDACTED, RequestRecord, Scrubber

OUROBOT = Path(sys.executable).parent / "ourobot"
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


@pytest.mark.slow
def test_demo_runs_the_scenario_records_it_and_exits_0(tmp_path):
    keep, record = tmp_path / "demo", tmp_path / "record"
    proc = subprocess.run(
        [str(OUROBOT), "demo", "--keep", str(keep), "--record", str(record), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
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
    assert "the models are scripted" in steps
    assert "250-line INSTALL.md" in steps
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
    assert set(files) == {"sandbox.jsonl", "anthropic.jsonl", "openai.jsonl"}
    rows = {name: [json.loads(line) for line in text.splitlines()] for name, text in files.items()}
    assert len(rows["sandbox.jsonl"]) > summary["api_requests"]  # REST, git and control
    assert any(r["path"].endswith("/git-receive-pack") for r in rows["sandbox.jsonl"])
    # Two review rounds (one per reviewer each); the implementer: ticket 1, its fix round, and
    # ticket 2's four refused iterations.
    models = [r["body"]["model"] for r in rows["anthropic.jsonl"]]
    assert models.count("demo-claude") == 2 and models.count("demo-claude-implementer") == 6
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
