"""What one labeled issue costs in GitHub requests: each endpoint once (the status comment is
edited twice), no request repeated, tokens reused, a secondary rate limit waited out."""

from __future__ import annotations

from collections import Counter

import pytest

from reviewers.fake_servers import Text, edits_reply
from tests.jobs.loop.conftest import FIX, IMPLEMENTER, WITH_TEST, LoopWorld

pytestmark = pytest.mark.slow

CYCLE = {
    "GET /repos/{owner}/{repo}/collaborators/{username}/permission": 1,
    "GET /repos/{owner}/{repo}": 1,
    "GET /repos/{owner}/{repo}/pulls": 1,
    "GET /repos/{owner}/{repo}/issues/{number}/comments": 1,
    "POST /repos/{owner}/{repo}/issues/{number}/comments": 1,
    "POST /repos/{owner}/{repo}/issues/{number}/labels": 1,
    "POST /repos/{owner}/{repo}/pulls": 1,
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": 1,
}
# Once per process (ourobot's own login) and per installation and hour (REST, then git).
ONCE = {"GET /app": 1, "POST /app/installations/{installation_id}/access_tokens": 2}


def _one_cycle(lw: LoopWorld) -> tuple[Counter[str], Counter[str], list[dict]]:
    number = lw.issue()
    lw.label(number, "writer")
    [job] = [j for d in lw.new_deliveries() for j in lw.jobs_of(d) if j.name == "ticket"]
    lw.sandbox.control.wait_idle()
    before = lw.sandbox.control.stats()
    lw.run(job)
    after = lw.sandbox.control.stats()
    rest = Counter(after["routes"]) - Counter(before["routes"])
    rest = Counter({k: n for k, n in rest.items() if not k.startswith("GIT ")})
    git = Counter(after["git"]) - Counter(before["git"])
    since = before["log"][-1]["t"] if before["log"] else 0
    log = [e for e in after["log"] if e["t"] > since and e["identity"] != "admin"]
    return rest, git, log


def test_one_labeled_issue_asks_each_endpoint_once_and_reuses_its_tokens(lw: LoopWorld):
    # Each cycle: the fix, then DONE (the fake's default for the implementer).
    lw.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST), Text("DONE"),
                     edits_reply(FIX, WITH_TEST))  # fmt: skip
    rest, git, log = _one_cycle(lw)
    # This process may have learned its login in an earlier test: at most once, never more.
    assert rest["GET /app"] <= 1
    assert rest["POST /app/installations/{installation_id}/access_tokens"] == 2
    assert {k: n for k, n in rest.items() if k not in ONCE} == CYCLE
    assert sum(git.values()) in (4, 5)  # ref advertisement and pack, to fetch and to push
    assert git["POST git-receive-pack (git-receive-pack)"] == 1
    reads = Counter(e["path"] for e in log if e["method"] == "GET")
    assert [path for path, n in reads.items() if n > 1] == []
    # The next cycle in the same process: no new token, and the writer's permission (asked a
    # moment ago) comes from the process's short cache.
    rest, git, _ = _one_cycle(lw)
    permission = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"
    assert dict(rest) == {k: n for k, n in CYCLE.items() if k != permission}
    assert sum(git.values()) == 4


def test_a_secondary_rate_limit_is_waited_out_not_hammered(lw: LoopWorld):
    lw.models.script(IMPLEMENTER, edits_reply(FIX, WITH_TEST))
    lw.sandbox.control.add_fault("secondary", method="POST", path=r"/pulls$", retry_after_s=2)
    _, _, log = _one_cycle(lw)
    posts = [e for e in log if e["method"] == "POST" and e["path"].endswith("/pulls")]
    assert [e["status"] for e in posts] == [403, 201]
    assert posts[1]["t"] - posts[0]["t"] >= 2.0
    assert len(lw.pulls()) == 1
