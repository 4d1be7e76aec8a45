"""Repository permissions as GitHub reports and enforces them: collaborator levels and their
legacy names, private repos hidden from outsiders, triage needed for labels, and the issue/PR
number sequence they share."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.plugins.sandbox import SandboxHandle

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("level", "legacy"),
    [
        ("admin", "admin"),
        ("maintain", "write"),
        ("write", "write"),
        ("triage", "read"),
        ("read", "read"),
        ("none", "none"),
    ],
)
def test_collaborator_permission_levels(sandbox: SandboxHandle, level: str, legacy: str) -> None:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    sandbox.create_user("someone")
    sandbox.control.set_permission(repo.owner, repo.name, "someone", level)
    bot = sandbox.github_installation(repo.installation_id)
    answer = bot.rest.repos.get_collaborator_permission_level(repo.owner, repo.name, "someone")
    assert answer.parsed_data.permission == legacy
    assert answer.parsed_data.role_name == level


def test_owner_is_admin_and_outsiders_read_public_repos(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo(private=False)
    assert repo.installation_id is not None
    sandbox.create_user("passerby")
    bot = sandbox.github_installation(repo.installation_id)
    owner = bot.rest.repos.get_collaborator_permission_level(repo.owner, repo.name, repo.owner)
    assert owner.parsed_data.permission == "admin"
    outsider = bot.rest.repos.get_collaborator_permission_level(repo.owner, repo.name, "passerby")
    assert outsider.parsed_data.permission == "read"
    with pytest.raises(RequestFailed) as unknown:
        bot.rest.repos.get_collaborator_permission_level(repo.owner, repo.name, "nobody")
    assert unknown.value.response.status_code == 404
    assert httpx.get(f"{sandbox.url}/repos/{repo.full_name}").status_code == 200
    anonymous_write = httpx.post(
        f"{sandbox.url}/repos/{repo.full_name}/issues", json={"title": "x"}
    )
    assert anonymous_write.status_code == 401


def test_private_repo_is_hidden_from_outsiders(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    sandbox.create_user("stranger")
    stranger: GitHub[Any] = sandbox.github_user("stranger")
    with pytest.raises(RequestFailed) as hidden:
        stranger.rest.issues.create(repo.owner, repo.name, title="let me in")
    assert hidden.value.response.status_code == 404


def test_readers_open_issues_but_need_triage_for_labels(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    sandbox.create_user("reader")
    sandbox.control.set_permission(repo.owner, repo.name, "reader", "read")
    reader: GitHub[Any] = sandbox.github_user("reader")
    issue = reader.rest.issues.create(
        repo.owner, repo.name, title="please", labels=["ourobot:ticket"]
    ).parsed_data
    assert issue.labels == []  # dropped silently, as GitHub does for non-triagers
    with pytest.raises(RequestFailed) as refused:
        reader.rest.issues.add_labels(repo.owner, repo.name, issue.number, labels=["bug"])
    assert refused.value.response.status_code == 403
    comment = reader.rest.issues.create_comment(repo.owner, repo.name, issue.number, body="hi")
    assert comment.parsed_data.author_association == "COLLABORATOR"
    sandbox.control.set_permission(repo.owner, repo.name, "reader", "triage")
    labels = reader.rest.issues.add_labels(repo.owner, repo.name, issue.number, labels=["bug"])
    assert [label.name for label in labels.parsed_data] == ["bug"]


def test_issues_and_pulls_share_numbers_and_comments(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    work = sandbox.tmp_path / "w"
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=repo.owner_token)
    sandbox.git("checkout", "-q", "-b", "b", cwd=work)
    (work / "b.txt").write_text("b\n")
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "b", cwd=work)
    sandbox.git("push", "-q", "origin", "b", cwd=work, token=repo.owner_token)
    gh: GitHub[Any] = sandbox.github_user(repo.owner)
    o, r = repo.owner, repo.name
    first = gh.rest.issues.create(o, r, title="one").parsed_data
    pull = gh.rest.pulls.create(o, r, title="two", head="b", base="main").parsed_data
    third = gh.rest.issues.create(o, r, title="three").parsed_data
    assert (first.number, pull.number, third.number) == (1, 2, 3)
    as_issue = gh.rest.issues.get(o, r, pull.number).parsed_data
    assert as_issue.pull_request is not None
    gh.rest.issues.create_comment(o, r, pull.number, body="on the PR")
    assert gh.rest.pulls.get(o, r, pull.number).parsed_data.comments == 1
    with pytest.raises(RequestFailed) as not_a_pull:
        gh.rest.pulls.get(o, r, first.number)
    assert not_a_pull.value.response.status_code == 404
    listed = gh.rest.issues.list_for_repo(o, r, per_page=2).parsed_data
    assert [i.number for i in listed] == [3, 2]
