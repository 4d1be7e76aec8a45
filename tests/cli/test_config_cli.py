"""`ourobot config check FILE` through the installed console script, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.repo_config import RepoConfig, load_repo_config

pytestmark = pytest.mark.slow

# The console script installed next to the interpreter running the tests (.venv/bin/ourobot).
OUROBOT = Path(sys.executable).parent / "ourobot"

VALID = """\
version: 1
mode: light
guards:
  max_deleted_lines: null
  extra_protected_paths: [infra/**]
review:
  models: [anthropic:claude-sonnet-4-5, {id: "openai:m", base_url: "http://127.0.0.1:9/v1"}]
  quorum: 1
budgets: {usd_per_ticket: 1.5}
"""


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert OUROBOT.exists(), f"console script not installed at {OUROBOT}"
    return subprocess.run(
        [str(OUROBOT), "config", "check", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_valid_file_prints_the_effective_config_as_yaml(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_text(VALID)
    proc = run(path)
    assert (proc.returncode, proc.stderr) == (0, "")
    printed = load_repo_config(proc.stdout)
    assert printed == load_repo_config(VALID)
    assert printed.guards.max_deleted_lines is None
    assert printed.guards.max_changed_files == 50  # defaults are filled in
    assert yaml.safe_load(proc.stdout)["review"]["models"][1] == {
        "id": "openai:m",
        "base_url": "http://127.0.0.1:9/v1",
    }


def test_json_flag_prints_json(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_text(VALID)
    proc = run(path, "--json")
    assert (proc.returncode, proc.stderr) == (0, "")
    document = json.loads(proc.stdout)
    assert document["mode"] == "light"
    assert document["budgets"]["usd_per_ticket"] == 1.5
    assert RepoConfig.model_validate(document) == load_repo_config(VALID)


def test_invalid_file_is_one_line_on_stderr_exit_2_nothing_on_stdout(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_text("version: 1\nguards:\n  max_deleted_lines: 10\n  max_delete_lines: 5\n")
    proc = run(path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f"ourobot: {path}:4: guards.max_delete_lines: unknown key "
        "(did you mean max_deleted_lines?)\n"
    )


def test_wrong_type_names_key_and_line(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_text("version: 1\n\nguards:\n  max_deleted_lines: lots\n")
    proc = run(path, "--json")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"ourobot: {path}:4: guards.max_deleted_lines: expected an integer or null, got 'lots'\n"
    )


def test_yaml_syntax_error_is_one_line_without_traceback(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_text("version: 1\nguards: [unclosed\n")
    proc = run(path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"ourobot: {path}:3: YAML syntax error: ")
    assert proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_a_missing_file_named_on_the_command_line_is_bad_input(tmp_path):
    path = tmp_path / "absent.yml"
    proc = run(path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"ourobot: config file {path}: not found (a file named on the command line must exist)\n"
    )


def test_without_a_file_a_repository_without_config_gets_the_defaults(tmp_path):
    proc = subprocess.run(
        [str(OUROBOT), "config", "check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0
    assert proc.stderr == "ourobot: no .github/ourobot.yml here; the defaults apply\n"
    assert load_repo_config(proc.stdout) == RepoConfig()


def test_without_a_file_the_repository_config_is_checked(tmp_path):
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/ourobot.yml").write_text("version: 1\nmode: lite\n")
    proc = subprocess.run(
        [str(OUROBOT), "config", "check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("ourobot: .github/ourobot.yml:2: mode: ")


def test_directory_is_bad_input(tmp_path):
    proc = run(tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"ourobot: {tmp_path}: cannot read: ")
    assert proc.stderr.count("\n") == 1
