"""Builds githubkit clients from settings: as the App, as an installation, or with a token.

Retries are deliberate: a secondary or primary rate limit is honoured by waiting what GitHub
says (`retry-after`, else until `x-ratelimit-reset`), but only when that wait is short enough to
spend inside one request; a longer wait raises `RateLimitExceeded` so the task layer can
reschedule instead of holding a worker. 5xx answers get a few retries with backoff.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.exception import GitHubException, RateLimitExceeded, RequestFailed
from githubkit.typing import RetryOption

from app.errors import ConfigError
from app.settings import Settings

USER_AGENT = "ourobot/0.1 (+https://github.com/ourobot)"

# Minting an installation token changes nothing in a repository, so a halt does not block it.
_TOKEN_MINT = re.compile(r"/app/installations/\d+/access_tokens$")
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

WriteGuard = Callable[[int | None], None]
"""Called before every GitHub write with the installation id; raises to refuse the write."""


def _write_hook(guard: WriteGuard, installation_id: int | None) -> Callable[[httpx.Request], None]:
    def before_request(request: httpx.Request) -> None:
        if request.method in _READ_METHODS or _TOKEN_MINT.search(request.url.path):
            return
        guard(installation_id)

    return before_request


@dataclass(frozen=True)
class RetryPolicy:
    """githubkit retry decision: honour GitHub's wait hints, bounded in count and in time."""

    rate_limit_retries: int = 3
    server_error_retries: int = 3
    max_inline_wait_s: float = 60.0
    backoff_base_s: float = 1.0

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if isinstance(exc, RateLimitExceeded):
            wait = exc.retry_after.total_seconds()
            if retry_count < self.rate_limit_retries and wait <= self.max_inline_wait_s:
                # GitHub documents retry-after as a minimum; one extra second avoids racing it.
                return RetryOption(True, timedelta(seconds=wait + (1 if wait else 0)))
            return RetryOption(False)
        is_server_error = isinstance(exc, RequestFailed) and exc.response.status_code >= 500
        if is_server_error and retry_count < self.server_error_retries:
            return RetryOption(True, timedelta(seconds=self.backoff_base_s * 2**retry_count))
        return RetryOption(False)


@dataclass(frozen=True)
class GitHubClients:
    """The one place that knows how to authenticate to GitHub for a given settings object."""

    settings: Settings
    retry: RetryPolicy = RetryPolicy()
    timeout_s: float = 30.0
    # The halt check: every write goes through it, so no code path can forget to ask.
    write_guard: WriteGuard | None = None
    # Inside GitHub Actions there is no App: every "installation" client uses this token.
    fixed_token: str | None = None

    def _options(self, installation_id: int | None) -> dict[str, Any]:
        """What every client shares: where, who we are, how long, how to retry, the guard."""
        return {
            "base_url": self.settings.github_api_url,
            "user_agent": USER_AGENT,
            "timeout": self.timeout_s,
            "http_cache": False,
            "auto_retry": self.retry,
            "event_hooks": self._hooks(installation_id),
        }

    def _hooks(self, installation_id: int | None) -> dict[str, list[Callable[..., object]]]:
        if self.write_guard is None:
            return {}
        return {"request": [_write_hook(self.write_guard, installation_id)]}

    def app(self, *, installation_id: int | None = None) -> GitHub[AppAuthStrategy]:
        """A client authenticated as the App itself (JWT)."""
        if not self.settings.has_app_credentials() or self.settings.app_id is None:
            raise ConfigError(
                "GitHub App credentials are not configured: set OUROBOT_APP_ID and "
                "OUROBOT_PRIVATE_KEY or OUROBOT_PRIVATE_KEY_PATH"
            )
        key = self.settings.private_key_pem()
        assert key is not None  # has_app_credentials() guarantees one source is set
        return GitHub(AppAuthStrategy(self.settings.app_id, key), **self._options(installation_id))

    def installation(self, installation_id: int | None) -> GitHub[Any]:
        """A client acting as one installation; its token is minted and refreshed by githubkit.

        With a fixed token (the Action), that token stands in for the installation.
        """
        if self.fixed_token is not None:
            return self.token(self.fixed_token, installation_id=installation_id)
        if installation_id is None:
            raise ConfigError("this event names no App installation to act as")
        app = self.app(installation_id=installation_id)
        auth = app.auth
        assert isinstance(auth, AppAuthStrategy)
        return app.with_auth(auth.as_installation(installation_id))

    def git_token(self, installation_id: int | None) -> str:
        """A token for git over HTTP: the installation's, reused until it is near expiry (one
        mint per hour per process, not one per fetch or push), or the fixed one."""
        if self.fixed_token is not None:
            return self.fixed_token
        if installation_id is None:
            raise ConfigError("this event names no App installation to act as")
        key = (self.settings.github_api_url, self.settings.app_id, installation_id)
        now = datetime.now(UTC)
        with _token_lock:
            cached = _git_tokens.get(key)
            if cached is not None and cached[1] - now > TOKEN_REFRESH_MARGIN:
                return cached[0]
        app = self.app(installation_id=installation_id)
        minted = app.rest.apps.create_installation_access_token(installation_id).parsed_data
        expires = datetime.fromisoformat(str(minted.expires_at).replace("Z", "+00:00"))
        with _token_lock:
            _git_tokens[key] = (minted.token, expires)
        return minted.token

    def token(self, token: str, *, installation_id: int | None = None) -> GitHub[TokenAuthStrategy]:
        """A client for a plain token (the Action's GITHUB_TOKEN, or a person in the sandbox)."""
        return GitHub(TokenAuthStrategy(token), **self._options(installation_id))


# Installation tokens for git, per (API, App, installation): reused while they have more than
# the margin left (GitHub's last an hour; githubkit caches the REST client's the same way).
TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
_token_lock = threading.Lock()
_git_tokens: dict[tuple[str, int | None, int], tuple[str, datetime]] = {}


# The App's own identity (its bot login), asked of GitHub once per process and API.
_identity_lock = threading.Lock()
_bot_logins: dict[tuple[str, int | None], str] = {}


def bot_login(github: GitHubClients) -> str:
    """`<slug>[bot]`: the login GitHub shows on everything the App writes."""
    if github.fixed_token is not None:
        return github.settings.bot_login
    key = (github.settings.github_api_url, github.settings.app_id)
    with _identity_lock:
        if key in _bot_logins:
            return _bot_logins[key]
    client = github.app()  # githubkit's namespaces hold the client weakly: keep a reference
    app = client.rest.apps.get_authenticated().parsed_data
    if app is None or not app.slug:
        raise RuntimeError("GitHub did not say which App these credentials belong to")
    login = f"{app.slug}[bot]"
    with _identity_lock:
        _bot_logins[key] = login
    return login
