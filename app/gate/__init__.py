"""The merge gate: the decision (a pure function over a snapshot of a pull request) and, with
the App, the SHA-pinned merge. See docs/gate.md.

`decide` imports no web framework, no Celery, no GitHub client and no model SDK.
"""

from app.gate.decision import CONDITION_NAMES, Condition, Decision, Step, decide, next_step
from app.gate.load import StateUnreadable, parse_state

__all__ = [
    "CONDITION_NAMES",
    "Condition",
    "Decision",
    "StateUnreadable",
    "Step",
    "decide",
    "next_step",
    "parse_state",
]
