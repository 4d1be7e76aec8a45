"""Model prices: what a call cost, and the most it can cost before it is made.

Prices are US dollars per million tokens, per kind of token (input, output, cache read, cache
write). A token priced at $X per million costs X micro-dollars, so costs are kept as whole
micro-dollars: sums over the ledger are exact.

The operator's table (`OUROBOT_MODEL_PRICES`, JSON) comes first, then the built-in defaults.
An entry's key is a model id (`anthropic:claude-sonnet-4-5`) or a prefix ending in `*`
(`openai:qwen*`, `openai:*`, `*`); the longest matching key wins. A model nobody priced is
charged at `UNKNOWN_MODEL_PRICE`, the dearest default: a spend cap must bind too early rather
than never. Price a local model (Ollama, vLLM) at 0 in the operator's table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from reviewers.model_client import Usage

if TYPE_CHECKING:
    from app.settings import Settings

PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
# A prompt is estimated at this many characters a token: fewer than the usual four, so an
# estimate errs high.
CHARS_PER_TOKEN_ESTIMATE = 3


@dataclass(frozen=True)
class TokenPrices:
    """USD per million tokens of each kind."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def cost_micro_usd(self, usage: Usage) -> int:
        """What `usage` cost, in micro-dollars (rounded up: never under-count spend)."""
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        )
        return math.ceil(total - 1e-9) if total > 0 else 0

    def most_micro_usd(self, prompt_chars: int, max_tokens: int) -> int:
        """The most one call can cost: the whole prompt uncached (or written to the cache, if
        that is dearer) and every output token the call may produce."""
        prompt_tokens = math.ceil(prompt_chars / CHARS_PER_TOKEN_ESTIMATE)
        per_input = max(self.input, self.cache_write)
        return math.ceil(prompt_tokens * per_input + max_tokens * self.output)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


# Public list prices (USD per million tokens) when this table was written; operators whose
# contracts differ set OUROBOT_MODEL_PRICES. Keys are prefixes of `provider:name`.
DEFAULT_PRICES: Mapping[str, TokenPrices] = {
    "anthropic:claude-opus-4-5": TokenPrices(5.0, 25.0, 0.5, 6.25),
    "anthropic:claude-opus-4": TokenPrices(15.0, 75.0, 1.5, 18.75),
    "anthropic:claude-sonnet-4": TokenPrices(3.0, 15.0, 0.3, 3.75),
    "anthropic:claude-3-7-sonnet": TokenPrices(3.0, 15.0, 0.3, 3.75),
    "anthropic:claude-haiku-4-5": TokenPrices(1.0, 5.0, 0.1, 1.25),
    "anthropic:claude-3-5-haiku": TokenPrices(0.8, 4.0, 0.08, 1.0),
    "openai:gpt-5": TokenPrices(1.25, 10.0, 0.125, 0.0),
    "openai:gpt-5-mini": TokenPrices(0.25, 2.0, 0.025, 0.0),
    "openai:gpt-5-nano": TokenPrices(0.05, 0.4, 0.005, 0.0),
    "openai:gpt-4.1": TokenPrices(2.0, 8.0, 0.5, 0.0),
    "openai:gpt-4o": TokenPrices(2.5, 10.0, 1.25, 0.0),
}
UNKNOWN_MODEL_PRICE = TokenPrices(15.0, 75.0, 1.5, 18.75)


@dataclass(frozen=True)
class Price:
    """The prices used for one model, and where they came from (for the ledger)."""

    prices: TokenPrices
    source: str  # "operator:<key>", "default:<key>" or "unknown"


class PriceTable:
    """Prices by model id: the operator's entries first, then the defaults."""

    def __init__(
        self,
        operator: Mapping[str, TokenPrices] | None = None,
        defaults: Mapping[str, TokenPrices] = DEFAULT_PRICES,
    ) -> None:
        self._operator = dict(operator or {})
        self._defaults = dict(defaults)

    @classmethod
    def from_settings(cls, settings: Settings) -> PriceTable:
        return cls(parse_price_table(settings.model_prices))

    def price(self, model_id: str) -> Price:
        operator = _best_key(self._operator, model_id, bare_keys_are_prefixes=False)
        if operator is not None:
            return Price(self._operator[operator], f"operator:{operator}")
        default = _best_key(self._defaults, model_id, bare_keys_are_prefixes=True)
        if default is not None:
            return Price(self._defaults[default], f"default:{default}")
        return Price(UNKNOWN_MODEL_PRICE, "unknown")


def _best_key(
    table: Mapping[str, TokenPrices], model_id: str, *, bare_keys_are_prefixes: bool
) -> str | None:
    """The exact id, else the longest matching prefix. An operator's prefix ends in `*`; a
    default key is always a prefix (`openai:gpt-5` prices `openai:gpt-5-2025-08-07`)."""
    if model_id in table:
        return model_id
    matches = [
        key
        for key in table
        if (key.endswith("*") or bare_keys_are_prefixes)
        and model_id.startswith(key.removesuffix("*"))
    ]
    return max(matches, key=len, default=None)


def parse_price_table(raw: Mapping[str, Mapping[str, float]]) -> dict[str, TokenPrices]:
    """`{"model or prefix*": {"input": 3, "output": 15, ...}}` as prices (settings validated
    the shape; missing cache prices are 0)."""
    return {
        key: TokenPrices(**{name: float(value) for name, value in entry.items()})
        for key, entry in raw.items()
    }


def check_price_entry(key: str, entry: object) -> None:
    """ValueError naming the problem with one `OUROBOT_MODEL_PRICES` entry."""
    if not key or ("*" in key and not key.endswith("*")) or key.count("*") > 1:
        raise ValueError(f"price key {key!r}: a model id, or a prefix ending in '*'")
    if not isinstance(entry, Mapping):
        raise ValueError(f"price for {key!r}: expected an object of prices per million tokens")
    unknown = sorted(set(entry) - set(PRICE_FIELDS))
    if unknown:
        known = ", ".join(PRICE_FIELDS)
        raise ValueError(f"price for {key!r}: unknown field {unknown[0]!r} (known: {known})")
    for needed in ("input", "output"):
        if needed not in entry:
            raise ValueError(f"price for {key!r}: {needed!r} is required")
    for name, value in entry.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"price for {key!r}: {name} must be a number")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"price for {key!r}: {name} must be a finite number >= 0")


def usd(micro_usd: int) -> str:
    """Micro-dollars as `$0.0123` (four decimals: review calls cost cents)."""
    return f"${micro_usd / 1_000_000:,.4f}"
