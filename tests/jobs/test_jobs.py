"""app.jobs.registry and app.jobs.context: plain-value jobs, the registry, keyed effects and
retry decisions."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.exception import RateLimitExceeded, RequestFailed

from app.errors import ConfigError
from app.jobs.context import (
    BACKOFF_BASE_S,
    MAX_JOB_RETRIES,
    EffectBusy,
    JobContext,
    effect_done,
    once,
    record_effect,
    retry_delay,
)
from app.jobs.registry import Job, job, load_job_modules, registered_jobs
from app.settings import Settings
from app.store import Store
from tests.plugins.processes import RedisServer
from tests.plugins.sandbox import SandboxHandle, SeededRepo

# ---- jobs and the registry ------------------------------------------------------------------


def test_job_accepts_plain_values_only() -> None:
    Job("post", {"a": "x", "b": 3, "c": True, "d": None, "e": ["x", "y"]})
    for bad in (1.5, {"k": "v"}, b"bytes", [1, 2], ("t",)):
        with pytest.raises(TypeError, match="jobs take only"):
            Job("post", {"value": bad})
    with pytest.raises(ValueError, match="job name"):
        Job("Not A Name", {})


def test_job_registry_refuses_a_second_function_and_reserved_names() -> None:
    @job("tests.registry_example")
    def first(ctx: JobContext) -> None:
        return None

    assert registered_jobs()["tests.registry_example"] is first
    with pytest.raises(ValueError, match="already registered"):

        @job("tests.registry_example")
        def second(ctx: JobContext) -> None:
            return None

    for reserved in ("process_delivery", "sweep", "Bad Name"):
        with pytest.raises(ValueError, match="reserved or does not match"):
            job(reserved)


def test_load_job_modules_imports_plugins_and_names_a_broken_one(tmp_path: Any) -> None:
    settings = Settings(data_dir=tmp_path, extra_job_modules=("tests.jobs.jobs_for_tests",))
    loaded = load_job_modules(settings)
    assert "app.webhooks.recovery" in loaded and "tests.jobs.jobs_for_tests" in loaded
    assert {"tests.post_once", "redeliver_failed_webhooks"} <= set(registered_jobs())

    broken = Settings(data_dir=tmp_path, extra_job_modules=("tests.jobs.no_such_module",))
    expected = r"OUROBOT_EXTRA_JOB_MODULES: cannot import tests\.jobs\.no_such_module"
    with pytest.raises(ConfigError, match=expected):
        load_job_modules(broken)


# ---- keyed effects --------------------------------------------------------------------------


def context(store: Store, settings: Settings | None = None) -> JobContext:
    return JobContext.from_settings(settings or Settings(database_url=None), store=store)


def fail_inside_once(ctx: JobContext, key: str) -> None:
    with once(ctx, key) as first:
        assert first
        raise RuntimeError("GitHub write failed")


def test_once_does_an_effect_once_and_not_after_a_failure(store: Store) -> None:
    ctx = context(store)
    done: list[str] = []
    with pytest.raises(RuntimeError):
        fail_inside_once(ctx, "k1")
    assert not effect_done(ctx, "k1")  # a failed block records nothing: the rerun tries again

    for _ in range(3):
        with once(ctx, "k1", detail="posted") as first:
            if first:
                done.append("k1")
    assert done == ["k1"]
    assert effect_done(ctx, "k1")
    assert not record_effect(ctx, "k1")  # recording again is a no-op, not an error


def test_once_refuses_a_concurrent_holder_without_redis(sqlite_store: Store) -> None:
    ctx = context(sqlite_store)
    with once(ctx, "busy") as first:
        assert first
        with pytest.raises(EffectBusy), once(ctx, "busy"):
            pytest.fail("a second holder must not enter")
    with once(ctx, "busy") as again:
        assert not again


def test_once_leases_through_redis_across_contexts(
    sqlite_store: Store, redis_server: RedisServer, tmp_path: Any
) -> None:
    settings = Settings(database_url=None, redis_url=redis_server.url, task_time_limit_s=30)
    one, two = context(sqlite_store, settings), context(sqlite_store, settings)
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with once(one, "shared") as first:
            assert first
            entered.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    assert entered.wait(5)
    with pytest.raises(EffectBusy) as busy, once(two, "shared"):
        pytest.fail("another process's context must not enter")
    assert 0 < busy.value.retry_after_s <= 30
    release.set()
    holder.join(5)
    with once(two, "shared") as first:
        assert not first
    assert redis_server.client().keys("ourobot:effect-lease:*") == []


# ---- retry decisions ------------------------------------------------------------------------


@pytest.fixture
def public_repo(sandbox: SandboxHandle) -> SeededRepo:
    return sandbox.create_repo(private=False)


def github_error(
    sandbox: SandboxHandle, repo: SeededRepo, kind: str | None = None, **fault: Any
) -> Exception:
    """The exception githubkit raises when the sandbox answers a GET of `repo` with the fault
    `kind` (None: a GET of a repository that does not exist), over real HTTP."""
    if kind is not None:
        sandbox.control.add_fault(kind, method="GET", path=f"^/repos/{repo.full_name}$", **fault)
    client = GitHub(base_url=sandbox.url, auto_retry=False, http_cache=False)
    with pytest.raises(Exception) as raised:
        client.rest.repos.get(repo.owner, "no-such-repo" if kind is None else repo.name)
    return raised.value


def test_retry_delay_honours_retry_after_and_backs_off_on_server_errors(
    sandbox: SandboxHandle, public_repo: SeededRepo
) -> None:
    limited = github_error(sandbox, public_repo, "secondary", retry_after_s=7)
    assert isinstance(limited, RateLimitExceeded)
    assert retry_delay(limited, 0) == 7.0

    server_error = github_error(sandbox, public_repo, "502")
    assert isinstance(server_error, RequestFailed)
    assert server_error.response.status_code == 502
    for retries in range(3):
        low = retry_delay(server_error, retries, jitter=lambda: 0.0)
        high = retry_delay(server_error, retries, jitter=lambda: 1.0)
        assert low == BACKOFF_BASE_S * 2**retries / 2
        assert high == BACKOFF_BASE_S * 2**retries

    not_found = github_error(sandbox, public_repo)
    assert isinstance(not_found, RequestFailed) and not_found.response.status_code == 404
    assert retry_delay(not_found, 0) is None
    assert retry_delay(ValueError("a bug"), 0) is None
    assert retry_delay(server_error, MAX_JOB_RETRIES) is None
    assert retry_delay(limited, MAX_JOB_RETRIES) is None


def test_retry_delay_treats_connection_failures_and_busy_leases_as_transient() -> None:
    refused = httpx.ConnectError("connection refused")
    assert retry_delay(refused, 0) is not None
    assert retry_delay(EffectBusy("k", 12.5), 0) == 12.5


def test_primary_rate_limit_waits_until_the_reset(
    sandbox: SandboxHandle, public_repo: SeededRepo
) -> None:
    limited = github_error(sandbox, public_repo, "primary", reset_in_s=30)
    assert isinstance(limited, RateLimitExceeded)
    delay = retry_delay(limited, 0)
    assert delay is not None and 27 <= delay <= 31
