"""`ourobot doctor`: a deployment's settings and connections, one check and one line each.

Each check says `ok`, `skip` (not used by this deployment, e.g. Redis in embedded mode) or
`FAIL` with what to fix. Every check runs even when an earlier one failed (except when the
settings themselves do not load), so one run lists everything to fix.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from app.errors import UserError
from app.install.credentials import check_app_credentials
from app.settings import Settings

Status = Literal["ok", "skip", "FAIL"]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str

    def line(self) -> str:
        return f"{self.status:<4} {self.name}: {self.detail}"


class Failed(Exception):
    """A check's failure: the message says what to fix."""


def run_checks(settings: Settings) -> Iterator[Check]:
    checks: tuple[tuple[str, Callable[[Settings], tuple[Status, str]]], ...] = (
        ("webhook secret", webhook_secret),
        ("github app", github_app),
        ("redis", redis_answers),
        ("data dir", data_dir_writable),
        ("database", database_migrates),
        ("model keys", model_keys),
        ("sandbox", sandbox),
    )
    for name, check in checks:
        try:
            status, detail = check(settings)
        except (Failed, UserError) as exc:
            status, detail = "FAIL", str(exc)
        yield Check(name, status, detail)


def webhook_secret(settings: Settings) -> tuple[Status, str]:
    secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else ""
    if not secret:
        raise Failed(
            "OUROBOT_WEBHOOK_SECRET is not set: set it to the webhook secret of the App's "
            "settings (ourobot serve refuses to start without it)"
        )
    if len(secret) < 16:
        return "ok", f"set ({len(secret)} characters; GitHub suggests a long random one)"
    return "ok", "set"


def github_app(settings: Settings) -> tuple[Status, str]:
    """The key loads, signs a JWT, and the API accepts it as the App."""
    from githubkit.exception import GitHubException, RequestFailed

    from app.github_client import GitHubClients

    if not check_app_credentials(settings):
        raise Failed(
            "OUROBOT_APP_ID and OUROBOT_PRIVATE_KEY_PATH (or OUROBOT_PRIVATE_KEY) are not set: "
            "create the App (docs/github-app.md) and set them"
        )
    api = settings.github_api_url
    client = GitHubClients(settings, timeout_s=10).app()
    try:
        app = client.rest.apps.get_authenticated().parsed_data
        installations = client.rest.apps.list_installations(per_page=100).parsed_data
    except RequestFailed as exc:
        raise Failed(
            f"{api} refused the App's JWT ({exc.response.status_code}): check that "
            f"OUROBOT_APP_ID={settings.app_id} is the id of the App this key belongs to"
        ) from None
    except GitHubException as exc:
        raise Failed(f"cannot reach {api}: {type(exc).__name__}: {exc}") from None
    slug = app.slug if app is not None else "?"
    count = len(installations)
    detail = f"the key signs a JWT {api} accepts: App {slug} (id {settings.app_id})"
    if count == 0:
        raise Failed(f"{detail}, but it is installed nowhere: install it on a repository")
    return "ok", f"{detail}, {count} installation{'s' if count != 1 else ''}"


def redis_answers(settings: Settings) -> tuple[Status, str]:
    if not settings.redis_url:
        return "skip", "OUROBOT_REDIS_URL is not set: embedded mode, serve runs the jobs itself"
    import redis

    client = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        raise Failed(f"OUROBOT_REDIS_URL does not answer: {exc}") from None
    finally:
        client.close()
    return "ok", "answers PING"


def database_migrates(settings: Settings) -> tuple[Status, str]:
    from sqlalchemy.exc import SQLAlchemyError

    from app.store import Store

    try:
        store = Store.open(settings)
    except SQLAlchemyError as exc:
        raise Failed(f"OUROBOT_DATABASE_URL: cannot open: {_first_line(exc)}") from None
    try:
        applied = store.migrate()
        version = store.current_version()
    except SQLAlchemyError as exc:
        raise Failed(f"OUROBOT_DATABASE_URL: cannot migrate: {_first_line(exc)}") from None
    finally:
        store.close()
    where = "the default SQLite file" if not settings.database_url else "OUROBOT_DATABASE_URL"
    note = f", {len(applied)} migration(s) applied now" if applied else ""
    return "ok", f"{where} is at schema version {version}{note}"


def data_dir_writable(settings: Settings) -> tuple[Status, str]:
    directory = settings.data_dir
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".doctor-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise Failed(
            f"OUROBOT_DATA_DIR {directory} is not writable ({exc.strerror or exc}): "
            "create it for the user ourobot runs as"
        ) from None
    return "ok", f"{directory} is writable"


def model_keys(settings: Settings) -> tuple[Status, str]:
    found = [
        name
        for name, value in (
            ("ANTHROPIC_API_KEY", settings.anthropic_api_key),
            ("OPENAI_API_KEY", settings.openai_api_key),
        )
        if value is not None and value.get_secret_value()
    ]
    if not found:
        return "skip", (
            "no ANTHROPIC_API_KEY or OPENAI_API_KEY: the review panel and the implementer "
            "report incomplete until one is set"
        )
    return "ok", ", ".join(found) + " set"


def sandbox(settings: Settings) -> tuple[Status, str]:
    from app.install.sandbox_probe import sandbox_end_to_end  # bubblewrap: only when checked

    status, detail = sandbox_end_to_end(settings)
    if status == "FAIL":
        raise Failed(detail)
    return "ok", detail


def _first_line(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    return (str(original).strip().splitlines() or [type(exc).__name__])[0]
