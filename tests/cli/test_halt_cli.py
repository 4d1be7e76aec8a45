"""`ourobot halt` / `ourobot resume` through the real console script."""

import json
import os
import subprocess
import sys
from pathlib import Path

OUROBOT = Path(sys.executable).parent / "ourobot"


def run(tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OUROBOT_")}
    env["OUROBOT_DATA_DIR"] = str(tmp_path)
    return subprocess.run(
        [str(OUROBOT), *args], capture_output=True, text=True, env=env, check=False, timeout=60
    )


def test_halt_list_and_resume_round_trip(tmp_path):
    assert run(tmp_path, "halt", "--installation", "7", "--by", "alice").returncode == 0
    listed = json.loads(run(tmp_path, "halt", "--list", "--json").stdout)
    assert [h["scope"] for h in listed["halts"]] == ["installation:7"]
    assert listed["halts"][0]["set_by"] == "alice"
    resumed = run(tmp_path, "resume", "--installation", "7", "--json")
    assert resumed.returncode == 0
    assert json.loads(resumed.stdout) == {"scope": "installation:7", "lifted": True}
    again = run(tmp_path, "resume", "--installation", "7")
    assert again.returncode == 1
    assert "no installation:7 halt" in again.stderr


def test_bad_installation_id_is_one_line_exit_2(tmp_path):
    proc = run(tmp_path, "halt", "--installation", "-3")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
