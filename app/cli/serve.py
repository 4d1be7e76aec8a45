"""`ourobot serve`: the webhook receiver under uvicorn, with the dispatcher for its mode.

Startup refuses a missing webhook secret, a malformed setting and half-set App credentials
(an id without a key, a key file that is missing or does not load: exit 2, one line), migrates
the store, warns when the App's credentials are missing altogether (the receiver still
records deliveries; work needing GitHub then ends with an `infra` outcome), and listens.
SIGTERM and Ctrl-C finish in-flight requests, close the dispatcher and the store, and exit 0.
"""

from __future__ import annotations

import argparse
import logging
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from app.cli import EXIT_OK
from app.cli.startup import (
    check_app_credentials,
    require_sandbox,
    require_unexposed,
    require_webhook_secret,
)
from app.cli.store_open import open_store, status_redis
from app.settings import Settings, load_settings

# The web stack and the database load only when `serve` runs, not for every `ourobot` command.
if TYPE_CHECKING:
    from app.store import Store
    from app.webhooks.dispatch import Dispatcher
    from app.webhooks.handoff import InlineHook

log = logging.getLogger("app.cli.serve")

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def serve(args: argparse.Namespace) -> int:
    from app.webhooks import server
    from app.webhooks.inbox import Inbox
    from app.webhooks.inbox_process import InboxProcess
    from app.webhooks.receiver import create_receiver_app

    settings = load_settings()
    require_webhook_secret(settings)
    has_credentials = check_app_credentials(settings)
    require_unexposed(settings)
    # Embedded mode runs cycles in this process's children; in Redis mode the workers do.
    sandbox_warning = require_sandbox(settings, "ourobot serve") if settings.embedded else None
    with ExitStack() as cleanup:  # closes in reverse: dispatcher, store, socket
        listener = cleanup.enter_context(server.listen(args.host, args.port))
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
        store = open_store(settings)
        cleanup.callback(store.close)
        if sandbox_warning is not None:
            print(f"ourobot: {sandbox_warning}", file=sys.stderr)
        if not has_credentials:
            print(
                "ourobot: warning: OUROBOT_APP_ID and OUROBOT_PRIVATE_KEY (or _PATH) are not "
                "set; deliveries are recorded, work that needs GitHub ends with an infra outcome",
                file=sys.stderr,
            )
        # The inbox, the inline hook and the dispatcher live in a child process of their own;
        # this one answers HTTP (see app.webhooks.inbox_process).
        recorder = InboxProcess(settings, serve_components)
        recorder.start()
        cleanup.callback(recorder.close)
        app = create_receiver_app(settings, inbox=Inbox(store), recorder=recorder)
        add_status_page(app, settings, store)
        mode = "embedded" if settings.embedded else "redis"
        host, port = listener.getsockname()[:2]
        log.info(
            "ourobot serve: %s mode (inbox process %s), listening on http://%s:%d",
            mode,
            recorder.pid,
            host,
            port,
        )
        server.run(app, listener)
    log.info("ourobot serve: stopped")
    return EXIT_OK


def add_status_page(app: Any, settings: Settings, store: Store) -> None:
    """The read-only page at /status, when OUROBOT_STATUS_TOKEN is set (else nothing: 404)."""
    if settings.status_token is None:
        return
    from app.statuspage.route import mount, status_routes

    redis_client, queues = status_redis(settings.redis_url, settings.celery_queue)
    mount(app, status_routes(settings, store, redis_client, queue_names=queues))
    log.info("ourobot serve: status page at /status (token required)")


def serve_components(settings: Settings, store: Store) -> tuple[Dispatcher, InlineHook | None]:
    """What the inbox process runs behind the inbox: the dispatcher and the inline hook."""
    return build_dispatcher(settings, store), build_inline_hook(settings, store)


def build_dispatcher(settings: Settings, store: Store) -> Dispatcher:
    """The dispatcher for this deployment's mode.

    Embedded mode (no OUROBOT_REDIS_URL): the same jobs run in this process from the durable
    inbox, nothing else to install. Redis mode: rows go to Celery workers (`ourobot worker`).
    """
    if settings.embedded:
        from app.handlers.routes import build_router
        from app.webhooks.embedded import EmbeddedRunner

        runner = EmbeddedRunner(settings, store, build_router)
        runner.start()
        return runner
    from tasks.celery_app import create_celery
    from tasks.dispatch import CeleryDispatcher

    return CeleryDispatcher(create_celery(settings))


def build_inline_hook(settings: Settings, store: Store) -> InlineHook | None:
    """What runs inline before dispatch: `/ourobot panic` and `/ourobot resume`."""
    from app.commands.panic import PanicHandler

    redis_client = None
    if settings.redis_url:
        import redis

        redis_client = redis.Redis.from_url(
            settings.redis_url, socket_connect_timeout=2, socket_timeout=2
        )
    return PanicHandler(settings, store, redis_client)
