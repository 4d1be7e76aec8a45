"""What a long-running process (`serve`, `worker`, `beat`) checks before it starts anything.

A process never starts half-configured: a setting that is wrong is one line naming the
variable and the fix (exit 2), found before a socket is bound or a worker forked, rather than a
traceback in the log the first time a job needs it. The App's credentials are checked by
`app.install.credentials` (shared with `ourobot doctor`).
"""

from __future__ import annotations

from app.errors import ConfigError
from app.install.credentials import check_app_credentials
from app.settings import Settings

__all__ = ["check_app_credentials", "require_webhook_secret"]


def require_webhook_secret(settings: Settings) -> None:
    if settings.webhook_secret is None or not settings.webhook_secret.get_secret_value():
        raise ConfigError(
            "OUROBOT_WEBHOOK_SECRET is not set: ourobot serve refuses to accept unsigned webhooks"
        )
