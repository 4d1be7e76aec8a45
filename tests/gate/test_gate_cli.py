"""`ourobot gate check --state FILE|- [--json]`: exit 0 merge, 1 wait, 2 unreadable state in
one line; `--json` exactly `{"decision", "missing"}`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from tests.gate.states import edit, good


def gate(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    stdin: bytes | None = None,
) -> tuple[int, str, str]:  # fmt: skip
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(["gate", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, state: Any) -> str:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    return str(path)


def test_merge_exits_0_and_the_json_is_exactly_the_contract(tmp_path, capsys, monkeypatch):
    code, out, err = gate(["--state", write(tmp_path, good()), "--json"], capsys, monkeypatch)
    assert (code, err) == (0, "")
    assert json.loads(out) == {"decision": "merge", "missing": []}


def test_wait_exits_1_with_each_missing_condition(tmp_path, capsys, monkeypatch):
    state = edit(edit(good(), "pr.behind_by", None), "reviews", [])
    code, out, _ = gate(["--state", write(tmp_path, state), "--json"], capsys, monkeypatch)
    assert code == 1
    document = json.loads(out)
    assert document["decision"] == "wait"
    assert [m["condition"] for m in document["missing"]] == ["approval", "up-to-date"]


def test_text_report_lists_every_condition(tmp_path, capsys, monkeypatch):
    code, out, _ = gate(["--state", write(tmp_path, edit(good(), "pr.draft", True))],
                        capsys, monkeypatch)  # fmt: skip
    assert code == 1
    assert out.startswith("ourobot gate: wait")
    assert "MISSING  draft" in out
    assert out.count("met  ") == 10


def test_state_from_stdin(capsys, monkeypatch):
    code, out, _ = gate(["--state", "-", "--json"], capsys, monkeypatch,
                        stdin=json.dumps(good()).encode())  # fmt: skip
    assert code == 0 and json.loads(out)["decision"] == "merge"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is not JSON"),
        (b"{", "is not JSON"),
        (b"[]", "must be a JSON object, got a list"),
        (b"7", "must be a JSON object, got a single value"),
        (b'{"halted": false, "halted": true}', 'the key "halted" appears twice'),
        (b'{"app_id": NaN}', "NaN is not a JSON number"),
        (b"\xff\xfe", "is not UTF-8"),
    ],
)
def test_an_unreadable_state_is_bad_input_in_one_line(capsys, monkeypatch, data, message):
    code, out, err = gate(["--state", "-"], capsys, monkeypatch, stdin=data)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_missing_file_is_bad_input(tmp_path, capsys, monkeypatch):
    code, _, err = gate(["--state", str(tmp_path / "none.json")], capsys, monkeypatch)
    assert code == 2 and "cannot read the state" in err and err.count("\n") == 1


def test_untrusted_names_are_escaped_in_the_text_report(tmp_path, capsys, monkeypatch):
    state = edit(good(), "statuses.0.context", "ci\x1b[2Jx")
    state = edit(state, "statuses.0.state", "failure")
    code, out, _ = gate(["--state", write(tmp_path, state)], capsys, monkeypatch)
    assert code == 1 and "\x1b" not in out and "\\u001b" in out


@pytest.mark.slow
def test_the_console_script(tmp_path):
    ourobot = Path(sys.executable).with_name("ourobot")
    state = write(tmp_path, edit(good(), "halted", True))
    proc = subprocess.run([str(ourobot), "gate", "check", "--state", state, "--json"],
                          capture_output=True, text=True, check=False, timeout=60)  # fmt: skip
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["missing"][0]["condition"] == "halt"
    bad = subprocess.run([str(ourobot), "gate", "check", "--state", "-"], input="nope",
                         capture_output=True, text=True, check=False, timeout=60)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
