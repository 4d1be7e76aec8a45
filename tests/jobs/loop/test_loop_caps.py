"""The loop's caps (cycles per hour, open pull requests), the operator's bound on them, light
mode, and the lease's fencing token."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from app.jobs.ticket_lease import StaleLease, TicketLeases
from app.settings import Settings
from app.store import Store
from app.store.schema import ticket_leases
from reviewers.fake_servers import FakeModels, edits_reply
from tests.jobs.loop.conftest import (
    APPROVE,
    FIX,
    IMPLEMENTER,
    WITH_TEST,
    A,
    B,
    config_text,
    make_world,
    project_files,
)
from tests.plugins.sandbox import SandboxHandle, WebhookSink

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("loop_config", "overrides", "expected"),
    [
        ("{cycles_per_hour: 1}", {}, "`loop.cycles_per_hour` is 1"),
        ("{max_open_prs: 1}", {}, "`loop.max_open_prs` is 1"),
        # The operator's cap bounds the repository's: 5 asked, 1 allowed.
        ("{cycles_per_hour: 5}", {"cap_cycles_per_hour": 1}, "`loop.cycles_per_hour` is 1"),
    ],
)
def test_a_cap_reached_is_said_in_the_status_comment_and_starts_nothing(
    sandbox: SandboxHandle,
    webhook_sink: WebhookSink,
    fake_models: FakeModels,
    tmp_path: Path,
    loop_config: str,
    overrides: dict[str, int],
    expected: str,
):
    files = project_files(config_text(loop=loop_config))
    lw = make_world(sandbox, webhook_sink, fake_models, tmp_path, files=files, **overrides)
    lw.skip = lambda job: job.name not in ("ticket", "command")
    lw.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
    lw.models.default(A, APPROVE)
    lw.models.default(B, APPROVE)
    first, second = lw.issue("first"), lw.issue("second")
    lw.label(first, "writer")
    lw.pump()
    lw.label(second, "writer")
    lw.pump()
    assert len(lw.pulls()) == 1
    assert len(lw.models.requests_for(IMPLEMENTER)) == 2  # the fix, then DONE
    [status] = lw.bot_comments(second)
    assert "Not started" in status.body and expected in status.body
    lw.store.close()


def test_light_mode_never_pushes(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, fake_models: FakeModels, tmp_path: Path
):
    files = project_files(config_text(mode="light"))
    lw = make_world(sandbox, webhook_sink, fake_models, tmp_path, files=files)
    number = lw.issue()
    lw.label(number, "writer")
    lw.pump()
    assert lw.pulls() == [] and lw.branches() == ["main"]
    assert lw.models.requests == []
    [status] = lw.bot_comments(number)
    assert "`light` mode" in status.body
    lw.store.close()


@pytest.fixture
def store(tmp_path: Path):
    store = Store.open(Settings(data_dir=tmp_path / "data", database_url=None))
    store.migrate()
    yield store
    store.close()


def test_one_writer_per_ticket_and_a_stale_holders_late_write_is_refused(store: Store):
    leases = TicketLeases(store)
    first = leases.acquire("octo/demo", 7, "label:d1", ttl_s=60)
    assert first is not None and first.fence == 1
    assert leases.acquire("octo/demo", 7, "label:d2", ttl_s=60) is None  # in progress
    leases.check(first)
    # The first holder stalls past its lease; another run takes the ticket over.
    with store.session() as session:
        session.execute(
            update(ticket_leases).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    second = leases.acquire("octo/demo", 7, "label:d2", ttl_s=60)
    assert second is not None and second.fence == 2
    with pytest.raises(StaleLease):
        leases.check(first)  # the late write of the stale holder
    leases.release(first)  # not theirs any more: changes nothing
    leases.check(second)
    # The retry of a killed run (same key) takes its own lease back at once, with a new fence.
    again = leases.acquire("octo/demo", 7, "label:d2", ttl_s=60)
    assert again is not None and again.fence == 3
    with pytest.raises(StaleLease):
        leases.check(second)
    leases.release(again)
    assert leases.acquire("octo/demo", 7, "label:d3", ttl_s=60).fence == 4  # never reused
