"""`ourobot doctor`'s sandbox check probes the real cage from inside: it says ok only when the
probe reached nothing and read nothing, and names what got through otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.install.sandbox_probe import sandbox_end_to_end
from app.settings import Settings
from app.workspace.cage.toolchain import python_toolchains


def test_the_probe_reaches_nothing_and_reads_neither_key_nor_data(bwrap: str, tmp_path: Path):
    key = tmp_path / "app.pem"
    key.write_text("-----BEGIN RSA PRIVATE KEY-----\n")
    status, detail = sandbox_end_to_end(Settings(data_dir=tmp_path / "data", private_key_path=key))
    assert status == "ok", detail
    assert "loopback unreachable" in detail and "limits by" in detail


def test_a_key_the_sandbox_can_read_is_a_failure_naming_it(bwrap: str, tmp_path: Path):
    # The toolchain ourobot runs from is mounted for the tests' sake: a key kept there is seen.
    inside = python_toolchains()[0] / "pyvenv.cfg"
    status, detail = sandbox_end_to_end(Settings(data_dir=tmp_path, private_key_path=inside))
    assert status == "FAIL" and f"READ {inside}" in detail


def test_without_bubblewrap_it_fails_unless_unsandboxed_runs_are_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path))
    status, detail = sandbox_end_to_end(Settings(data_dir=tmp_path))
    assert status == "FAIL" and "bubblewrap (bwrap) is not installed" in detail
    allowed, _ = sandbox_end_to_end(Settings(data_dir=tmp_path, allow_unsandboxed=True))
    assert allowed == "ok"
