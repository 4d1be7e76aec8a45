"""The sandbox answers in the shape of the API version a request asks for, as GitHub does: no
`X-GitHub-Api-Version` is 2022-11-28, 2026-03-10 lacks the fields that version removed, an
unsupported version is a 400; webhooks, which no request asks for, keep 2022-11-28's shape.
And the body rules GitHub applies before it looks at the caller's permission."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink
from tests.sandbox.test_pull_rules import Pusher

pytestmark = pytest.mark.slow

V2022, V2026 = "2022-11-28", "2026-03-10"
REMOVED_FROM_PULLS = {"merge_commit_sha", "assignee"}
REMOVED_FROM_REPOS = {"has_downloads", "use_squash_pr_title_as_default"}


def _get(sandbox: SandboxHandle, token: str, path: str, version: str | None) -> httpx.Response:
    headers = {"Authorization": f"token {token}"}
    if version is not None:
        headers["X-GitHub-Api-Version"] = version
    return httpx.get(f"{sandbox.url}{path}", headers=headers, timeout=10)


@pytest.fixture
def merged(sandbox: SandboxHandle, webhook_sink: WebhookSink) -> tuple[SeededRepo, int, str]:
    """A repo with a merged pull request; its merge commit."""
    repo = sandbox.create_repo()
    Pusher(sandbox, repo).branch("feature", {"a.txt": "a\n"})
    owner = sandbox.github_user(repo.owner)
    number = owner.rest.pulls.create(repo.owner, repo.name, title="A", head="feature",
                                     base="main").parsed_data.number  # fmt: skip
    made = owner.rest.pulls.merge(repo.owner, repo.name, number).parsed_data.sha
    return repo, number, made


def test_no_header_is_2022_11_28_and_2026_03_10_drops_what_it_removed(
    sandbox: SandboxHandle, merged: tuple[SeededRepo, int, str]
) -> None:
    repo, number, made = merged
    token, pull_path = repo.owner_token, f"/repos/{repo.full_name}/pulls/{number}"
    for version in (None, V2022):
        answer = _get(sandbox, token, pull_path, version)
        assert answer.headers["x-github-api-version-selected"] == V2022
        body = answer.json()
        assert body["merge_commit_sha"] == made and body["assignee"] is None
        assert REMOVED_FROM_REPOS <= set(body["base"]["repo"])
    answer = _get(sandbox, token, pull_path, V2026)
    assert answer.status_code == 200
    assert answer.headers["x-github-api-version-selected"] == V2026
    body = answer.json()
    assert not REMOVED_FROM_PULLS & set(body) and body["assignees"] == []
    assert body["merged"] is True and body["number"] == number
    for side in ("base", "head"):
        assert not REMOVED_FROM_REPOS & set(body[side]["repo"])
        assert body[side]["repo"]["full_name"] == repo.full_name
    # Every answer that carries those objects, lists and single ones alike.
    listed = _get(sandbox, token, f"/repos/{repo.full_name}/pulls?state=all", V2026).json()
    assert listed and not any(REMOVED_FROM_PULLS & set(p) for p in listed)
    issue = _get(sandbox, token, f"/repos/{repo.full_name}/issues/{number}", V2026).json()
    assert "assignee" not in issue and issue["assignees"] == []
    repository = _get(sandbox, token, f"/repos/{repo.full_name}", V2026).json()
    assert not REMOVED_FROM_REPOS & set(repository) and repository["has_issues"] is True
    old_repository = _get(sandbox, token, f"/repos/{repo.full_name}", V2022).json()
    assert set(old_repository) - set(repository) == REMOVED_FROM_REPOS


def test_webhooks_keep_2022_11_28s_shape(
    sandbox: SandboxHandle, webhook_sink: WebhookSink, merged: tuple[SeededRepo, int, str]
) -> None:
    _, number, made = merged
    closed = webhook_sink.wait_for_one(
        "pull_request", "closed", lambda d: d.payload["number"] == number
    ).payload
    assert closed["pull_request"]["merge_commit_sha"] == made
    assert "has_downloads" in closed["repository"]


@pytest.mark.parametrize("version", ["2021-01-01", "v3", "2026-03-11", "latest"])
def test_an_unsupported_version_is_githubs_400_before_anything_else(
    sandbox: SandboxHandle, version: str
) -> None:
    repo = sandbox.create_repo()
    for token in (repo.owner_token, "not-a-token"):
        answer = _get(sandbox, token, f"/repos/{repo.full_name}", version)
        assert answer.status_code == 400
        body: dict[str, Any] = answer.json()
        assert body["status"] == "400"
        assert body["message"] == (
            f'The version you specified in the "X-GitHub-Api-Version" request header, '
            f'"{version}", is not a supported version. The following versions are currently '
            f'supported: "2026-03-10" (most recent), "2022-11-28".'
        )
        assert body["documentation_url"].endswith("/api-versions")


def test_a_body_github_rejects_is_422_before_the_callers_permission_is_403(
    sandbox: SandboxHandle,
) -> None:
    repo = sandbox.create_repo(private=False)  # public: an anonymous caller sees it
    reader_token = sandbox.create_user("reader")
    sandbox.control.set_permission(repo.owner, repo.name, "reader", "read")
    head = Pusher(sandbox, repo).branch("more", {"b.txt": "b\n"})
    owner = sandbox.github_user(repo.owner)
    number = owner.rest.pulls.create(repo.owner, repo.name, title="B", head="more",
                                     base="main").parsed_data.number  # fmt: skip
    api = f"{sandbox.url}/repos/{repo.full_name}"
    writes = [
        (f"{api}/pulls/{number}/merge", {"merge_method": "octopus"}, {"sha": head}),
        (f"{api}/labels", {"color": "ffffff"}, {"name": "new"}),
        (f"{api}/statuses/{head}", {"state": "fine"}, {"state": "success"}),
    ]
    for url, bad, good in writes:
        method = "PUT" if url.endswith("/merge") else "POST"
        for token, body, status in ((reader_token, bad, 422), (reader_token, good, 403),
                                    (None, bad, 401)):  # fmt: skip
            headers = {"Authorization": f"token {token}"} if token else {}
            answer = httpx.request(method, url, json=body, headers=headers, timeout=10)
            assert answer.status_code == status, (url, body, answer.json())
    assert not owner.rest.pulls.get(repo.owner, repo.name, number).parsed_data.merged
