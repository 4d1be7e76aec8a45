"""One finding of the `test-tamper` rule: where, and what was measured."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tamper:
    path: str
    line: int | None
    message: str
