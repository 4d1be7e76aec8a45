"""Builds githubkit clients from settings: as the App, as an installation, or with a token.

Retries are deliberate: a secondary or primary rate limit is honoured by waiting what GitHub
says (`retry-after`, else until `x-ratelimit-reset`), but only when that wait is short enough to
spend inside one request; a longer wait raises `RateLimitExceeded` so the task layer can
reschedule instead of holding a worker. 5xx answers get a few retries with backoff.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from githubkit import AppAuthStrategy, AppInstallationAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.exception import GitHubException, RateLimitExceeded, RequestFailed
from githubkit.typing import RetryOption

from app.errors import ConfigError
from app.settings import Settings

USER_AGENT = "ourobot/0.1 (+https://github.com/ourobot)"


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

    def app(self) -> GitHub[AppAuthStrategy]:
        """A client authenticated as the App itself (JWT)."""
        if not self.settings.has_app_credentials() or self.settings.app_id is None:
            raise ConfigError(
                "GitHub App credentials are not configured: set OUROBOT_APP_ID and "
                "OUROBOT_PRIVATE_KEY or OUROBOT_PRIVATE_KEY_PATH"
            )
        key = self.settings.private_key_pem()
        assert key is not None  # has_app_credentials() guarantees one source is set
        return GitHub(
            AppAuthStrategy(self.settings.app_id, key),
            base_url=self.settings.github_api_url,
            user_agent=USER_AGENT,
            timeout=self.timeout_s,
            http_cache=False,
            auto_retry=self.retry,
        )

    def installation(self, installation_id: int) -> GitHub[AppInstallationAuthStrategy]:
        """A client acting as one installation; its token is minted and refreshed by githubkit."""
        app = self.app()
        auth = app.auth
        assert isinstance(auth, AppAuthStrategy)
        return app.with_auth(auth.as_installation(installation_id))

    def token(self, token: str) -> GitHub[TokenAuthStrategy]:
        """A client for a plain token (the Action's GITHUB_TOKEN, or a person in the sandbox)."""
        return GitHub(
            TokenAuthStrategy(token),
            base_url=self.settings.github_api_url,
            user_agent=USER_AGENT,
            timeout=self.timeout_s,
            http_cache=False,
            auto_retry=self.retry,
        )
