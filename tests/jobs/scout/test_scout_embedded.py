"""The scout's schedule in embedded mode (`ourobot serve` without Redis): the runner's own
timer looks for due repositories and runs their scouts on its thread."""

from __future__ import annotations

import pytest

from app.handlers.routes import build_router
from app.store import Store
from app.webhooks.embedded import EmbeddedRunner
from tests.jobs.review_check.conftest import review_settings
from tests.jobs.scout.conftest import CONFIG, FILES, FOUR, SCOUT, answer
from tests.jobs.scout.test_scout_worker import proposed, wait_for_proposals
from tests.plugins.processes import wait_for

pytestmark = pytest.mark.slow


def test_the_embedded_runner_scouts_the_configured_repository_once(sandbox, fake_models, tmp_path):
    files = {**FILES, ".github/ourobot.yml": CONFIG + "scout:\n  every_hours: 1\n"}
    scheduled = sandbox.create_repo("octo", "scheduled", files=files)
    plain = sandbox.create_repo("octo", "plain", files=FILES)
    fake_models.script(SCOUT, answer(*FOUR))
    settings = review_settings(sandbox, fake_models, tmp_path, scout_sweep_interval_s=0.5)
    store = Store.open(settings)
    store.migrate()
    runner = EmbeddedRunner(settings, store, build_router)
    runner.start()
    try:
        opened = wait_for_proposals(sandbox, scheduled, 4, 60, lambda: "")
        looks = len(sandbox.requests("GET", "/installation/repositories"))
        wait_for(
            lambda: len(sandbox.requests("GET", "/installation/repositories")) >= looks + 2,
            30,
            "two more looks at the schedule",
        )
    finally:
        runner.stop()
        store.close()
    assert [i.number for i in proposed(sandbox, scheduled)] == [i.number for i in opened]
    assert len(opened) == 4
    assert proposed(sandbox, plain) == []
    assert len(fake_models.requests_for(SCOUT)) == 1
