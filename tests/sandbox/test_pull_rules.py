"""GitHub's rules around pull requests that ourobot's gates lean on: merge only the head that was
approved (409), refuse what cannot merge (405), file-list paging and its 3,000-file cap, the 406
on oversized diffs, and review validation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.plugins.sandbox import SandboxHandle, SeededRepo

pytestmark = pytest.mark.slow


class Pusher:
    """A clone of the repo in which branches with given files are committed and pushed."""

    def __init__(self, sandbox: SandboxHandle, repo: SeededRepo) -> None:
        self.sandbox, self.repo = sandbox, repo
        self.work = sandbox.tmp_path / "pusher"
        sandbox.git("clone", "-q", repo.clone_url, str(self.work), token=repo.owner_token)

    def branch(self, name: str, files: dict[str, str], *, start: str = "origin/main") -> str:
        git, work = self.sandbox.git, self.work
        git("checkout", "-q", "-B", name, start, cwd=work)
        for rel, text in files.items():
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", f"Work on {name}", cwd=work)
        git("push", "-q", "-f", "origin", name, cwd=work, token=self.repo.owner_token)
        return git("rev-parse", "HEAD", cwd=work).stdout.strip()


def _error(excinfo: pytest.ExceptionInfo[RequestFailed]) -> tuple[int, dict[str, Any]]:
    response = excinfo.value.response
    return response.status_code, response.json()


@pytest.fixture
def world(sandbox: SandboxHandle) -> tuple[SeededRepo, Pusher, GitHub[Any]]:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    return repo, Pusher(sandbox, repo), sandbox.github_installation(repo.installation_id)


def test_merge_refuses_a_stale_head_then_merges_the_current_one(
    sandbox: SandboxHandle, world: tuple[SeededRepo, Pusher, GitHub[Any]]
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    first = pusher.branch("feature", {"a.txt": "a\n"})
    number = bot.rest.pulls.create(o, r, title="A", head="feature", base="main").parsed_data.number
    second = pusher.branch("feature", {"a.txt": "a2\n"}, start="feature")
    with pytest.raises(RequestFailed) as stale:
        bot.rest.pulls.merge(o, r, number, sha=first)
    status, body = _error(stale)
    assert status == 409
    assert body["message"] == "Head branch was modified. Review and try the merge again."
    assert bot.rest.pulls.get(o, r, number).parsed_data.state == "open"
    merged = bot.rest.pulls.merge(o, r, number, sha=second, merge_method="merge").parsed_data
    assert merged.merged
    main = bot.rest.repos.get_commit(o, r, "main").parsed_data
    assert main.sha == merged.sha
    assert [p.sha for p in main.parents] == [repo.head_sha, second]
    # A merged PR keeps showing what it changed against the base it was merged into.
    done = bot.rest.pulls.get(o, r, number).parsed_data
    assert (done.merged, done.state, done.changed_files) == (True, "closed", 1)
    with pytest.raises(RequestFailed) as again:
        bot.rest.pulls.merge(o, r, number, sha=second)
    assert _error(again)[0] == 405


def test_conflicting_pull_is_not_mergeable(
    world: tuple[SeededRepo, Pusher, GitHub[Any]],
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    pusher.branch("left", {"README.md": "left\n"})
    right = pusher.branch("right", {"README.md": "right\n"})
    left_pr = bot.rest.pulls.create(o, r, title="L", head="left", base="main").parsed_data
    right_pr = bot.rest.pulls.create(o, r, title="R", head="right", base="main").parsed_data
    assert bot.rest.pulls.get(o, r, right_pr.number).parsed_data.mergeable is True
    bot.rest.pulls.merge(o, r, left_pr.number, merge_method="squash")
    after = bot.rest.pulls.get(o, r, right_pr.number).parsed_data
    assert after.mergeable is False
    assert after.mergeable_state == "dirty"
    with pytest.raises(RequestFailed) as refused:
        bot.rest.pulls.merge(o, r, right_pr.number, sha=right)
    status, body = _error(refused)
    assert status == 405
    assert body["message"] == "Pull Request is not mergeable"


def test_rebase_merge_replays_commits_and_readers_cannot_merge(
    sandbox: SandboxHandle, world: tuple[SeededRepo, Pusher, GitHub[Any]]
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    pusher.branch("topic", {"t.txt": "t\n"})
    number = bot.rest.pulls.create(o, r, title="T", head="topic", base="main").parsed_data.number
    sandbox.create_user("reader")
    sandbox.control.set_permission(o, r, "reader", "read")
    reader = sandbox.github_user("reader")
    with pytest.raises(RequestFailed) as forbidden:
        reader.rest.pulls.merge(o, r, number)
    assert _error(forbidden)[0] == 403
    result = bot.rest.pulls.merge(o, r, number, merge_method="rebase").parsed_data
    main = bot.rest.repos.get_commit(o, r, result.sha).parsed_data
    assert [p.sha for p in main.parents] == [repo.head_sha]
    assert main.commit.message == "Work on topic"
    assert bot.rest.pulls.check_if_merged(o, r, number).status_code == 204


def test_files_are_paged_and_capped_at_3000_and_big_diffs_answer_406(
    sandbox: SandboxHandle, world: tuple[SeededRepo, Pusher, GitHub[Any]]
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    pusher.branch("many", {f"f/{i:04}.txt": f"{i}\n" for i in range(3005)})
    many = bot.rest.pulls.create(o, r, title="M", head="many", base="main").parsed_data.number
    assert bot.rest.pulls.get(o, r, many).parsed_data.changed_files == 3005
    page = bot.rest.pulls.list_files(o, r, many, per_page=250, page=2)
    assert len(page.parsed_data) == 100  # per_page is capped at 100
    assert 'rel="next"' in page.headers["link"]
    last = bot.rest.pulls.list_files(o, r, many, per_page=100, page=30).parsed_data
    assert [f.filename for f in last][-1] == "f/2999.txt"
    assert bot.rest.pulls.list_files(o, r, many, per_page=100, page=31).parsed_data == []
    token = sandbox.control.installation_token(repo.installation_id or 0)
    url = f"{sandbox.url}/repos/{repo.full_name}/pulls/{many}"
    diff = httpx.get(
        url, headers={"Authorization": f"token {token}", "Accept": "application/vnd.github.diff"}
    )
    assert diff.status_code == 406
    assert diff.json()["errors"][0]["code"] == "too_large"

    pusher.branch("long", {"long.txt": "".join(f"{i}\n" for i in range(20_001))})
    long = bot.rest.pulls.create(o, r, title="L", head="long", base="main").parsed_data.number
    accept = {"Authorization": f"token {token}", "Accept": "application/vnd.github.v3.diff"}
    too_long = httpx.get(f"{sandbox.url}/repos/{repo.full_name}/pulls/{long}", headers=accept)
    assert too_long.status_code == 406
    assert "maximum number of lines (20000)" in too_long.json()["message"]

    pusher.branch("small", {"small.txt": "one\ntwo\n"})
    small = bot.rest.pulls.create(o, r, title="S", head="small", base="main").parsed_data.number
    ok = httpx.get(f"{sandbox.url}/repos/{repo.full_name}/pulls/{small}", headers=accept)
    assert ok.status_code == 200
    assert ok.headers["content-type"].startswith("application/vnd.github.diff")
    assert "+++ b/small.txt" in ok.text
    assert "+two" in ok.text


def test_review_rules(
    sandbox: SandboxHandle, world: tuple[SeededRepo, Pusher, GitHub[Any]]
) -> None:
    repo, pusher, bot = world
    o, r = repo.owner, repo.name
    head = pusher.branch("rv", {"calc/ops.py": "def add(a, b):\n    return a + b + 0\n"})
    number = bot.rest.pulls.create(o, r, title="RV", head="rv", base="main").parsed_data.number
    with pytest.raises(RequestFailed) as own:
        bot.rest.pulls.create_review(o, r, number, event="APPROVE")
    status, body = _error(own)
    assert status == 422
    assert body["errors"] == ["Can not approve your own pull request"]
    owner = sandbox.github_user(o)
    for bad, message in (
        ({"path": "calc/ops.py", "line": 40, "body": "x"}, "Line could not be resolved"),
        ({"path": "nope.py", "line": 1, "body": "x"}, "Path could not be resolved"),
    ):
        with pytest.raises(RequestFailed) as refused:
            owner.rest.pulls.create_review(
                o, r, number, event="COMMENT", body="see inline", comments=[bad]
            )
        assert _error(refused)[0] == 422
        assert message in _error(refused)[1]["errors"]
    removed_line = {"path": "calc/ops.py", "line": 2, "side": "LEFT", "body": "old"}
    # GitHub requires a body for COMMENT and REQUEST_CHANGES: inline comments do not stand in.
    for event in ("COMMENT", "REQUEST_CHANGES"):
        with pytest.raises(RequestFailed) as blank:
            owner.rest.pulls.create_review(
                o, r, number, commit_id=head, event=event, comments=[removed_line]
            )
        assert _error(blank)[0] == 422
        assert _error(blank)[1]["errors"] == ["Body can't be blank"]
    assert bot.rest.pulls.list_reviews(o, r, number).parsed_data == []
    comment = owner.rest.pulls.create_review(
        o, r, number, commit_id=head, event="COMMENT", body="see inline", comments=[removed_line]
    ).parsed_data
    assert comment.state == "COMMENTED"
    with pytest.raises(RequestFailed) as not_dismissable:
        bot.rest.pulls.dismiss_review(o, r, number, comment.id, message="no")
    assert _error(not_dismissable)[0] == 422
    approval = owner.rest.pulls.create_review(o, r, number, event="APPROVE").parsed_data
    assert approval.commit_id == head
    dismissed = bot.rest.pulls.dismiss_review(o, r, number, approval.id, message="stale")
    assert dismissed.parsed_data.state == "DISMISSED"
    listed = bot.rest.pulls.list_review_comments(o, r, number)
    inline = listed.parsed_data
    assert [(c.path, c.line, c.side) for c in inline] == [("calc/ops.py", 2, "LEFT")]
    # GitHub's position: lines down from the file's first `@@` (its line 1 is the next line);
    # a comment that answers none has no `in_reply_to_id` at all.
    raw = listed.json()[0]
    assert (raw["position"], raw["original_position"]) == (2, 2)
    assert "in_reply_to_id" not in raw


def test_pull_needs_an_existing_head_and_commits(
    world: tuple[SeededRepo, Pusher, GitHub[Any]],
) -> None:
    repo, _, bot = world
    o, r = repo.owner, repo.name
    with pytest.raises(RequestFailed) as missing:
        bot.rest.pulls.create(o, r, title="X", head="no-such-branch", base="main")
    assert _error(missing)[0] == 422
    with pytest.raises(RequestFailed) as empty:
        bot.rest.pulls.create(o, r, title="X", head="main", base="main")
    assert _error(empty)[0] == 422
    assert "No commits between main and main" in str(_error(empty)[1])
