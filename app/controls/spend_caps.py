"""Spend caps, asked before every model call, and every call metered into the ledger.

Two caps bind a call: the ticket's (`budgets.usd_per_ticket`, which a repository may lower but
never raise past the operator's `OUROBOT_CAP_USD_PER_TICKET`) and the installation's per UTC
day (`OUROBOT_CAP_USD_PER_DAY`, the operator's alone). Before a call, its *most* possible cost
(the whole prompt uncached and every output token it may produce, at the model's price) is
reserved; the call is refused when what the ledger has recorded, plus what calls still in
flight in this process have reserved, plus this reservation would pass a cap. After the call
its real usage and cost are appended to the ledger and the reservation is released. So within
one process a cap is never passed; concurrent processes can each have calls in flight, so
across workers a cap can be passed by at most the calls they have in flight at once.

A refused call is recorded too (outcome `budget`, no tokens): a refusal is something that
happened. Nothing here reads a repository or a model's text: caps live where no PR can reach.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.controls.ledger import CallOutcome, Ledger, ModelCall, Subject
from app.controls.pricing import PriceTable, usd
from app.repo_config import RepoConfig
from app.settings import Settings
from reviewers.model_client import Completion, Message, ModelClient, ModelError, ToolSpec, Usage
from reviewers.reviewer import BudgetExhausted

MICRO = 1_000_000


@dataclass(frozen=True)
class Caps:
    """The caps in force for one piece of work, in US dollars."""

    usd_per_ticket: float
    usd_per_installation_day: float | None = None

    @classmethod
    def for_repo(cls, config: RepoConfig, settings: Settings) -> Caps:
        """The repository's ticket budget, lowered to the operator's cap; the operator's
        daily cap as it is (a repository has no say in it)."""
        budgets = config.capped(settings).budgets
        return cls(budgets.usd_per_ticket, settings.cap_usd_per_day)


class _InFlight:
    """Reservations of calls under way in this process, by ticket and by installation."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tickets: Counter[str] = Counter()
        self.installations: Counter[int | None] = Counter()


# One per process: every meter in a worker sees the calls the others have in flight.
_IN_FLIGHT = _InFlight()


@dataclass(frozen=True)
class Reservation:
    model: str
    micro_usd: int


