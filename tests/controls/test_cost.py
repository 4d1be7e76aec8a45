"""Prices, the ledger and the spend caps: what a call cost, what was spent, what is refused."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from app.controls.ledger import Ledger, ModelCall, Outcome, Subject
from app.controls.pricing import DEFAULT_PRICES, UNKNOWN_MODEL_PRICE, PriceTable, TokenPrices, usd
from app.controls.spend_caps import Caps, SpendMeter
from app.errors import ConfigError
from app.repo_config import load_repo_config
from app.settings import load_settings
from reviewers.fake_servers import FakeUsage, Text
from reviewers.model_client import Completion, Message, ModelError, Usage
from reviewers.providers import ProviderCredentials, build_client
from reviewers.reviewer import BudgetExhausted

SONNET = "anthropic:claude-sonnet-4-test"  # priced by the claude-sonnet-4 default prefix


# ---- prices -----------------------------------------------------------------------------------


def test_cost_is_tokens_times_price_per_million_in_micro_dollars():
    prices = TokenPrices(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(
        input_tokens=1000, output_tokens=200, cache_read_tokens=10_000, cache_write_tokens=2000
    )
    # 3000 + 3000 + 3000 + 7500 micro-dollars
    assert prices.cost_micro_usd(usage) == 16_500
    assert usd(16_500) == "$0.0165"
    assert prices.cost_micro_usd(Usage()) == 0


def test_the_most_a_call_can_cost_errs_high():
    prices = TokenPrices(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    # 3,000 characters ~ 1,000 tokens at the dearer of input and cache write, plus all output.
    assert prices.most_micro_usd(3000, 100) == 1000 * 3.75 + 100 * 15
    assert TokenPrices(0, 0).most_micro_usd(10**6, 4096) == 0


def test_price_lookup_operator_first_then_longest_default_prefix_then_unknown():
    table = PriceTable({"openai:qwen*": TokenPrices(0, 0), "openai:gpt-5": TokenPrices(9, 9)})
    assert table.price("openai:qwen2.5-coder").source == "operator:openai:qwen*"
    assert table.price("openai:gpt-5").prices == TokenPrices(9, 9)
    # An operator's bare key is exact: it does not price a longer name.
    assert table.price("openai:gpt-5-mini").source == "default:openai:gpt-5-mini"
    assert table.price("openai:gpt-5-2025-08-07").prices == DEFAULT_PRICES["openai:gpt-5"]
    assert table.price("anthropic:claude-opus-4-5").source == "default:anthropic:claude-opus-4-5"
    assert table.price("anthropic:claude-opus-4-1").source == "default:anthropic:claude-opus-4"
    unknown = table.price("openai:mystery")
    assert (unknown.prices, unknown.source) == (UNKNOWN_MODEL_PRICE, "unknown")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", "not JSON"),
        ('["a"]', "expected a JSON object"),
        ('{"x": {"input": 1}}', "'output' is required"),
        ('{"x": {"input": 1, "output": -2}}', "output must be a finite number >= 0"),
        ('{"x": {"input": 1, "output": 2, "cached": 1}}', "unknown field 'cached'"),
        ('{"a*b": {"input": 1, "output": 2}}', "a prefix ending in '*'"),
        ('{"x": {"input": true, "output": 2}}', "input must be a number"),
    ],
)
def test_a_bad_operator_price_table_is_one_line_naming_the_variable(value, message):
    with pytest.raises(ConfigError) as caught:
        load_settings(env={"OUROBOT_MODEL_PRICES": value})
    assert str(caught.value).startswith("OUROBOT_MODEL_PRICES: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


# ---- the ledger -------------------------------------------------------------------------------


def subject(key="run-1", ticket="octo/demo#1", installation=7) -> Subject:
    return Subject(key, installation, "octo/demo", 2, ticket, "a" * 40)


def test_ledger_rows_keep_four_outcome_axes_and_once_records_once(store):
    ledger = Ledger(store)
    first = ledger.record(
        "review",
        subject(),
        Outcome("timeout", review="incomplete"),
        error_class="review:timeout",
        detail={"k": 1},
        once=True,
    )
    assert first is not None
    again = ledger.record("review", subject(), Outcome("ok", review="approved"), once=True)
    assert again is None
    ledger.record("refusal", subject(), Outcome("budget"))
    [review] = ledger.entries(kind="review")
    assert review.outcome == Outcome("timeout", "unknown", "incomplete", "none")
    assert (review.detail, review.error_class) == ({"k": 1}, "review:timeout")
    assert len(ledger.entries(subject="run-1")) == 2
    assert ledger.error_counts() == {"review:timeout": 1}


def test_the_database_refuses_an_outcome_outside_its_axis(store):
    Ledger(store).record("review", subject(), Outcome("ok"))
    with pytest.raises(IntegrityError), store.session() as session:
        session.execute(text("UPDATE ledger SET review = 'maybe'"))


def test_spend_sums_by_ticket_and_by_installation_day(store):
    ledger = Ledger(store)
    now = datetime.now(UTC)
    yesterday = now - timedelta(days=1)
    call = ModelCall("reviewer", SONNET, "ok", Usage(10, 10), cost_micro_usd=1_500)
    ledger.record_call(subject(), call, at=now)
    ledger.record_call(subject(ticket="octo/demo#9"), call, at=now)
    ledger.record_call(subject(installation=8), call, at=now)
    ledger.record_call(subject(), call, at=yesterday)
    ledger.record_call(subject(installation=None), call, at=now)
    assert ledger.spent_on_ticket("octo/demo#1") == 4 * 1_500
    assert ledger.spent_on_ticket("octo/demo#9") == 1_500
    assert ledger.spent_on_ticket("nobody#1") == 0
    assert ledger.spent_today(7, now=now) == 2 * 1_500
    assert ledger.spent_today(None, now=now) == 1_500
    assert ledger.spent_by_installation(7, yesterday - timedelta(seconds=1)) == 3 * 1_500


# ---- the spend meter --------------------------------------------------------------------------


class ScriptedClient:
    """A ModelClient that answers from a list (the meter is the thing under test here)."""

    def __init__(self, model_id: str, answers: list[Usage | ModelError]) -> None:
        self._model_id = model_id
        self.answers = answers
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    def complete(
        self, system: str, messages: Sequence[Message], *, max_tokens: int, timeout_s: float
    ) -> Completion:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, ModelError):
            raise answer
        return Completion("VERDICT: APPROVE", answer, model=self._model_id)


_numbers = itertools.count(1000)


@pytest.fixture
def where() -> tuple[str, int]:
    """A ticket and an installation no other test uses: reservations in flight are counted
    per process, and a test that leaves one behind must not spend another test's budget."""
    number = next(_numbers)
    return f"octo/demo#{number}", number


