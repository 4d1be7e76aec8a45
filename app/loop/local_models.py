"""The models a local cycle (`ourobot cycle`) calls: `--model` and `--base-url` applied to the
repository's config, and every model the cycle will use checked before anything runs.

`--model ID` names the implementer's and the planner's model in place of the config's (a
configured review panel keeps its own); `--base-url URL` says where that model is served, as the
config form `{id: ID, base_url: URL}` does, so the same rule decides whether a key is sent there
(a local server on 127.0.0.1 needs none and gets none). The check (`reviewers.model_check`)
turns a missing key, a refused connection or a URL that is not a model server into one line
and exit 2 before the baseline runs; a model without a price is a warning, since the spend caps
then charge it at the dearest price.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urlsplit

from pydantic import ValidationError

from app.controls.pricing import PriceTable
from app.errors import UserError
from app.loop.ticket import Ticket
from app.repo_config import ModelRef, RepoConfig
from reviewers.model_check import Role, check_roles
from reviewers.providers import ProviderCredentials


def model_option(model_id: str | None, base_url: str | None) -> ModelRef | None:
    """`--model` (and `--base-url`) as a model entry; a `UserError` naming the option."""
    if model_id is None:
        if base_url is not None:
            raise UserError("--base-url needs --model: name the model that URL serves")
        return None
    entry: str | dict[str, str] = model_id
    if base_url is not None:
        _check_url(base_url)
        entry = {"id": model_id, "base_url": base_url}
    try:
        return ModelRef.model_validate(entry)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(f"--model {model_id}: {reason}") from None


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"--base-url: expected an http(s) URL such as http://127.0.0.1:11434/v1, got {url!r}"
        )
    if parts.username or parts.password:
        raise UserError("--base-url must not carry credentials: keys belong in the environment")


def with_model(config: RepoConfig, model: ModelRef | None) -> RepoConfig:
    """`config` with `model` as the implementer's and the planner's, if one was named."""
    if model is None:
        return config
    models = config.models.model_copy(update={"implementer": (model,), "planner": (model,)})
    return config.model_copy(update={"models": models})


def check_models(
    config: RepoConfig,
    ticket: Ticket,
    credentials: ProviderCredentials,
    prices: PriceTable,
    progress: Callable[[str], None],
) -> None:
    """Every model the cycle will call can be called (else a `UserError`); warnings, such as
    a model without a price, go to `progress`."""
    roles = [Role("the implementer", config.models.implementer)]
    if ticket.has_label(*config.implementer.plan_labels):
        roles.append(Role("the planner", config.models.planner))
    if "models" in config.review.model_fields_set:
        roles.append(Role("the review panel", config.review.models, config.review.quorum))
    for warning in check_roles(roles, credentials):
        progress(f"warning: {warning}")
    for model in dict.fromkeys(model for role in roles for model in role.models):
        price = prices.price(model.id)
        if price.source == "unknown":
            progress(f"warning: {unpriced(model.id, price.prices.input, price.prices.output)}")


def unpriced(model_id: str, input_usd: float, output_usd: float) -> str:
    free = json.dumps({model_id: {"input": 0, "output": 0}})
    return (
        f"{model_id} has no price: the spend caps charge it at the dearest price "
        f"(${input_usd:g}/${output_usd:g} per million tokens in/out); "
        f"a local model costs nothing: OUROBOT_MODEL_PRICES='{free}'"
    )