class SpendMeter:
    """Admits, meters and records the model calls of one piece of work (e.g. one review run).

    `before_call` is the panel's hook (raises `BudgetExhausted`); `wrap` puts a client behind
    the meter so its calls are recorded, and admitted if the hook was not asked first.
    """

    def __init__(
        self,
        ledger: Ledger,
        prices: PriceTable,
        caps: Caps,
        subject: Subject,
        *,
        role: str,
        prompt_chars: int,
        max_tokens: int,
        halt_check: Callable[[], None] | None = None,
    ) -> None:
        if subject.ticket is None:
            raise ValueError("spend is counted against a ticket: the subject needs one")
        self.ledger = ledger
        self.prices = prices
        self.caps = caps
        self.subject = subject
        self.role = role
        self.prompt_chars = prompt_chars
        self.max_tokens = max_tokens
        self.halt_check = halt_check
        self._pending = threading.local()

    # ---- before ----------------------------------------------------------------------------

    def before_call(self, model: str) -> None:
        """Reserve the call's most cost, or raise `BudgetExhausted` (recorded as refused)."""
        if self.halt_check is not None:
            self.halt_check()
        self._release_pending()  # a reservation left by a call that never started
        most = self.prices.price(model).prices.most_micro_usd(self.prompt_chars, self.max_tokens)
        refusal = self._reserve(most)
        if refusal is not None:
            self.ledger.record_call(
                self.subject,
                ModelCall(self.role, model, "budget", price=self.prices.price(model)),
            )
            raise BudgetExhausted(refusal)
        self._pending.reservation = Reservation(model, most)

    def _reserve(self, most: int) -> str | None:
        """Reserve `most` micro-dollars, or say which cap forbids it."""
        ticket = self.subject.ticket
        assert ticket is not None
        installation = self.subject.installation_id
        with _IN_FLIGHT.lock:
            spent = self.ledger.spent_on_ticket(ticket) + _IN_FLIGHT.tickets[ticket]
            cap = round(self.caps.usd_per_ticket * MICRO)
            if spent + most > cap:
                return (
                    f"ticket {ticket} has spent or reserved {usd(spent)} of its "
                    f"{usd(cap)} budget and this call could cost up to {usd(most)}"
                )
            if self.caps.usd_per_installation_day is not None:
                day = self.ledger.spent_today(installation) + _IN_FLIGHT.installations[installation]
                day_cap = round(self.caps.usd_per_installation_day * MICRO)
                if day + most > day_cap:
                    return (
                        f"this installation has spent or reserved {usd(day)} today of its "
                        f"{usd(day_cap)} daily cap and this call could cost up to {usd(most)}"
                    )
            _IN_FLIGHT.tickets[ticket] += most
            _IN_FLIGHT.installations[installation] += most
        return None

    def release(self, reservation: Reservation) -> None:
        ticket = self.subject.ticket
        assert ticket is not None
        with _IN_FLIGHT.lock:
            _IN_FLIGHT.tickets[ticket] -= reservation.micro_usd
            _IN_FLIGHT.installations[self.subject.installation_id] -= reservation.micro_usd
            # Counter keeps zero entries; drop them so a long-lived worker does not grow.
            if _IN_FLIGHT.tickets[ticket] <= 0:
                del _IN_FLIGHT.tickets[ticket]
            if _IN_FLIGHT.installations[self.subject.installation_id] <= 0:
                del _IN_FLIGHT.installations[self.subject.installation_id]

    def _release_pending(self) -> None:
        left = getattr(self._pending, "reservation", None)
        if left is not None:
            self._pending.reservation = None
            self.release(left)

    def take_reservation(self, model: str) -> Reservation:
        """This thread's reservation from `before_call`, or a new one for a direct call."""
        reservation: Reservation | None = getattr(self._pending, "reservation", None)
        if reservation is None:
            self.before_call(model)
            reservation = self._pending.reservation
            assert reservation is not None
        self._pending.reservation = None
        return reservation

    # ---- after -----------------------------------------------------------------------------

    def record(
        self,
        model: str,
        outcome: CallOutcome,
        usage: Usage,
        *,
        answered_by: str | None = None,
        error_kind: str | None = None,
    ) -> int:
        """Append one finished call to the ledger; its cost in micro-dollars."""
        price = self.prices.price(answered_by or model)
        cost = price.prices.cost_micro_usd(usage)
        self.ledger.record_call(
            self.subject,
            ModelCall(
                self.role,
                model,
                outcome,
                usage=usage,
                cost_micro_usd=cost,
                answered_by=answered_by,
                error_kind=error_kind,
                price=price,
            ),
        )
        return cost

    def wrap(self, client: ModelClient) -> ModelClient:
        return MeteredClient(client, self)


class MeteredClient:
    """A model client whose every call is admitted by the meter and recorded in the ledger,
    including an answer that arrives after the panel stopped waiting for it."""

    def __init__(self, inner: ModelClient, meter: SpendMeter) -> None:
        self._inner = inner
        self._meter = meter

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        timeout_s: float,
        tools: Sequence[ToolSpec] = (),
    ) -> Completion:
        reservation = self._meter.take_reservation(self.model_id)
        # Recorded before the reservation is released: the spend is never counted by neither.
        try:
            try:
                # Tools only when asked for: a client that offers none need not take the argument.
                extra = {"tools": tools} if tools else {}
                answer = self._inner.complete(
                    system, messages, max_tokens=max_tokens, timeout_s=timeout_s, **extra
                )
            except ModelError as exc:
                outcome: CallOutcome = "timeout" if exc.kind == "timeout" else "error"
                self._meter.record(reservation.model, outcome, Usage(), error_kind=exc.kind)
                raise
            except Exception as exc:
                kind = type(exc).__name__
                self._meter.record(reservation.model, "error", Usage(), error_kind=kind)
                raise
            answered_by = answer.model if ":" in answer.model else None
            self._meter.record(reservation.model, "ok", answer.usage, answered_by=answered_by)
            return answer
        finally:
            self._meter.release(reservation)