def meter(store, caps: Caps, where: tuple[str, int], *, prices=None, ticket=None) -> SpendMeter:
    table = prices or PriceTable({"x:*": TokenPrices(input=1.0, output=1.0)})
    return SpendMeter(
        Ledger(store),
        table,
        caps,
        subject(ticket=ticket or where[0], installation=where[1]),
        role="reviewer",
        prompt_chars=3000,
        max_tokens=1000,
    )


@pytest.fixture
def sqlite_store(sqlite_settings):
    from app.store import Store

    made = Store.open(sqlite_settings)
    made.migrate()
    yield made
    made.close()


def test_a_call_within_the_cap_is_recorded_with_its_real_cost(sqlite_store, where):
    # Most cost: 1,000 prompt tokens + 1,000 output tokens at $1/M = 2,000 micro-dollars.
    spend = meter(sqlite_store, Caps(usd_per_ticket=0.002), where)
    client = spend.wrap(ScriptedClient("x:small", [Usage(100, 20)]))
    spend.before_call("x:small")
    client.complete("s", [Message("user", "u")], max_tokens=1000, timeout_s=5)
    [row] = Ledger(sqlite_store).calls()
    assert (row.call.outcome, row.call.cost_micro_usd) == ("ok", 120)
    assert (row.call.usage, row.ticket) == (Usage(100, 20), spend.subject.ticket)


def test_a_call_that_could_pass_the_ticket_cap_is_refused_and_recorded(sqlite_store, where):
    spend = meter(sqlite_store, Caps(usd_per_ticket=0.0019), where)
    inner = ScriptedClient("x:small", [Usage(1, 1)])
    with pytest.raises(BudgetExhausted, match=r"ticket octo/demo#\d+ .* \$0\.0019 budget"):
        spend.before_call("x:small")
    with pytest.raises(BudgetExhausted):
        spend.wrap(inner).complete("s", [Message("user", "u")], max_tokens=1000, timeout_s=5)
    assert inner.calls == 0
    assert [row.call.outcome for row in Ledger(sqlite_store).calls()] == ["budget", "budget"]


