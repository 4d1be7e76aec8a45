"""The Celery app factory: every setting comes from `Settings`, nothing from import time.

Delivery guarantees, and why each setting is what it is:
- `task_acks_late` + `task_reject_on_worker_lost`: a task is acknowledged only after it ran,
  and a worker that dies mid-task gives the message back, so a killed worker's task runs again.
  Every task is therefore idempotent (keyed effects and leases: `app.jobs.context.once`).
- `worker_prefetch_multiplier=1`: a worker holds no more unacknowledged messages than it runs,
  so a dying worker strands as little as possible.
- Redis `visibility_timeout` = VISIBILITY_FACTOR x the task time limit: Redis hands an
  unacknowledged message to another worker after this long, so it must exceed the longest
  task, or a task still running would start a second time. Retry countdowns stay below it.
- JSON only: task arguments are plain values, never pickles.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from app.errors import ConfigError
from app.jobs.actions_overdue import ACTIONS_SWEEP_JOB
from app.jobs.registry import load_job_modules
from app.settings import Settings
from app.webhooks.recovery import REDELIVERY_JOB
from tasks.dispatch import SCOUT_SWEEP_TASK, SWEEP_TASK, task_name
from tasks.job_tasks import register_tasks

VISIBILITY_FACTOR = 2
# The soft limit raises inside the task first, so it can stop cleanly before the hard kill.
SOFT_LIMIT_MARGIN = 0.9
BEAT_SCHEDULE_FILENAME = "celerybeat-schedule"
MAX_RESTORE_SCAN_S = 60
MAX_WORKER_LOST_WAIT_S = 10.0


def create_celery(settings: Settings) -> Celery:
    """A Celery app for these settings with every registered job as a task; connects nothing.

    Imports the job modules first (ourobot's own and OUROBOT_EXTRA_JOB_MODULES).
    """
    if not settings.redis_url:
        raise ConfigError("OUROBOT_REDIS_URL is not set: Celery workers need Redis")
    load_job_modules(settings)
    celery_app = Celery("ourobot", set_as_current=False)
    celery_app.conf.update(celery_config(settings))
    register_tasks(celery_app, settings)
    return celery_app


def celery_config(settings: Settings) -> dict[str, Any]:
    """The Celery configuration for `settings` (see the module doc for the reasons)."""
    assert settings.redis_url is not None
    limit = settings.task_time_limit_s
    return {
        "broker_url": settings.redis_url,
        "result_backend": settings.redis_url,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "broker_transport_options": broker_transport_options(settings),
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_time_limit": limit,
        "task_soft_time_limit": max(1, int(limit * SOFT_LIMIT_MARGIN)),
        # A pool process that died is reported (WorkerLostError -> message requeued) only after
        # this wait; it must end well before the time limit, or the task is failed instead.
        "worker_lost_wait": min(MAX_WORKER_LOST_WAIT_S, limit / 4),
        # Nothing reads task results; failures are logged by the worker.
        "task_ignore_result": True,
        "result_expires": 3600,
        "redis_socket_connect_timeout": 3,
        "redis_socket_timeout": 10,
        "task_default_queue": settings.celery_queue,
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a worker waits out a Redis outage
        # On a lost broker connection, stop late-ack tasks: their acks cannot be delivered,
        # so the messages run again anyway (they are idempotent).
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "worker_send_task_events": False,
        "timezone": "UTC",
        "enable_utc": True,
        "beat_schedule": beat_schedule(settings),
        "beat_schedule_filename": str(settings.data_dir / BEAT_SCHEDULE_FILENAME),
    }


def visibility_timeout_s(settings: Settings) -> int:
    return VISIBILITY_FACTOR * settings.task_time_limit_s


def broker_transport_options(settings: Settings) -> dict[str, Any]:
    visibility = visibility_timeout_s(settings)
    return {
        "visibility_timeout": visibility,
        # How often a worker looks for messages of dead workers (older than the visibility
        # timeout) to hand out again; kombu's default scans only every ~100 s.
        "unacked_restore_interval": max(1, min(MAX_RESTORE_SCAN_S, visibility // 4)),
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": 3,
        # Above BRPOP's 1 s poll; without it a publish to a vanished broker can wait forever.
        "socket_timeout": 10,
    }


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """Periodic work. A run that could not start before the next one is due is dropped."""
    return {
        "sweep-overdue-inbox": {
            "task": SWEEP_TASK,
            "schedule": settings.sweep_interval_s,
            "options": {"expires": settings.sweep_interval_s},
        },
        "redeliver-failed-webhooks": {
            "task": task_name(REDELIVERY_JOB),
            "schedule": settings.redelivery_interval_s,
            "options": {"expires": settings.redelivery_interval_s},
        },
        # Tickets whose Actions run will not report (implementer.runs_on: actions): blocked.
        "actions-report-timeouts": {
            "task": task_name(ACTIONS_SWEEP_JOB),
            "schedule": settings.sweep_interval_s,
            "options": {"expires": settings.sweep_interval_s},
        },
        # Sends nothing unless a repository's config sets scout.every_hours (off by default).
        "scout-schedule": {
            "task": SCOUT_SWEEP_TASK,
            "schedule": settings.scout_sweep_interval_s,
            "options": {"expires": settings.scout_sweep_interval_s},
        },
    }
