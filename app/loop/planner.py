"""The planner: advisory, for feature tickets, and never able to stop a cycle.

It runs when the ticket carries one of `implementer.plan_labels`. Its answer must hold the
format's `## Goal` and `## Steps` sections; anything else (a failed or refused call, an
unreadable answer) is "no plan" and the implementer starts without one. Only a halt stops the
cycle here, as it would anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from app.controls.halt import Halted
from app.loop.context import PLAN_MAX_CHARS, Context
from app.loop.metering import ModelGate
from reviewers.model_client import Message, ModelClient
from reviewers.prompts import Template

PLANNER_MAX_TOKENS = 4096
PLANNER_TIMEOUT_S = 300.0
_REQUIRED = (re.compile(r"^##\s+Goal\b", re.M), re.compile(r"^##\s+Steps\b", re.M))


@dataclass(frozen=True)
class PlanResult:
    plan: str | None
    note: str  # what happened, for the progress line and the record


def make_plan(
    context: Context,
    template: Template,
    client: ModelClient,
    gate: ModelGate,
    *,
    time_left: Callable[[], float],
) -> PlanResult:
    try:
        system = context.system(template)
        user = context.planner_input()
        answer = gate.complete(
            "planner",
            client,
            system,
            [Message("user", user)],
            max_tokens=PLANNER_MAX_TOKENS,
            timeout_s=max(1.0, min(PLANNER_TIMEOUT_S, time_left())),
        )
    except Halted:
        raise
    except Exception as exc:  # advisory: whatever went wrong, the cycle goes on without a plan
        return PlanResult(None, f"no plan: {type(exc).__name__}: {str(exc)[:200]}")
    text = answer.text.strip()
    if not all(pattern.search(text) for pattern in _REQUIRED):
        return PlanResult(None, "no plan: the planner's answer has no ## Goal and ## Steps")
    return PlanResult(text[:PLAN_MAX_CHARS], f"plan by {answer.model or client.model_id}")
