"""`ourobot action gate`: the real console script, as a workflow runs it, against the sandbox:
the gate reports on the event's pull request, and merges only with `merge: true`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jobs.gate_check.conftest import GateWorld

pytestmark = pytest.mark.slow
OUROBOT = Path(sys.executable).parent / "ourobot"


def run_gate(gate: GateWorld, tmp_path: Path, payload: dict, event: str, *, merge: str = ""):
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(payload))
    outputs, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OUROBOT_", "GITHUB_"))}
    sandbox = gate.world.sandbox
    env.update(
        {
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_API_URL": sandbox.url,
            "GITHUB_TOKEN": gate.world.installation_token(),
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(tmp_path / "runner"),
            "OUROBOT_BOT_LOGIN": sandbox.app.bot_login,
            "OUROBOT_GATE_MERGE": merge,
        }
    )
    proc = subprocess.run([str(OUROBOT), "action", "gate"], capture_output=True, text=True,
                          env=env, timeout=120, check=False)  # fmt: skip
    text = outputs.read_text() if outputs.exists() else ""
    return proc, dict(line.split("=", 1) for line in text.splitlines() if "=" in line), summary


def review_payload(gate: GateWorld) -> dict:
    delivered = gate.world.sink.wait_for("pull_request_review", "submitted")[-1].payload
    delivered.pop("installation", None)  # Actions payloads carry no App installation
    return delivered


def test_the_action_reports_and_merges_only_when_told(gate: GateWorld, tmp_path: Path) -> None:
    gate.green()
    gate.review()
    payload = review_payload(gate)
    proc, out, summary = run_gate(gate, tmp_path, payload, "pull_request_review")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out["decision"] == "merge" and out["merged"] == ""
    assert "merge: true" in summary.read_text() and not gate.pull().merged
    assert gate.merge_calls() == 0
    proc, out, _ = run_gate(gate, tmp_path, payload, "pull_request_review", merge="true")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert gate.pull().merged and out["merged"] == gate.main_sha()


def test_the_action_waits_and_says_why(gate: GateWorld, tmp_path: Path) -> None:
    gate.run("ourobot/guards")
    gate.review()
    proc, out, summary = run_gate(gate, tmp_path, review_payload(gate), "pull_request_review",
                                  merge="true")  # fmt: skip
    assert proc.returncode == 0 and out["decision"] == "wait"
    text = summary.read_text()
    assert "Not mergeable yet: ci, review" in text and not gate.pull().merged


def test_an_event_without_a_pull_request_is_one_line_exit_2(gate: GateWorld, tmp_path: Path):
    proc, _, _ = run_gate(gate, tmp_path, {"repository": {"full_name": "octo/demo"}}, "push")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "not 'push'" in proc.stderr
