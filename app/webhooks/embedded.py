"""Embedded mode: without Redis, `ourobot serve` processes deliveries itself, in-process.

`EmbeddedRunner` is the receiver's `Dispatcher` when OUROBOT_REDIS_URL is unset. It runs the same
`process_delivery` and the same job functions as the Celery workers, on one background thread,
from the same durable inbox; the sweeper and the webhook redelivery run on timers. Nothing else
to install.

Durability: a row's jobs run inline while the row is claimed, and the row is marked done only
after they ran. If the process dies halfway, the row's lease runs out and the sweeper (at the
next start, or a timer) processes it again; the jobs are idempotent, so that is safe. A job
failing with a rate limit or a transient error puts its row back to pending and the row is
tried again after the job's retry delay (and by the sweeper, should the process stop first).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from app.controls.halt import Halted, check_halt, halt_cause
from app.errors import ConfigError
from app.jobs.actions_overdue import ACTIONS_SWEEP_JOB
from app.jobs.context import JobContext, retry_delay
from app.jobs.registry import Job, load_job_modules, registered_jobs
from app.jobs.scout_schedule import due_scouts
from app.settings import Settings
from app.store import Store
from app.webhooks.inbox import Delivery, Inbox, InboxRow
from app.webhooks.processing import (
    DELIVERY_LEASE_S,
    MAX_DELIVERY_ATTEMPTS,
    RouterLike,
    process_delivery,
)
from app.webhooks.recovery import redeliver_failed, sweep_overdue

logger = logging.getLogger(__name__)

ROW, SWEEP, REDELIVER, SCOUT, ACTIONS = "row", "sweep", "redeliver", "scout", "actions"
MAX_BATCH = 100
# Deliveries parsed by the receiver, kept until their row is processed; beyond this many waiting,
# rows are read back and parsed again from the inbox (memory stays bounded under any burst).
MAX_PARSED = 1000
# While deliveries keep arriving, wait for a pause this long before processing the rows so far
# (bounded by ROW_MAX_DEFER_S from the first one); see `EmbeddedRunner._gather_rows`.
ROW_QUIET_S = 0.02
ROW_MAX_DEFER_S = 0.5


def _given(delivery: Delivery) -> Mapping[str, Any]:
    assert delivery.payload is not None  # only parsed deliveries are kept (`submit_parsed`)
    return delivery.payload


def _delivery_of(row: InboxRow) -> Delivery:
    return Delivery(row.delivery_id, row.event, row.action, row.installation_id, row.body)


class UnknownJob(LookupError):
    """A handler asked for a job nobody registered."""


class _RetryLater(Exception):
    """A job of the row failed in a way worth retrying; carries the cause."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


@dataclass(order=True)
class _Item:
    due: float
    seq: int
    kind: str = field(compare=False)
    row_id: int = field(default=0, compare=False)


