"""What the long-running commands check about the sandbox before they start, as plain calls
with real settings (the refusals through the console script are in test_one_line_errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.startup import require_sandbox, require_unexposed
from app.errors import ConfigError
from app.settings import Settings
from app.workspace.cage.toolchain import python_toolchains


def test_a_key_inside_a_mounted_toolchain_is_refused_and_one_in_etc_ourobot_is_not(tmp_path: Path):
    inside = python_toolchains()[0] / "ourobot-app.pem"
    with pytest.raises(ConfigError, match=r"OUROBOT_PRIVATE_KEY_PATH .* lies under"):
        require_unexposed(Settings(data_dir=tmp_path, private_key_path=inside))
    require_unexposed(Settings(data_dir=tmp_path, private_key_path=Path("/etc/ourobot/app.pem")))


def test_an_env_file_under_a_mounted_system_folder_is_refused(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"OUROBOT_ENV_FILE .* lies under /usr"):
        require_unexposed(Settings(data_dir=tmp_path, env_file=Path("/usr/local/etc/ourobot.env")))


def test_allowing_unsandboxed_runs_turns_the_refusal_into_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap to be found
    with pytest.raises(ConfigError, match="bubblewrap"):
        require_sandbox(Settings(data_dir=tmp_path), "ourobot worker")
    warning = require_sandbox(Settings(data_dir=tmp_path, allow_unsandboxed=True), "ourobot worker")
    assert warning is not None and "OUROBOT_ALLOW_UNSANDBOXED=1" in warning


def test_with_a_working_sandbox_nothing_is_said(bwrap: str, tmp_path: Path):
    assert require_sandbox(Settings(data_dir=tmp_path), "ourobot serve") is None
