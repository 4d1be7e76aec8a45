"""One run at a time per key, and a burst of requests folded into as few runs as stay correct.

`run_serialized(ctx, key, work)` runs `work` unless another run for `key` is in progress; then
it leaves a request behind, and the run in progress does the work once more when it finishes.
A burst of N requests while one run is going costs at most one more run, and the last run
always starts after the last request: nothing that happened is left unevaluated.

The protocol (requests are flags, the turn is a lease):
- a caller first sets the request flag, then tries to take the turn; if it cannot, it returns;
- the holder clears the flag before each run, runs, gives the turn back, and looks at the flag
  again: set means a request came in meanwhile, so it takes the turn again (or, if someone
  else took it, that one will see the request).

With Redis the turn and the flag are Redis keys (the turn expires with the task time limit, so
a killed worker cannot keep it); without Redis (embedded mode, one process) they live here.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

from app.jobs.context import EffectBusy, JobContext

_TURN = "ourobot:turn:"
_REQUEST = "ourobot:request:"
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)
BUSY_RETRY_S = 2.0


class _Local:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.turns: set[str] = set()
        self.requests: set[str] = set()


_LOCAL = _Local()


class _Turns:
    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.token = uuid.uuid4().hex

    def request(self, key: str) -> None:
        if self.ctx.redis is None:
            with _LOCAL.lock:
                _LOCAL.requests.add(key)
            return
        self.ctx.redis.set(_REQUEST + key, "1", ex=self.ctx.settings.task_time_limit_s)

    def take_request(self, key: str) -> bool:
        if self.ctx.redis is None:
            with _LOCAL.lock:
                if key in _LOCAL.requests:
                    _LOCAL.requests.discard(key)
                    return True
                return False
        return bool(self.ctx.redis.delete(_REQUEST + key))

    def requested(self, key: str) -> bool:
        if self.ctx.redis is None:
            with _LOCAL.lock:
                return key in _LOCAL.requests
        return bool(self.ctx.redis.exists(_REQUEST + key))

    def acquire(self, key: str) -> bool:
        if self.ctx.redis is None:
            with _LOCAL.lock:
                if key in _LOCAL.turns:
                    return False
                _LOCAL.turns.add(key)
                return True
        lease = self.ctx.settings.task_time_limit_s
        return bool(self.ctx.redis.set(_TURN + key, self.token, nx=True, ex=lease))

    def release(self, key: str) -> None:
        if self.ctx.redis is None:
            with _LOCAL.lock:
                _LOCAL.turns.discard(key)
            return
        self.ctx.redis.eval(_RELEASE, 1, _TURN + key, self.token)


def run_serialized(
    ctx: JobContext, key: str, work: Callable[[], None], *, fold: bool = True
) -> int:
    """Run `work` for `key` now or leave it to the run in progress; how often this call ran it.

    With `fold=False` a busy key raises EffectBusy instead (the job is retried later): for a
    request that carries something of its own, such as who asked to merge."""
    turns = _Turns(ctx)
    turns.request(key)
    runs = 0
    while turns.acquire(key):
        try:
            while turns.take_request(key):
                runs += 1
                work()
        finally:
            turns.release(key)
        if not turns.requested(key):
            break
    if runs == 0 and not fold:
        turns.take_request(key)  # ours: the holder need not run again for it
        raise EffectBusy(key, retry_after_s=BUSY_RETRY_S)
    return runs
