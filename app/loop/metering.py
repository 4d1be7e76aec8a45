"""Every model call of a cycle goes through the spend caps: admitted before, recorded after.

One `SpendMeter` per call (its reservation is sized by that call's prompt and output limit),
all against the cycle's ticket, so the implementer, the planner and the review panel of one
ticket share one budget. A call the caps refuse raises `BudgetExhausted`; a halt raises
`Halted` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.controls.ledger import Ledger, Subject
from app.controls.pricing import PriceTable
from app.controls.spend_caps import Caps, SpendMeter
from reviewers.model_client import Completion, Message, ModelClient, ToolSpec


@dataclass(frozen=True)
class ModelGate:
    """The spend caps and ledger a cycle's calls go through."""

    ledger: Ledger
    prices: PriceTable
    caps: Caps
    subject: Subject
    halt_check: Callable[[], None] | None = None

    def complete(
        self,
        role: str,
        client: ModelClient,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        """`client`'s answer, metered as `role`."""
        meter = self.meter(role, len(system) + sum(len(m.content) for m in messages), max_tokens)
        return meter.wrap(client).complete(
            system, messages, max_tokens=max_tokens, timeout_s=timeout_s, tools=tools
        )

    def meter(self, role: str, prompt_chars: int, max_tokens: int) -> SpendMeter:
        return SpendMeter(
            self.ledger,
            self.prices,
            self.caps,
            self.subject,
            role=role,
            prompt_chars=prompt_chars,
            max_tokens=max_tokens,
            halt_check=self.halt_check,
        )

    def calls(self) -> tuple[int, int]:
        """(calls made or refused, micro-dollars spent) under this cycle's subject."""
        rows = self.ledger.calls(subject=self.subject.key)
        return len(rows), sum(row.call.cost_micro_usd for row in rows)
