"""What the `ourobot/gate` check run says about a decision: success only when every condition is
met on H, otherwise failure naming what is missing, and a table of every condition with its
reason. Reasons quote names other people chose (check names, logins), so each cell is inert
Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.gate.checks import GATE_CHECK
from app.gate.decision import Decision
from app.guards.result import markdown_cell

__all__ = ["GATE_CHECK", "GateOutput", "gate_output"]

MAX_SUMMARY_CHARS = 60_000  # GitHub refuses more than 65,535


@dataclass(frozen=True)
class GateOutput:
    conclusion: Literal["success", "failure"]
    title: str
    summary: str


def gate_output(decision: Decision, *, number: int, notes: tuple[str, ...] = ()) -> GateOutput:
    """The check run's conclusion, title and summary. `notes` are Markdown lines ourobot wrote
    (what it did about the decision: merged, updated the branch, an override)."""
    head = decision.head_sha or "(unreadable)"
    if decision.merge:
        conclusion: Literal["success", "failure"] = "success"
        title = "Every condition holds on this commit"
    else:
        conclusion = "failure"
        title = "Not mergeable yet: " + ", ".join(c.name for c in decision.missing)
    lines = [
        f"Pull request #{number}, evaluated on head commit `{markdown_cell(head)}`: "
        + ("**merge**." if decision.merge else "**wait**."),
        "",
        "| | condition | reason |",
        "| --- | --- | --- |",
    ]
    for condition in decision.conditions:
        mark = "✅" if condition.met else "❌"
        lines.append(f"| {mark} | `{condition.name}` | {markdown_cell(condition.reason)} |")
    if notes:
        lines += ["", *notes]
    lines += [
        "",
        "Every condition is about this exact commit; a push starts over. "
        "`ourobot gate check` gives the same answer offline from a saved snapshot.",
    ]
    summary = "\n".join(lines)
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 20] + "\n\n(cut short)"
    return GateOutput(conclusion, title[:250], summary)
