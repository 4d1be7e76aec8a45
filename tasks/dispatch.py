"""Sending work to Celery: inbox rows (the receiver's `Dispatcher`) and jobs (from routing).

Task names are the wire contract between the process that sends and the worker that runs:
`ourobot.process_delivery(row_id)`, `ourobot.sweep()` and `ourobot.<job name>(**kwargs)`.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery

from app.jobs.registry import Job, registered_jobs

logger = logging.getLogger(__name__)

TASK_PREFIX = "ourobot."
PROCESS_DELIVERY_TASK = "ourobot.process_delivery"
# One message for a batch of rows the receiver recorded together: one publish instead of many
# in the serving process, where every millisecond of CPU competes with acknowledging webhooks.
PROCESS_DELIVERIES_TASK = "ourobot.process_deliveries"
SWEEP_TASK = "ourobot.sweep"
# Finds the repositories due a scheduled scout run and sends a `scout` job for each.
SCOUT_SWEEP_TASK = "ourobot.scout_sweep"

# Publishing gives up quickly: the receiver must answer GitHub within 10 s, and a row that
# could not be submitted is still in the inbox for the sweeper. Every send also passes
# `ignore_result=True`: nobody waits for results, and asking for one makes the send subscribe
# to the result backend, which blocks on its own retries (~20 s) while Redis is down.
SUBMIT_RETRY_POLICY: dict[str, Any] = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 1,
}


def task_name(job_name: str) -> str:
    return TASK_PREFIX + job_name


class UnknownJob(LookupError):
    """A handler asked for a job nobody registered (a programming error, not a retry)."""


def send_job(celery_app: Celery, planned: Job) -> None:
    """Queue one job as its task; raises when the broker is unreachable."""
    if planned.name not in registered_jobs():
        raise UnknownJob(f"no job named {planned.name!r} is registered")
    celery_app.send_task(
        task_name(planned.name),
        kwargs=dict(planned.kwargs),
        retry_policy=SUBMIT_RETRY_POLICY,
        ignore_result=True,
    )


class CeleryDispatcher:
    """`app.webhooks.dispatch.Dispatcher` over Celery: sends `ourobot.process_delivery(row_id)`.

    Never raises: when Redis is down the failure is logged and the row, already durable in the
    inbox, is re-submitted by the sweeper once it is overdue. A submit during an outage may
    take a few seconds (bounded by the publish retry policy and the socket timeouts).
    """

    def __init__(self, celery_app: Celery) -> None:
        self.celery_app = celery_app

    def submit(self, row_id: int) -> None:
        self._send(PROCESS_DELIVERY_TASK, row_id)

    def submit_many(self, row_ids: list[int]) -> None:
        if len(row_ids) == 1:
            self.submit(row_ids[0])
            return
        self._send(PROCESS_DELIVERIES_TASK, list(row_ids))

    def _send(self, task: str, rows: int | list[int]) -> None:
        try:
            self.celery_app.send_task(
                task, args=[rows], retry_policy=SUBMIT_RETRY_POLICY, ignore_result=True
            )
        except Exception as exc:  # any broker failure: the inbox still holds the rows
            logger.warning(
                "could not submit inbox %s %s (%s: %s); the sweeper will re-submit it",
                "row" if isinstance(rows, int) else "rows",
                rows,
                type(exc).__name__,
                exc,
            )

    def close(self) -> None:
        """`app.webhooks.dispatch.Closable`: release the broker connections on shutdown."""
        self.celery_app.close()
