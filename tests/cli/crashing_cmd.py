"""A subcommand whose handler fails the way a bug does, for the CLI frame's exit-3 test."""

from __future__ import annotations

import argparse
from typing import Any


def crash(_: argparse.Namespace) -> int:
    return len({}["missing"])  # a KeyError, as an unforeseen bug would raise


def register(subparsers: Any) -> None:
    subparsers.add_parser("crash").set_defaults(handler=crash)
