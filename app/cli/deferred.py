"""A subcommand's handler named by module and function, imported only when the command runs.

Building the parser touches no implementation, so `ourobot --help` (and a typo'd command) costs
an interpreter start and argparse, not SQLAlchemy, pydantic-settings, Celery or the guards.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class Deferred:
    module: str
    function: str

    def __call__(self, args: argparse.Namespace) -> int:
        handler = getattr(import_module(self.module), self.function)
        result: int = handler(args)
        return result


def deferred(module: str, function: str) -> Deferred:
    """The handler `module.function(args) -> exit code`, imported when it is called."""
    return Deferred(module, function)
