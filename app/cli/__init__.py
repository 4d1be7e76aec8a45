"""The `ourobot` command: one entry point, one subcommand module per concern.

Each `*_cmd.py` module holds only its subcommand's arguments and names its handler with
`deferred("app.cli.<name>", "<function>")`; the implementation (`app/cli/<name>.py`) and its
dependencies load only when that subcommand runs, so `ourobot --help` is instant.

Exit codes are a contract: 0 success, 1 a negative verdict, 2 bad input (one line on stderr,
no traceback, naming what to fix). Anything unexpected is reported in one line with exit code
3 (an internal error: a bug to report); `--debug` shows the traceback for a developer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import NoReturn

from app.errors import UserError

EXIT_OK = 0
EXIT_NEGATIVE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3

# Each module exposes `register(subparsers)`; it sets a (deferred) `handler` via set_defaults.
COMMAND_MODULES = (
    "app.cli.serve_cmd",
    "app.cli.worker_cmd",
    "app.cli.beat_cmd",
    "app.cli.sandbox_cmd",
    "app.cli.demo_cmd",
    "app.cli.config_cmd",
    "app.cli.guards_cmd",
    "app.cli.review_cmd",
    "app.cli.gate_cmd",
    "app.cli.cycle_cmd",
    "app.cli.action_cmd",
    "app.cli.halt_cmd",
    "app.cli.app_cmd",
    "app.cli.doctor_cmd",
    "app.cli.status_cmd",
    "app.cli.ledger_cmd",
    "app.cli.patterns_cmd",
)

Handler = Callable[[argparse.Namespace], int]


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line with exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def installed_version() -> str:
    """The distribution's version (pyproject's), as pip installed it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ourobot")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`: looked up only when asked, so building the parser reads no metadata."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print ourobot's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"ourobot {installed_version()}")
        parser.exit(EXIT_OK)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="ourobot", description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=OneLineParser
    )
    for module_name in COMMAND_MODULES:
        import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return handler(args)
    except UserError as exc:
        print(f"ourobot: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("ourobot: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"ourobot: internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def not_available(what: str) -> Handler:
    """A handler for a command whose issue has not landed yet: says so, never silently."""

    def handler(_: argparse.Namespace) -> int:
        raise UserError(f"{what} is not available yet in this version of ourobot")

    return handler
