"""The CLI frame: exit codes and one-line errors."""

import subprocess
import sys

from app.cli import main


def test_unknown_subcommand_is_one_line_exit_2(capsys):
    try:
        code = main(["no-such-command"])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "invalid choice" in err


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_console_entry_runs_as_module():
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert "sandbox" in proc.stdout
