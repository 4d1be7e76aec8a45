"""The reviewer role: one model, one prompt, one strictly parsed verdict.

Whatever goes wrong (the call fails, the budget says no, the answer does not parse, a bug in a
client) ends as an *incomplete* verdict that says why: a reviewer never raises into the panel
and never turns a failure into an approval.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from reviewers.context import ReviewPrompt
from reviewers.model_client import Message, ModelClient, ModelError
from reviewers.result import ModelVerdict
from reviewers.verdict import parse_verdict

DEFAULT_MAX_TOKENS = 4096


class BudgetExhausted(Exception):
    """Raised by a `before_call` hook: the spend cap forbids this call."""


# Asked before every model call with the model id; raises BudgetExhausted to refuse it.
BeforeCall = Callable[[str], None]


def review(
    model: str,
    client: ModelClient,
    prompt: ReviewPrompt,
    *,
    timeout_s: float,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    before_call: BeforeCall | None = None,
) -> ModelVerdict:
    """`model`'s verdict on `prompt`."""
    started = time.monotonic()

    def incomplete(kind: str, problem: str) -> ModelVerdict:
        elapsed = time.monotonic() - started
        return ModelVerdict(
            model, "incomplete", problem=problem, error_kind=kind, elapsed_s=elapsed
        )

    try:
        if before_call is not None:
            before_call(model)
        answer = client.complete(
            prompt.system,
            [Message("user", prompt.user)],
            max_tokens=max_tokens,
            timeout_s=timeout_s,
        )
    except BudgetExhausted as exc:
        return incomplete("budget", f"budget exhausted: {exc}")
    except ModelError as exc:
        return incomplete(exc.kind, str(exc))
    except Exception as exc:  # a client bug must fail this reviewer closed, not the panel
        return incomplete("internal", f"internal error: {type(exc).__name__}: {exc}")
    parsed = parse_verdict(answer.text, prompt.asked)
    problem = parsed.problem
    if parsed.verdict == "incomplete" and answer.stop_reason in ("max_tokens", "length"):
        problem = f"{problem} (the answer was cut off at {max_tokens} tokens)"
    return ModelVerdict(
        model=model,
        verdict=parsed.verdict,
        findings=parsed.findings,
        notes=parsed.notes,
        problem=problem,
        error_kind="unparseable" if parsed.verdict == "incomplete" else None,
        usage=answer.usage,
        answered_by=answer.model,
        elapsed_s=time.monotonic() - started,
        answers=parsed.answers,
    )
