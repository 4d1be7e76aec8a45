"""The Celery tasks: one per registered job, plus the delivery entry task and the sweeper.

Each task takes plain values only and builds nothing itself: the per-process `JobContext` (and
router) is created on first use inside the worker process, after the prefork pool forked, so
connections and GitHub tokens belong to the process that uses them.

What a job's failure leads to:
- `app.controls.halt.Halted`: stop, no retry (the task succeeds as "halted");
- GitHub rate limit: retry after its `retry_after` (what `retry-after` / `x-ratelimit-reset` say);
- GitHub 5xx, timeouts, lost connections, a busy effect lease: retry with backoff and jitter;
- anything else, or too many retries: the task fails and the worker logs it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from celery import Celery, Task

from app.controls.halt import Halted, check_halt, halt_cause
from app.errors import ConfigError
from app.jobs.context import MAX_JOB_RETRIES, JobContext, retry_delay
from app.jobs.registry import JobFunc, JobValue, registered_jobs
from app.jobs.scout_schedule import due_scouts
from app.settings import Settings
from app.webhooks.processing import RouterLike, process_delivery
from app.webhooks.recovery import sweep_overdue
from tasks.dispatch import (
    PROCESS_DELIVERIES_TASK,
    PROCESS_DELIVERY_TASK,
    SCOUT_SWEEP_TASK,
    SWEEP_TASK,
    CeleryDispatcher,
    send_job,
    task_name,
)

logger = logging.getLogger(__name__)

HALTED = "halted"
INFRA = "infra"
OK = "ok"


class WorkerState:
    """The context and router of one worker process, built lazily and rebuilt after a fork."""

    def __init__(
        self, settings: Settings, router_factory: Callable[[Settings], RouterLike]
    ) -> None:
        self.settings = settings
        self._router_factory = router_factory
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._context: JobContext | None = None
        self._router: RouterLike | None = None

    def context(self) -> JobContext:
        with self._lock:
            self._forget_if_forked()
            if self._context is None:
                self._context = JobContext.from_settings(self.settings)
            return self._context

    def router(self) -> RouterLike:
        with self._lock:
            self._forget_if_forked()
            if self._router is None:
                self._router = self._router_factory(self.settings)
            return self._router

    def _forget_if_forked(self) -> None:
        if self._pid != os.getpid():
            self._pid, self._context, self._router = os.getpid(), None, None


def _default_router_factory(settings: Settings) -> RouterLike:
    from app.handlers.routes import build_router  # the handlers: only workers need them

    router: RouterLike = build_router(settings)
    return router


def register_tasks(
    celery_app: Celery,
    settings: Settings,
    router_factory: Callable[[Settings], RouterLike] = _default_router_factory,
) -> WorkerState:
    """Turn every registered job into a task and add the delivery and sweeper tasks."""
    state = WorkerState(settings, router_factory)
    for name, func in registered_jobs().items():
        _register_job(celery_app, state, name, func)
    _register_process_delivery(celery_app, state)
    _register_sweep(celery_app, state)
    _register_scout_sweep(celery_app, state)
    return state


def _register_job(celery_app: Celery, state: WorkerState, name: str, func: JobFunc) -> None:
    # Retry countdowns stay at or below the time limit, half the visibility timeout: a longer
    # one would make Redis hand the waiting message out again before it is due.
    longest_wait = float(state.settings.task_time_limit_s)

    def run_job(self: Task, **kwargs: JobValue) -> str:
        ctx = state.context()
        try:
            installation_id = kwargs.get("installation_id")
            check_halt(ctx, installation_id if isinstance(installation_id, int) else None)
            func(ctx, **kwargs)
        except Halted as exc:
            logger.warning("job %s stopped by a halt: %s", name, exc)
            return HALTED
        except ConfigError as exc:
            # e.g. no App credentials: a typed infra outcome, not a crash or a retry loop
            logger.warning("job %s: infra: %s", name, exc)
            return INFRA
        except Exception as exc:
            if (halt := halt_cause(exc)) is not None:  # a write refused by the client's guard
                logger.warning("job %s stopped by a halt: %s", name, halt)
                return HALTED
            delay = retry_delay(exc, self.request.retries)
            if delay is None:
                raise
            logger.warning(
                "job %s: %s: %s; retry %d in %.1fs",
                name,
                type(exc).__name__,
                exc,
                self.request.retries + 1,
                delay,
            )
            raise self.retry(exc=exc, countdown=min(delay, longest_wait)) from exc
        return OK

    celery_app.task(name=task_name(name), bind=True, max_retries=MAX_JOB_RETRIES, shared=False)(
        run_job
    )


def _register_process_delivery(celery_app: Celery, state: WorkerState) -> None:
    def process(row_id: int) -> bool:
        try:
            return process_delivery(
                state.context(),
                state.router(),
                row_id,
                lambda planned: send_job(celery_app, planned),
            )
        except Exception:
            # The inbox row is pending again (or failed after too many attempts); the sweeper
            # re-submits it, so this message is done either way.
            logger.exception("inbox row %d failed; left for the sweeper", row_id)
            return False

    celery_app.task(name=PROCESS_DELIVERY_TASK, shared=False)(process)

    def process_batch(row_ids: list[int]) -> int:
        # Each row is claimed on its own: a batch split over workers, or re-sent, is harmless.
        return sum(bool(process(row_id)) for row_id in row_ids if isinstance(row_id, int))

    celery_app.task(name=PROCESS_DELIVERIES_TASK, shared=False)(process_batch)


def _register_sweep(celery_app: Celery, state: WorkerState) -> None:
    dispatcher = CeleryDispatcher(celery_app)

    def sweep() -> list[int]:
        return sweep_overdue(
            state.context().store,
            dispatcher.submit,
            older_than_s=state.settings.sweep_after_s,
        )

    celery_app.task(name=SWEEP_TASK, shared=False)(sweep)


def _register_scout_sweep(celery_app: Celery, state: WorkerState) -> None:
    def scout_sweep() -> int:
        # Each sent job is keyed by its repository's slot: sending one twice runs it once.
        planned = due_scouts(state.context())
        for scout_job in planned:
            send_job(celery_app, scout_job)
        return len(planned)

    celery_app.task(name=SCOUT_SWEEP_TASK, shared=False)(scout_sweep)


def registered_task_names(celery_app: Celery) -> list[str]:
    """ourobot's tasks in `celery_app` (Celery adds its own `celery.*` ones)."""
    tasks: dict[str, Any] = dict(celery_app.tasks)
    return sorted(name for name in tasks if name.startswith("ourobot."))
