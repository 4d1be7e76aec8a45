"""What every job gets (`JobContext`), how its side effects happen once, and when it is retried.

A job function does the work, `func(ctx, **job.kwargs)`, with a `JobContext` built once per
worker process (or per embedded runner). Running a job twice must have the effect of running
it once: Celery delivers at least once (`acks_late`), a killed worker's task runs again, the
sweeper re-submits overdue deliveries, and GitHub redelivers events. The pattern for a side
effect, e.g. posting a comment:

    def post_welcome(ctx: JobContext, *, installation_id: int, repo: str, number: int) -> None:
        key = f"welcome:{repo}#{number}"
        with once(ctx, key) as first:
            if not first:
                return                      # recorded as done: a rerun does nothing
            check_halt(ctx, installation_id)
            if not marker_on_github(...):   # check-then-act on what GitHub shows
                post_comment(..., body=text + f"<!-- ourobot:{key} -->")

`once` records the key in the `effects` table when the block finishes and holds a lease while
it runs, so two copies of the job never act at the same time. A crash after the GitHub write
but before the record leaves no row; the rerun then finds the hidden marker on GitHub and skips
the write. So: the local record makes reruns cheap, the marker on GitHub makes them correct.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx
import redis
from githubkit.exception import RateLimitExceeded, RequestError, RequestFailed
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from app.controls.halt import HaltRegistry, halt_cause
from app.github_client import GitHubClients
from app.settings import Settings
from app.store import Store
from app.store.schema import effects

# Retries of one job: rate limits wait what GitHub says, transient failures back off.
MAX_JOB_RETRIES = 6
BACKOFF_BASE_S = 2.0
BACKOFF_CAP_S = 300.0
MIN_RATE_LIMIT_WAIT_S = 1.0

_EFFECT_LEASE_PREFIX = "ourobot:effect-lease:"
# Deletes the lease only if we still hold it: an expired lease may belong to someone else now.
_RELEASE_SCRIPT = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class _LocalLeases:
    """Effect leases for a context without Redis (embedded mode: one process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[str] = set()

    def acquire(self, key: str) -> bool:
        with self._lock:
            if key in self._held:
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        with self._lock:
            self._held.discard(key)


@dataclass
class JobContext:
    """What every job gets: built once per worker process (or embedded runner) from settings."""

    settings: Settings
    store: Store
    github: GitHubClients
    redis: redis.Redis | None
    _local_leases: _LocalLeases = field(default_factory=_LocalLeases, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, *, store: Store | None = None) -> JobContext:
        """Build clients from settings; nothing connects until first used."""
        client = None
        if settings.redis_url:
            client = redis.Redis.from_url(
                settings.redis_url, socket_connect_timeout=5, socket_timeout=10
            )
        store = store if store is not None else Store.open(settings)
        # Every GitHub write asks the halt first, so no job can forget to (invariant 5).
        halts = HaltRegistry(store, client)
        return cls(
            settings=settings,
            store=store,
            github=GitHubClients(settings, write_guard=halts.check),
            redis=client,
        )


# ---- keyed effects --------------------------------------------------------------------------


class EffectBusy(Exception):
    """Another run of the same job holds the effect's lease; try again after `retry_after_s`."""

    def __init__(self, key: str, retry_after_s: float) -> None:
        super().__init__(f"effect {key!r} is being done by another run")
        self.key = key
        self.retry_after_s = retry_after_s


def effect_done(ctx: JobContext, key: str) -> bool:
    """Whether the effect `key` has been recorded."""
    with ctx.store.read_session() as session:
        found = session.execute(select(effects.c.key).where(effects.c.key == key)).first()
    return found is not None


def record_effect(ctx: JobContext, key: str, detail: str | None = None) -> bool:
    """Record the effect `key`; says whether this call recorded it (False: it already was)."""
    with ctx.store.session() as session:
        dialect = session.get_bind().dialect.name
        insert = postgresql.insert(effects) if dialect == "postgresql" else sqlite.insert(effects)
        inserted = session.execute(
            insert.values(key=key, created_at=datetime.now(UTC), detail=detail)
            .on_conflict_do_nothing(index_elements=[effects.c.key])
            .returning(effects.c.key)
        ).first()
    return inserted is not None


@contextmanager
def once(ctx: JobContext, key: str, *, detail: str | None = None) -> Iterator[bool]:
    """`with once(ctx, key) as first:` - do the effect only when `first`; see the module doc.

    Yields False when the effect is already recorded. Otherwise holds a lease on `key` (Redis,
    or a process-local one without Redis) for the block, yields True, and records the effect
    when the block ends without an exception. Raises `EffectBusy` when another run holds it.
    """
    if effect_done(ctx, key):
        yield False
        return
    with _effect_lease(ctx, key):
        if effect_done(ctx, key):  # the previous holder finished while we waited
            yield False
            return
        yield True
        record_effect(ctx, key, detail)


@contextmanager
def _effect_lease(ctx: JobContext, key: str) -> Iterator[None]:
    # A live holder runs at most the task time limit, so the lease outlives it; a dead
    # holder's lease expires with it.
    lease_s = ctx.settings.task_time_limit_s
    if ctx.redis is None:
        if not ctx._local_leases.acquire(key):
            raise EffectBusy(key, retry_after_s=BACKOFF_BASE_S)
        try:
            yield
        finally:
            ctx._local_leases.release(key)
        return
    name, token = _EFFECT_LEASE_PREFIX + key, uuid.uuid4().hex
    if not ctx.redis.set(name, token, nx=True, ex=lease_s):
        remaining = ctx.redis.ttl(name)
        wait = float(remaining) if isinstance(remaining, int) and remaining > 0 else lease_s
        raise EffectBusy(key, retry_after_s=wait)
    try:
        yield
    finally:
        ctx.redis.eval(_RELEASE_SCRIPT, 1, name, token)


# ---- retries --------------------------------------------------------------------------------


def retry_delay(
    exc: BaseException, retries: int, *, jitter: Callable[[], float] = random.random
) -> float | None:
    """Seconds to wait before running a failed job again, or None when it must not be retried.

    `retries` is how often it has been retried already. A rate limit waits what GitHub said
    (`retry-after`, else until `x-ratelimit-reset`; githubkit computes it); 5xx answers and
    connection failures back off exponentially with jitter; anything else is a bug or a refusal
    and is not retried.
    """
    if retries >= MAX_JOB_RETRIES or halt_cause(exc) is not None:
        return None
    if isinstance(exc, RateLimitExceeded):
        return max(exc.retry_after.total_seconds(), MIN_RATE_LIMIT_WAIT_S)
    if isinstance(exc, EffectBusy):
        return exc.retry_after_s
    if is_transient(exc):
        return min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0**retries) * (0.5 + jitter() / 2)
    return None


def is_transient(exc: BaseException) -> bool:
    """A failure that may go away by itself: GitHub 5xx, a timeout, a lost connection."""
    if isinstance(exc, RequestFailed):
        status: int = exc.response.status_code
        return status >= 500
    return isinstance(
        exc,
        RequestError
        | httpx.TransportError
        | ConnectionError
        | TimeoutError
        | redis.ConnectionError
        | redis.TimeoutError,
    )
