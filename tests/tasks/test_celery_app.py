"""tasks: the Celery app built from settings, its tasks, and the dispatcher's outage behaviour."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from app.cli import OneLineParser, worker_cmd
from app.errors import ConfigError, UserError
from app.jobs.registry import Job
from app.settings import Settings
from tasks import PROCESS_DELIVERY_TASK, SWEEP_TASK, CeleryDispatcher, create_celery
from tasks.dispatch import SCOUT_SWEEP_TASK, UnknownJob, send_job
from tasks.job_tasks import registered_task_names
from tests.plugins.processes import RedisServer, free_port


def settings_for(tmp_path: Path, redis_url: str | None, **extra: object) -> Settings:
    return Settings(
        data_dir=tmp_path,
        database_url=None,
        redis_url=redis_url,
        extra_job_modules=("tests.jobs.jobs_for_tests",),
        **extra,  # type: ignore[arg-type]
    )


def test_config_guarantees_at_least_once_delivery(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: building must not connect
    conf = create_celery(settings_for(tmp_path, url, task_time_limit_s=600)).conf
    assert conf.broker_url == url and conf.result_backend == url
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_time_limit == 600
    assert 0 < conf.task_soft_time_limit < 600
    assert conf.broker_transport_options["visibility_timeout"] == 1200
    assert conf.task_serializer == "json" and conf.result_serializer == "json"
    assert list(conf.accept_content) == ["json"]
    assert {entry["task"] for entry in conf.beat_schedule.values()} == {
        SWEEP_TASK,
        "ourobot.redeliver_failed_webhooks",
        SCOUT_SWEEP_TASK,  # sends nothing unless a repository sets scout.every_hours
        "ourobot.actions_overdue",  # looks at nothing unless a ticket waits for an Actions run
    }
    assert conf.beat_schedule["scout-schedule"]["schedule"] == 3600.0
    assert conf.beat_schedule["actions-report-timeouts"]["schedule"] == 60.0
    assert conf.beat_schedule_filename.startswith(str(tmp_path))


def test_every_registered_job_becomes_a_task(tmp_path: Path) -> None:
    celery_app = create_celery(settings_for(tmp_path, "redis://127.0.0.1:1/0"))
    names = registered_task_names(celery_app)
    for expected in (
        PROCESS_DELIVERY_TASK,
        SWEEP_TASK,
        "ourobot.redeliver_failed_webhooks",
        SCOUT_SWEEP_TASK,
        "ourobot.scout",
        "ourobot.tests.post_once",
        "ourobot.tests.call_github",
    ):
        assert expected in names
    task = celery_app.tasks["ourobot.tests.post_once"]
    assert task.acks_late is True and task.reject_on_worker_lost is True

    # A second app (other settings) gets its own tasks, not the first app's closures.
    other = create_celery(settings_for(tmp_path / "other", "redis://127.0.0.1:2/0"))
    assert other.tasks[SWEEP_TASK].run is not celery_app.tasks[SWEEP_TASK].run


def test_no_redis_url_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="OUROBOT_REDIS_URL is not set"):
        create_celery(settings_for(tmp_path, None))


def test_unknown_jobs_are_refused_before_sending(tmp_path: Path) -> None:
    celery_app = create_celery(settings_for(tmp_path, "redis://127.0.0.1:1/0"))
    with pytest.raises(UnknownJob, match=r"tests\.nope"):
        send_job(celery_app, Job("tests.nope", {}))


def test_submit_during_an_outage_logs_and_returns(
    tmp_path: Path, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    celery_app = create_celery(settings_for(tmp_path, redis_server.url))
    dispatcher = CeleryDispatcher(celery_app)
    dispatcher.submit(1)
    queued = redis_server.client().lrange("ourobot", 0, -1)
    assert len(queued) == 1 and b"process_delivery" in queued[0]

    redis_server.stop()
    caplog.set_level(logging.WARNING, logger="tasks.dispatch")
    started = time.monotonic()
    dispatcher.submit(2)
    assert time.monotonic() - started < 3  # a publish retry or two, not a long hang
    assert "could not submit inbox row 2" in caplog.text
    dispatcher.close()


def test_the_worker_command_refuses_a_zero_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = OneLineParser(prog="ourobot")
    worker_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["worker", "--concurrency", "0"])
    monkeypatch.setenv("OUROBOT_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(UserError, match="--concurrency must be at least 1"):
        args.handler(args)


def test_the_worker_command_names_an_unreachable_database(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = OneLineParser(prog="ourobot")
    worker_cmd.register(parser.add_subparsers())
    args = parser.parse_args(["worker", "--no-beat"])
    monkeypatch.setenv("OUROBOT_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("OUROBOT_DATABASE_URL", f"postgresql://nobody@127.0.0.1:{free_port()}/x")
    with pytest.raises(ConfigError, match="OUROBOT_DATABASE_URL: cannot open the database"):
        args.handler(args)


def test_a_batch_of_rows_is_one_message(tmp_path: Path, redis_server: RedisServer) -> None:
    celery_app = create_celery(settings_for(tmp_path, redis_server.url))
    dispatcher = CeleryDispatcher(celery_app)
    dispatcher.submit_many([7, 8, 9])
    dispatcher.submit_many([10])
    queued = redis_server.client().lrange("ourobot", 0, -1)
    assert len(queued) == 2
    assert sum(b"process_deliveries" in message for message in queued) == 1
    assert "ourobot.process_deliveries" in registered_task_names(celery_app)
    dispatcher.close()
