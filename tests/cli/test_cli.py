"""The CLI frame: exit codes, one-line errors, and a parser that loads no subcommand."""

import json
import subprocess
import sys

import pytest

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


# What a subcommand needs loads only when it runs: building the parser must not import these.
HEAVY = ("sqlalchemy", "pydantic_settings", "celery", "app.guards", "fastapi", "githubkit")
COMMANDS = (
    "serve", "worker", "beat", "sandbox", "demo", "config", "guards", "review", "gate", "action",
    "halt", "app", "doctor", "status", "ledger", "patterns",
)  # fmt: skip
PROBE = """
import json, sys
from app.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = sorted({m.split(".")[0] if not m.startswith("app.") else m for m in sys.modules})
print(json.dumps({"code": code, "loaded": loaded}))
"""


def loaded_for(*argv: str) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True
    )
    report = json.loads(proc.stdout.splitlines()[-1])
    return report["code"], set(report["loaded"])


@pytest.mark.parametrize("argv", [(), *((command,) for command in COMMANDS)])
def test_help_imports_no_subcommand_dependency(argv: tuple[str, ...]) -> None:
    code, loaded = loaded_for(*argv, "--help")
    assert code == 0
    assert sorted(loaded & set(HEAVY)) == []


def test_the_probe_sees_a_subcommand_that_runs(tmp_path) -> None:
    # The same probe, on a command that runs: its dependencies are loaded, so the check above
    # would see them too.
    config = tmp_path / "ourobot.yml"
    config.write_text("version: 1\n")
    code, loaded = loaded_for("config", "check", str(config))
    assert code == 0
    assert "app.repo_config" in loaded and "pydantic" in loaded


def test_the_action_parser_offers_exactly_the_actions_it_runs() -> None:
    from app.cli import action, action_cmd

    assert sorted(action_cmd.ACTIONS) == sorted(action.COMMANDS)


def test_every_deferred_handler_names_a_function_that_exists() -> None:
    import argparse
    from importlib import import_module

    from app.cli import build_parser
    from app.cli.deferred import Deferred

    found: list[Deferred] = []

    def walk(parser: argparse.ArgumentParser) -> None:
        handler = parser.get_default("handler")
        if isinstance(handler, Deferred):
            found.append(handler)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    walk(child)

    walk(build_parser())
    # sandbox and demo import their implementation inside a handler of their own.
    split = (
        "serve", "worker", "config", "guards", "review", "gate", "cycle", "action", "halt",
        "app", "doctor", "status", "ledger", "patterns",
    )  # fmt: skip
    assert {h.module for h in found} == {f"app.cli.{name}" for name in split}
    for handler in found:
        assert callable(getattr(import_module(handler.module), handler.function)), handler


def test_an_internal_error_is_one_line_and_exit_3(monkeypatch, capsys) -> None:
    import app.cli as cli

    monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "tests.cli.crashing_cmd"))
    assert cli.main(["crash"]) == cli.EXIT_INTERNAL == 3
    err = capsys.readouterr().err
    assert err == "ourobot: internal error: KeyError: 'missing' (rerun with --debug)\n"


def test_version_prints_the_installed_distribution_version() -> None:
    from importlib.metadata import version

    proc = subprocess.run(
        [sys.executable, "-m", "app", "--version"], capture_output=True, text=True, check=False
    )
    assert (proc.returncode, proc.stdout) == (0, f"ourobot {version('ourobot')}\n")
