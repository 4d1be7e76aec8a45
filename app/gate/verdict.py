"""One condition's answer: met or missing, with the reason (for a met condition, its evidence)."""

from __future__ import annotations

from dataclasses import dataclass

SHORT_SHA = 12


def short(sha: str) -> str:
    return sha[:SHORT_SHA]


@dataclass(frozen=True)
class Verdict:
    is_met: bool
    reason: str

    @classmethod
    def met(cls, reason: str) -> Verdict:
        return cls(True, reason)

    @classmethod
    def missing(cls, reason: str) -> Verdict:
        return cls(False, reason)