def test_recorded_spend_counts_against_the_ticket_and_the_installation_day(sqlite_store, where):
    ledger = Ledger(sqlite_store)
    spent = ModelCall("implementer", "x:big", "ok", cost_micro_usd=9_000)
    ledger.record_call(subject(ticket=where[0], installation=where[1]), spent)
    with pytest.raises(BudgetExhausted):
        meter(sqlite_store, Caps(usd_per_ticket=0.010), where).before_call("x:small")
    meter(sqlite_store, Caps(usd_per_ticket=0.011), where).before_call("x:small")
    # Another ticket of the same installation: free of the ticket cap, bound by the day's.
    day_cap = Caps(1.0, usd_per_installation_day=0.012)
    other = meter(sqlite_store, day_cap, where, ticket=where[0] + "-other")
    with pytest.raises(BudgetExhausted, match="daily cap"):
        other.before_call("x:small")  # 9,000 spent + 2,000 reserved above + 2,000 > 12,000


def test_calls_in_flight_hold_their_reservation_until_recorded(sqlite_store, where):
    caps = Caps(usd_per_ticket=0.005)  # room for two reservations of 2,000, not three
    first, second, third = (meter(sqlite_store, caps, where) for _ in range(3))
    results: list[str] = []

    def admit(spend: SpendMeter) -> None:
        try:
            spend.before_call("x:small")
            results.append("admitted")
        except BudgetExhausted:
            results.append("refused")

    threads = [threading.Thread(target=admit, args=(m,)) for m in (first, second, third)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["admitted", "admitted", "refused"]


def test_a_failed_call_is_recorded_without_cost_and_releases_its_reservation(sqlite_store, where):
    spend = meter(sqlite_store, Caps(usd_per_ticket=0.002), where)
    client = spend.wrap(ScriptedClient("x:small", [ModelError("timeout", "slow"), Usage(1, 1)]))
    with pytest.raises(ModelError):
        client.complete("s", [Message("user", "u")], max_tokens=1000, timeout_s=5)
    client.complete("s", [Message("user", "u")], max_tokens=1000, timeout_s=5)  # room again
    rows = Ledger(sqlite_store).calls()
    assert [(r.call.outcome, r.call.error_kind, r.call.cost_micro_usd) for r in rows] == [
        ("timeout", "timeout", 0),
        ("ok", None, 2),
    ]


def test_caps_for_a_repo_take_the_lower_ticket_budget_and_the_operators_day_cap():
    settings = load_settings(env={}, cap_usd_per_ticket=2.0, cap_usd_per_day=30.0)
    generous = load_repo_config("version: 1\nbudgets: {usd_per_ticket: 50}\n")
    frugal = load_repo_config("version: 1\nbudgets: {usd_per_ticket: 0.5}\n")
    assert Caps.for_repo(generous, settings) == Caps(2.0, 30.0)
    assert Caps.for_repo(frugal, settings) == Caps(0.5, 30.0)


def test_cache_tokens_reported_by_the_sdk_are_priced_as_cache(sqlite_store, fake_models, where):
    fake_models.script(
        SONNET,
        Text(
            "VERDICT: APPROVE",
            usage=FakeUsage(100, 50, cache_read_tokens=4000, cache_write_tokens=0),
        ),
    )
    spend = meter(sqlite_store, Caps(5.0), where, prices=PriceTable())
    credentials = ProviderCredentials.from_env(fake_models.env())
    ref = load_repo_config(f"version: 1\nreview: {{models: [{SONNET}], quorum: 1}}\n")
    client = spend.wrap(build_client(ref.review.models[0], credentials, cache_prompt=True))
    client.complete("system", [Message("user", "diff")], max_tokens=100, timeout_s=10)
    [row] = Ledger(sqlite_store).calls()
    assert row.call.usage == Usage(100, 50, 4000, 0)
    # Sonnet: 100 x $3 + 50 x $15 + 4,000 x $0.30 per million.
    assert row.call.cost_micro_usd == 300 + 750 + 1200
    assert row.call.answered_by == SONNET