class EmbeddedRunner:
    """Processes inbox rows and their jobs on one background thread; a `Dispatcher`.

    `submit` may be called from any thread, before or after `start`. `stop` waits for the item
    in progress and drops the queue (the rows stay in the inbox for the next sweep).
    """

    # `submit` only pushes onto the in-memory queue (`app.webhooks.dispatch.InMemoryDispatcher`).
    in_memory = True

    def __init__(
        self,
        settings: Settings,
        store: Store,
        router_factory: Callable[[Settings], RouterLike],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.store = store
        self._router_factory = router_factory
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: list[_Item] = []
        self._seq = itertools.count()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._retries: Counter[int] = Counter()
        self._parsed: dict[int, Delivery] = {}
        self._warned_redelivery = False
        self._context: JobContext | None = None
        self._router: RouterLike | None = None

    # ---- the Dispatcher side ----------------------------------------------------------------

    def submit(self, row_id: int) -> None:
        self._schedule(0.0, ROW, row_id)

    def submit_many(self, row_ids: list[int]) -> None:
        for row_id in row_ids:
            self._schedule(0.0, ROW, row_id)

    def submit_parsed(self, rows: list[tuple[int, Delivery]]) -> None:
        """`submit_many`, keeping the deliveries the receiver parsed (up to MAX_PARSED waiting
        at once): processing routes them as they are, without reading or parsing them again."""
        with self._cond:
            for row_id, delivery in rows:
                if delivery.payload is not None and len(self._parsed) < MAX_PARSED:
                    self._parsed[row_id] = delivery
        for row_id, _ in rows:
            self._schedule(0.0, ROW, row_id)

    def start(self) -> None:
        """Load the jobs, build the context and router, start the thread and the timers."""
        if self._thread is not None:
            return
        load_job_modules(self.settings)
        self._context = JobContext.from_settings(self.settings, store=self.store)
        self._router = self._router_factory(self.settings)
        self._stopping = False
        # The first sweep and redelivery run at once: they pick up what arrived (or failed to
        # arrive) while the server was down.
        self._schedule(0.0, SWEEP)
        self._schedule(0.0, REDELIVER)
        # The scout's schedule is looked at after one interval: nothing is missed by waiting
        # (a slot lasts at least an hour), and a start asks GitHub nothing it need not.
        self._schedule(self.settings.scout_sweep_interval_s, SCOUT)
        # Tickets whose Actions run will not report, looked at as often as the inbox.
        self._schedule(self.settings.sweep_interval_s, ACTIONS)
        self._thread = threading.Thread(target=self._loop, name="ourobot-embedded", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        with self._cond:
            self._stopping = True
            self._queue.clear()
            self._parsed.clear()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def close(self) -> None:
        """`app.webhooks.dispatch.Closable`: `ourobot serve` calls this on shutdown."""
        self.stop()

    # ---- the thread -------------------------------------------------------------------------

    def _schedule(self, delay_s: float, kind: str, row_id: int = 0) -> None:
        with self._cond:
            if self._stopping:
                return
            heapq.heappush(
                self._queue, _Item(self._clock() + delay_s, next(self._seq), kind, row_id)
            )
            self._cond.notify()

    def _next(self) -> _Item | None:
        with self._cond:
            while not self._stopping:
                now = self._clock()
                if self._queue and self._queue[0].due <= now:
                    return heapq.heappop(self._queue)
                self._cond.wait(self._queue[0].due - now if self._queue else None)
            return None

    def _loop(self) -> None:
        while (item := self._next()) is not None:
            try:
                if item.kind == ROW:
                    self._process_batch(self._gather_rows(item.row_id))
                else:
                    self._run(item)
            except Exception:  # the thread must outlive any one item
                logger.exception("embedded runner: %s item failed", item.kind)

    def _gather_rows(self, first: int) -> list[int]:
        """The row taken plus those that arrive while deliveries keep coming, up to MAX_BATCH.

        Processing shares the interpreter and the SQLite write lock with the receiver: every
        batch costs a claim and a finish (two commits the inbox writer has to wait behind), so
        during a burst the runner holds back until the deliveries pause for `ROW_QUIET_S`, the
        batch is full, or `ROW_MAX_DEFER_S` has passed since the first row was taken. The hard
        maximum keeps processing from being starved by a steady stream; an idle server adds
        only one quiet gap to a lone delivery.
        """
        rows = [first, *self._more_due_rows(MAX_BATCH - 1)]
        give_up = time.monotonic() + ROW_MAX_DEFER_S
        while len(rows) < MAX_BATCH:
            left = give_up - time.monotonic()
            if left <= 0:
                break
            # A sleep, not a wait on the condition: each submit notifies it, and waking for
            # every delivery would cost the receiver a GIL hand-off each time.
            time.sleep(min(ROW_QUIET_S, left))
            if self._stopping:
                break
            more = self._more_due_rows(MAX_BATCH - len(rows))
            if not more:
                break
            rows.extend(more)
        return rows

    def _more_due_rows(self, limit: int) -> list[int]:
        """Up to `limit` rows already due at the head of the queue: processed together, one
        claim and one finish for those that route to no job, so a burst of webhooks costs
        little CPU here, where it competes with acknowledging the next ones."""
        rows: list[int] = []
        with self._cond:
            now = self._clock()
            while (
                self._queue
                and self._queue[0].due <= now
                and self._queue[0].kind == ROW
                and len(rows) < limit
            ):
                rows.append(heapq.heappop(self._queue).row_id)
        return rows

    def _take_parsed(self, row_ids: list[int]) -> dict[int, Delivery]:
        with self._cond:
            return {
                row_id: delivery
                for row_id in row_ids
                if (delivery := self._parsed.pop(row_id, None)) is not None
            }

    def _process_batch(self, row_ids: list[int]) -> None:
        """Route the rows first (routing decides, it does no work), then finish the rows with
        nothing to do in one statement and claim only the others: most deliveries route to no
        job, and each claim is a commit the inbox writer waits behind.

        Rows the receiver handed over parsed are routed from what it parsed; only the others
        are read back. Routing a row someone else has finished meanwhile is harmless: finishing
        and claiming both skip rows that are no longer claimable.
        """
        parsed = self._take_parsed(row_ids)
        if len(row_ids) == 1 and not parsed:
            self._process(row_ids[0])
            return
        assert self._router is not None
        inbox = Inbox(self.store)
        routed: dict[int, list[Job]] = {}
        idle: list[int] = []
        for row_id, delivery, payload in self._routable(inbox, row_ids, parsed):
            try:
                jobs = self._router.route(
                    delivery.event, delivery.action, payload(), delivery_id=delivery.delivery_id
                )
            except Exception as exc:
                # Claimed so that the failure is counted against the row, as for any attempt.
                for claimed in inbox.claim_many([row_id], DELIVERY_LEASE_S, bodies=False):
                    self._fail(inbox, claimed, exc)
                continue
            if jobs:
                routed[row_id] = jobs
            else:
                idle.append(row_id)
        inbox.finish_unclaimed(idle)
        for row in inbox.claim_many(list(routed), DELIVERY_LEASE_S, bodies=False):
            self._run_row_jobs(inbox, row, routed[row.id])

    @staticmethod
    def _routable(
        inbox: Inbox, row_ids: list[int], parsed: dict[int, Delivery]
    ) -> list[tuple[int, Delivery, Callable[[], Mapping[str, Any]]]]:
        """(row id, delivery, its payload) for each row to route, in the order given: the
        receiver's deliveries as they are, the others read from the inbox if still claimable
        (their payload parsed only when routed, so that a bad body fails that row alone)."""
        unknown = [row_id for row_id in row_ids if row_id not in parsed]
        heads = {head.id: head for head in inbox.claimable_heads(unknown)}
        bodies = inbox.bodies_of(list(heads))
        found: list[tuple[int, Delivery, Callable[[], Mapping[str, Any]]]] = []
        for row_id in row_ids:
            if (delivery := parsed.get(row_id)) is not None:
                found.append((row_id, delivery, functools.partial(_given, delivery)))
            elif (head := heads.get(row_id)) is not None:
                row = replace(head, body=bodies.get(row_id, b""))
                found.append((row_id, _delivery_of(row), row.payload))
        return found

    def _run_row_jobs(self, inbox: Inbox, row: InboxRow, jobs: list[Job]) -> None:
        try:
            for planned in jobs:
                self._run_job(planned)
        except _RetryLater as failure:
            inbox.fail(row.id, str(failure)[:1000], final=False)
            self._retry_later(row.id, failure)
            return
        except Exception as exc:
            self._fail(inbox, row, exc)
            return
        inbox.finish(row.id)
        self._retries.pop(row.id, None)

    def _fail(self, inbox: Inbox, row: InboxRow, exc: Exception) -> None:
        final = row.attempts >= MAX_DELIVERY_ATTEMPTS
        inbox.fail(row.id, f"{type(exc).__name__}: {exc}"[:1000], final=final)
        logger.warning("inbox row %d (%s) failed; left for the sweeper: %s", row.id, row.event, exc)

    def _retry_later(self, row_id: int, failure: _RetryLater) -> None:
        delay = retry_delay(failure.cause, self._retries[row_id])
        if delay is None:
            logger.warning("inbox row %d: giving up retries for now: %s", row_id, failure)
            return
        self._retries[row_id] += 1
        logger.info("inbox row %d: %s; retrying in %.1fs", row_id, failure, delay)
        self._schedule(delay, ROW, row_id)

    def _run(self, item: _Item) -> None:
        if item.kind == ROW:
            self._process(item.row_id)
        elif item.kind == SWEEP:
            sweep_overdue(self.store, self.submit, older_than_s=self.settings.sweep_after_s)
            self._schedule(self.settings.sweep_interval_s, SWEEP)
        elif item.kind == REDELIVER:
            self._schedule(self.settings.redelivery_interval_s, REDELIVER)
            self._redeliver()
        elif item.kind == SCOUT:
            self._schedule(self.settings.scout_sweep_interval_s, SCOUT)
            self._scout()
        elif item.kind == ACTIONS:
            self._schedule(self.settings.sweep_interval_s, ACTIONS)
            try:
                self._run_job(Job(ACTIONS_SWEEP_JOB, {}))
            except _RetryLater as failure:  # the next look tries again
                logger.info("actions sweep: %s; the next look retries", failure)

    def _process(self, row_id: int) -> None:
        assert self._context is not None
        assert self._router is not None
        try:
            process_delivery(self._context, self._router, row_id, self._run_job)
        except _RetryLater as failure:
            self._retry_later(row_id, failure)
            return
        except Exception:
            logger.exception("inbox row %d failed; left for the sweeper", row_id)
            return
        self._retries.pop(row_id, None)

    def _run_job(self, planned: Job) -> None:
        """The `enqueue` of embedded mode: run the job now, on this thread."""
        assert self._context is not None
        func = registered_jobs().get(planned.name)
        if func is None:
            raise UnknownJob(f"no job named {planned.name!r} is registered")
        installation_id = planned.kwargs.get("installation_id")
        try:
            check_halt(self._context, installation_id if isinstance(installation_id, int) else None)
            func(self._context, **planned.kwargs)
        except Halted as exc:
            logger.warning("job %s stopped by a halt: %s", planned.name, exc)
        except ConfigError as exc:
            # e.g. no App credentials: a typed infra outcome, not a crash or a retry loop
            logger.warning("job %s: infra: %s", planned.name, exc)
        except Exception as exc:
            if (halt := halt_cause(exc)) is not None:  # a write refused by the client's guard
                logger.warning("job %s stopped by a halt: %s", planned.name, halt)
                return
            if retry_delay(exc, 0) is not None:
                raise _RetryLater(exc) from exc
            # Like a failed Celery task: logged, and the row's other jobs still run.
            logger.exception("job %s failed", planned.name)

    def _scout(self) -> None:
        """The scheduled scout runs that are due, one after the other. A run that fails for
        a reason worth retrying is not recorded, so the next look sends it again."""
        assert self._context is not None
        try:
            due = due_scouts(self._context)
        except Exception as exc:  # GitHub unreachable: the next look tries again
            logger.warning("scout schedule skipped: %s: %s", type(exc).__name__, exc)
            return
        for planned in due:
            try:
                self._run_job(planned)
            except _RetryLater as failure:
                logger.info(
                    "scheduled scout %s: %s; the next look retries", planned.kwargs, failure
                )

    def _redeliver(self) -> None:
        assert self._context is not None
        report = redeliver_failed(self._context)
        if report.execution == "infra":
            log = logger.debug if self._warned_redelivery else logger.warning
            log("webhook redelivery skipped (infra): %s", report.reason)
            self._warned_redelivery = True
        elif report.redelivered:
            logger.info("asked GitHub to redeliver deliveries %s", list(report.redelivered))
