"""The scout's schedule on the sandbox: off unless a repository's config asks, one run per
slot however often the sweep looks, nothing for a halted installation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.controls.halt import HaltRegistry, installation_scope
from app.jobs.scout_schedule import due_scouts, slot_of
from tests.jobs.scout.conftest import CONFIG, FILES, FOUR, SCOUT, answer, make_world

pytestmark = pytest.mark.slow

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def scheduled(sandbox, webhook_sink, fake_models, tmp_path):
    files = {**FILES, ".github/ourobot.yml": CONFIG + "scout:\n  every_hours: 24\n"}
    world = make_world(sandbox, webhook_sink, fake_models, tmp_path, files=files)
    yield world
    world.store.close()


def test_slots_are_utc_and_counted_from_the_epoch():
    assert slot_of(NOON, 24) == slot_of(NOON.replace(hour=0), 24)
    assert slot_of(NOON + timedelta(hours=12), 24) == slot_of(NOON, 24) + 1
    assert slot_of(NOON, 1) != slot_of(NOON + timedelta(hours=1), 1)


def test_off_by_default(sw):
    assert due_scouts(sw.ctx, now=NOON) == []
    assert sw.models.requests == []


def test_a_configured_repository_is_due_once_per_slot(scheduled):
    [job] = due_scouts(scheduled.ctx, now=NOON)
    assert job.name == "scout"
    assert job.kwargs == {
        "installation_id": scheduled.repo.installation_id,
        "repo": "octo/demo",
        "run_key": f"scout:octo/demo:every.24.{slot_of(NOON, 24)}",
        "every_hours": 24,
    }
    scheduled.models.script(SCOUT, answer(*FOUR))
    scheduled.run(job)
    scheduled.run(job)  # delivered twice: one run
    assert len(scheduled.proposed()) == 4
    assert len(scheduled.models.requests_for(SCOUT)) == 1
    assert due_scouts(scheduled.ctx, now=NOON + timedelta(hours=11)) == []
    [later] = due_scouts(scheduled.ctx, now=NOON + timedelta(hours=12))
    assert later.kwargs["run_key"] != job.kwargs["run_key"]


def test_a_halted_installation_is_not_due(scheduled):
    HaltRegistry(scheduled.store).set(
        installation_scope(scheduled.repo.installation_id), reason="test", set_by="admin"
    )
    assert due_scouts(scheduled.ctx, now=NOON) == []


def test_a_schedule_switched_off_after_the_sweep_runs_nothing(scheduled, sw_files_off):
    [job] = due_scouts(scheduled.ctx, now=NOON)
    sw_files_off(scheduled)
    scheduled.run(job)
    assert scheduled.proposed() == []
    assert scheduled.models.requests == []


@pytest.fixture
def sw_files_off():
    def switch_off(world):
        """Push a config without the schedule to main, as a maintainer would."""
        work = world.sandbox.tmp_path / "off"
        git, token = world.sandbox.git, world.repo.owner_token
        git("clone", "-q", world.repo.clone_url, str(work), token=token)
        (work / ".github" / "ourobot.yml").write_text(CONFIG)
        git("commit", "-qam", "scout off", cwd=work)
        git("push", "-q", "origin", "main", cwd=work, token=token)

    return switch_off
