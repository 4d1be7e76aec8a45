"""A labeled issue becomes a pull request on the sandbox, with the real cycle (real git, the
sandboxed test run) and the fake model servers; and everything that must start nothing."""

from __future__ import annotations

import pytest

from tests.jobs.loop.conftest import (
    APPROVE,
    FIX,
    IMPLEMENTER,
    WITH_TEST,
    A,
    B,
    LoopWorld,
)
from reviewers.fake_servers import edits_reply

pytestmark = pytest.mark.slow


def test_a_writers_label_becomes_a_pull_request_whose_checks_run_on_its_head(lw: LoopWorld):
    lw.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
    lw.models.default(A, APPROVE)
    lw.models.default(B, APPROVE)
    number = lw.issue()
    lw.label(number, "writer")
    lw.pump()
    [pull] = lw.pulls()
    assert pull.head.ref == f"ourobot/issue-{number}"
    assert pull.user.login == lw.sandbox.app.bot_login
    assert f"Closes #{number}" in pull.body
    assert "### Iterations" in pull.body and "**Cost:**" in pull.body
    assert f"<!-- ourobot:pr.issue-{number} -->" in pull.body
    assert "return a + b" in lw.file_at(pull.head.sha, "calc.py")
    for check in ("ourobot/guards", "ourobot/review"):
        [run] = lw.check_runs(pull.head.sha, check)
        assert run.conclusion == "success", (check, run.output.summary)
    assert "ourobot:in-progress" in lw.labels(number)
    [status] = lw.bot_comments(number)
    assert f"Opened pull request #{pull.number}" in status.body
