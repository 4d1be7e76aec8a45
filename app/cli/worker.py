"""`ourobot worker` and `ourobot beat`: a Celery worker (optionally with the beat scheduler),
or the scheduler alone, on OUROBOT_REDIS_URL.

The worker migrates the database, imports the job modules (ourobot's own and
OUROBOT_EXTRA_JOB_MODULES), builds the Celery app from settings and runs until stopped
(SIGTERM: finish running tasks; a second signal or SIGKILL: their messages run again later).
`--beat` (the default) also runs the periodic sweeper and webhook redelivery; with several
workers, one `--beat` is enough (more are harmless: both jobs are idempotent).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

from sqlalchemy.exc import OperationalError

from app.cli.startup import check_app_credentials, require_sandbox, require_unexposed
from app.errors import ConfigError, UserError
from app.settings import Settings, load_settings
from app.store import Store


def run_worker(args: argparse.Namespace) -> int:
    settings = _redis_settings("the worker")
    if args.concurrency is not None and args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    check_app_credentials(settings)
    require_unexposed(settings)
    sandbox_warning = require_sandbox(settings, "ourobot worker")
    if sandbox_warning is not None:
        print(f"ourobot: {sandbox_warning}", file=sys.stderr)
    _migrate(settings)
    from tasks import create_celery  # Celery loads only for this command

    celery_app = create_celery(settings)
    worker = celery_app.Worker(
        hostname=f"ourobot-{os.getpid()}@{socket.gethostname()}",
        concurrency=args.concurrency,
        beat=args.beat,
        loglevel=args.loglevel,
        without_gossip=True,
        without_mingle=True,
    )
    worker.start()
    return int(worker.exitcode or 0)


def run_beat(args: argparse.Namespace) -> int:
    """Celery beat alone: it only sends `ourobot.sweep` and `ourobot.redeliver` on schedule,
    for deployments that run workers with `--no-beat` (one scheduler, any number of workers;
    a second one is harmless: both tasks are idempotent)."""
    settings = _redis_settings("beat")
    check_app_credentials(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)  # where beat keeps its schedule file
    from tasks import create_celery

    celery_app = create_celery(settings)
    beat = celery_app.Beat(loglevel=args.loglevel, quiet=True)
    beat.run()
    return 0


def _redis_settings(who: str) -> Settings:
    settings = load_settings()
    if not settings.redis_url:
        raise UserError(
            f"OUROBOT_REDIS_URL is not set: {who} needs Redis "
            "(without Redis, `ourobot serve` runs the tasks in-process)"
        )
    return settings


def _migrate(settings: Settings) -> None:
    store = Store.open(settings)
    try:
        store.migrate()
    except OperationalError as error:
        first = (str(error.orig).strip().splitlines() or ["unreachable"])[0]
        raise ConfigError(f"OUROBOT_DATABASE_URL: cannot open the database: {first}") from None
    finally:
        store.close()
