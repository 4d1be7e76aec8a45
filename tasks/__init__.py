"""Celery wiring: the app factory and thin, idempotent task wrappers around `app/`.

`create_celery(settings)` builds a configured Celery app whose tasks are the registered jobs
(`ourobot.<name>`), `ourobot.process_delivery` and `ourobot.sweep`; `CeleryDispatcher` submits
inbox rows to it. Nothing here connects or reads the environment at import time.
"""

from tasks.celery_app import VISIBILITY_FACTOR, create_celery
from tasks.dispatch import PROCESS_DELIVERY_TASK, SWEEP_TASK, CeleryDispatcher, task_name

__all__ = [
    "PROCESS_DELIVERY_TASK",
    "SWEEP_TASK",
    "VISIBILITY_FACTOR",
    "CeleryDispatcher",
    "create_celery",
    "task_name",
]
