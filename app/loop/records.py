"""What an implementer's work leaves on record: each submission (an iteration), each command,
how the work stopped, and the words that explain a blocked ticket."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from app.guards.declared import Declared
from app.guards.paths import display
from app.loop.apply import Flag, Refusal
from app.loop.shell import CommandRecord
from app.workspace.cage.entry import CageRun

Stop = Literal[
    "green", "satisfied", "exhausted", "no-edits", "budget", "timeout", "halted", "error",
    "steps", "unfinished",
]  # fmt: skip
TestState = Literal["passed", "failed", "not-run"]


@dataclass
class IterationRecord:
    """One submission: what it proposed, what the harness refused, committed and measured."""

    number: int
    phase: str
    model: str = ""
    edits: list[str] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    commit: str | None = None
    tests: TestState = "not-run"
    test_summary: str = ""
    elapsed_s: float = 0.0
    commands: list[CommandRecord] = field(default_factory=list)  # run since the last one
    disclosed: list[Declared] = field(default_factory=list)  # declared test changes it carries

    def progress(self, total: int) -> str:
        parts = [f"iteration {self.number}/{total} ({self.phase})"]
        if self.commands:
            parts.append(f"{len(self.commands)} command(s)")
        parts.append(
            f"{len(self.edits)} edit(s)" + (f": {', '.join(self.edits[:4])}" if self.edits else "")
        )
        if self.refusals:
            shown = "; ".join(f"[{r.rule}] {r.path or '-'}" for r in self.refusals[:3])
            parts.append(f"refused {len(self.refusals)}: {shown}")
        if self.flags:
            shown = "; ".join(f"[{f.rule}] {f.path}" for f in self.flags[:3])
            parts.append(f"flagged for an admin's approval: {shown}")
        parts.append(f"tests {self.test_summary or self.tests}")
        parts.append(f"{self.elapsed_s:.1f}s")
        return ", ".join(parts)


@dataclass
class WorkResult:
    stop: Stop
    reason: str
    iterations: list[IterationRecord]
    last_run: CageRun | None = None
    measured: list[str] = field(default_factory=list)  # how a green was proved


def refused_by(records: Sequence[IterationRecord]) -> str:
    """Which guard rules refused the iterations, for the blocked explanation: "; every
    iteration was refused: deletions (INSTALL.md: ...)" ("" when none was refused)."""
    refused = [record for record in records if record.refusals]
    if not refused:
        return ""
    first: dict[str, Refusal] = {}
    for record in refused:
        for refusal in record.refusals:
            # The refusal naming a file says more than the iteration-wide one.
            known = first.get(refusal.rule)
            if known is None or (known.path is None and refusal.path):
                first[refusal.rule] = refusal
    rules = ", ".join(
        f"{rule} ({display(r.path) + ': ' if r.path else ''}{_clipped(r.reason)})"
        for rule, r in first.items()
    )
    if len(refused) == len(records):
        return f"; every iteration was refused by the guards: {rules}"
    return f"; {len(refused)} of {len(records)} iteration(s) were refused by the guards: {rules}"


def _clipped(reason: str, limit: int = 160) -> str:
    """`reason` on one line within `limit` characters, its start and its end kept: a guard
    names what it measured first and the limit it broke last ("..., over the limit of 5")."""
    text = " ".join(reason.split())
    if len(text) <= limit:
        return text
    return f"{text[: limit - 45].rstrip()} ... {text[-40:].lstrip()}"
