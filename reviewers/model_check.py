"""Whether each role's models can be called, asked before a run spends anything.

Two questions per model: is its key where the environment must hold it (the same rule
`providers.build_client` applies: `unusable_reason`), and what does its endpoint answer to
`GET <base>/models` (Anthropic's `/v1/models`; an OpenAI-compatible server's `/models`, which
OpenAI, Ollama, vLLM, llama.cpp's server and LM Studio all serve). Listing models costs no
tokens and, unlike a first completion, answers in well under a second: a refused connection, a
wrong key, a URL that is not such a server or one that does not answer are each found here,
named with the URL and what it said, instead of after the baseline has run.

A fallback chain needs one model it can call, a panel its quorum: a model that cannot be
called while its role has enough others is a warning, not an error. A model the server does not
list is a warning too: llama.cpp's server, for one, answers to any name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from app.errors import UserError
from app.repo_config import ModelRef
from reviewers.providers import (
    KEY_VARIABLES,
    NO_KEY,
    ProviderCredentials,
    root_cause,
    shown_url,
    unusable_reason,
)

PROBE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 2.0
ANTHROPIC_VERSION = "2023-06-01"
_API_NAMES = {"anthropic": "Anthropic API", "openai": "OpenAI-compatible"}
_SHOWN_NAMES = 5


@dataclass(frozen=True)
class Role:
    """One role's models: `needed` of them must be callable (a chain 1, a panel its quorum)."""

    name: str
    models: tuple[ModelRef, ...]
    needed: int = 1


@dataclass(frozen=True)
class Listing:
    """What an endpoint answered: a problem, or the names of the models it serves."""

    problem: str | None
    names: tuple[str, ...] = ()


def check_roles(
    roles: Sequence[Role],
    credentials: ProviderCredentials,
    *,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> list[str]:
    """Warnings to show; a `UserError` (one line naming the variable or the URL and what it
    answered) when a role has fewer callable models than it needs. Each endpoint is asked
    once, however many models share it."""
    listings: dict[tuple[str, str, str | None], Listing] = {}
    warnings: list[str] = []
    for role in roles:
        problems: list[str] = []
        for model in role.models:
            problem, warning = _model_problem(model, credentials, listings, timeout_s)
            if problem is not None:
                problems.append(f"{model.id}: {problem}")
            elif warning is not None and warning not in warnings:
                warnings.append(warning)
        callable_models = len(role.models) - len(problems)
        if callable_models < role.needed:
            raise UserError(_shortfall(role, callable_models, problems))
        warnings += [f"{role.name}: {problem}" for problem in problems]
    return warnings


def _model_problem(
    model: ModelRef,
    credentials: ProviderCredentials,
    listings: dict[tuple[str, str, str | None], Listing],
    timeout_s: float,
) -> tuple[str | None, str | None]:
    """(why `model` cannot be called, a warning about it); at most one is set."""
    missing = unusable_reason(model, credentials)
    if missing is not None:
        return missing, None
    url, key = credentials.endpoint(model)
    where = (model.provider, url, key)
    if where not in listings:
        listings[where] = list_models(model.provider, url, key, timeout_s=timeout_s)
    listing = listings[where]
    if listing.problem is not None:
        return listing.problem, None
    if model.name in listing.names:
        return None, None
    shown = ", ".join(listing.names[:_SHOWN_NAMES])
    more = ", ..." if len(listing.names) > _SHOWN_NAMES else ""
    lists = f"it lists {shown}{more}" if shown else "it lists no models"
    return None, f"{model.id}: {shown_url(url)} does not list {model.name} ({lists})"


def _shortfall(role: Role, callable_models: int, problems: list[str]) -> str:
    said = "; ".join(problems)
    if len(role.models) == 1:
        return said
    if role.needed == 1:
        return f"{role.name} can call none of its models: {said}"
    return f"{role.name} needs {role.needed} models it can call, has {callable_models}: {said}"


def list_models(provider: str, url: str, key: str | None, *, timeout_s: float) -> Listing:
    """`GET <base>/models` at `url` with the key the calls will send (a placeholder where
    none belongs), as a `Listing`."""
    shown = shown_url(url)
    path = "/v1/models" if provider == "anthropic" else "/models"
    headers = (
        {"x-api-key": key or NO_KEY, "anthropic-version": ANTHROPIC_VERSION}
        if provider == "anthropic"
        else {"Authorization": f"Bearer {key or NO_KEY}"}
    )
    try:
        answer = httpx.get(
            url.rstrip("/") + path,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S)),
        )
    except httpx.TimeoutException:
        return Listing(f"{shown} did not answer within {timeout_s:g}s")
    except httpx.HTTPError as exc:
        return Listing(f"cannot connect to {shown}: {root_cause(exc)}")
    return _read_listing(provider, shown, path, key, answer)


def _read_listing(
    provider: str, shown: str, path: str, key: str | None, answer: httpx.Response
) -> Listing:
    api = _API_NAMES[provider]
    status = answer.status_code
    if status in (401, 403):
        variable = KEY_VARIABLES[provider]
        if key is None:
            return Listing(f"{shown} wants a key (HTTP {status}): set {variable}")
        return Listing(f"{shown} refused the key in {variable} (HTTP {status})")
    if not 200 <= status < 300:
        hint = ""
        if provider == "openai" and status == 404 and not shown.endswith("/v1"):
            hint = " (an OpenAI-compatible URL usually ends in /v1)"
        return Listing(f"{shown} answered HTTP {status} to GET {path}: not an {api} server{hint}")
    names = _model_names(answer)
    if names is None:
        return Listing(f"{shown} answered GET {path} without a model list: not an {api} server")
    return Listing(None, names)


def _model_names(answer: httpx.Response) -> tuple[str, ...] | None:
    """The ids in `{"data": [{"id": ...}, ...]}` (both APIs' shape), None if not that shape."""
    try:
        body: Any = answer.json()
    except ValueError:
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return tuple(str(entry["id"]) for entry in data if isinstance(entry, dict) and "id" in entry)
