"""The check against GitHub's description (`tests/plugins/github_conformance.py`) finds what it
must: a field a version requires and the answer lacks, a request body GitHub would refuse, a
webhook field of the wrong type, a path GitHub does not serve; it passes what is right, and
excepts only what its list of exceptions names. Real sandbox answers, changed one field at a
time."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.plugins import github_conformance, github_description
from tests.plugins.sandbox import SandboxHandle
from tests.sandbox.test_pull_rules import Pusher

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def checker() -> github_conformance.Checker:
    try:
        return github_conformance.checker()
    except github_description.Unavailable as exc:
        pytest.skip(f"GitHub's description is not available here: {exc}")


def _exchange(
    sandbox: SandboxHandle,
    token: str,
    method: str,
    path: str,
    version: str | None,
    body: Any = None,
    accept: str = "application/vnd.github+json",
) -> dict[str, Any]:
    """One real exchange with the sandbox, as the traffic log records it."""
    headers = {"Authorization": f"token {token}", "Accept": accept}
    if version is not None:
        headers["X-GitHub-Api-Version"] = version
    sent = json.dumps(body) if body is not None else None
    if sent is not None:
        headers["Content-Type"] = "application/json"
    answer = httpx.request(method, f"{sandbox.url}{path}", content=sent, headers=headers,
                           timeout=10)  # fmt: skip
    return {
        "kind": "http", "test": "t", "method": method, "path": path, "query": "",
        "headers": list(headers.items()), "body": sent, "status": answer.status_code,
        "response_headers": list(answer.headers.items()), "response_body": answer.text,
    }  # fmt: skip


def _problems(checker: github_conformance.Checker, *entries: dict[str, Any]) -> list[str]:
    checker.report = github_conformance.Report()
    for entry in entries:
        if entry["kind"] == "webhook":
            checker.webhook(entry)
        else:
            checker.exchange(entry)
    return [f"{p.operation} {p.where}: {p.rule}" for p in checker.report.problems]


def _without(entry: dict[str, Any], field: str) -> dict[str, Any]:
    body = json.loads(entry["response_body"])
    del body[field]
    return {**entry, "response_body": json.dumps(body)}


def test_each_version_is_held_to_its_own_shape(
    sandbox: SandboxHandle, checker: github_conformance.Checker
) -> None:
    repo = sandbox.create_repo()
    Pusher(sandbox, repo).branch("feature", {"a.txt": "a\n"})
    owner = sandbox.github_user(repo.owner)
    number = owner.rest.pulls.create(repo.owner, repo.name, title="A", head="feature",
                                     base="main").parsed_data.number  # fmt: skip
    path = f"/repos/{repo.full_name}/pulls/{number}"
    old = _exchange(sandbox, repo.owner_token, "GET", path, None)
    new = _exchange(sandbox, repo.owner_token, "GET", path, "2026-03-10")
    assert _problems(checker, old, new) == []
    assert checker.report.operations == {"2022-11-28 pulls/get": 1, "2026-03-10 pulls/get": 1}
    assert (checker.report.requests, checker.report.responses) == (2, 2)
    # 2022-11-28 requires what 2026-03-10 removed; 2026-03-10 requires the rest all the same.
    assert _problems(checker, _without(old, "merge_commit_sha")) == [
        "pulls/get response 200: (root): 'merge_commit_sha' is a required property [required]"
    ]
    assert "merge_commit_sha" not in json.loads(new["response_body"])
    assert _problems(checker, _without(new, "mergeable_state")) == [
        "pulls/get response 200: (root): 'mergeable_state' is a required property [required]"
    ]


def test_requests_webhooks_and_paths_github_would_refuse_are_problems(
    sandbox: SandboxHandle, checker: github_conformance.Checker
) -> None:
    repo = sandbox.create_repo()
    Pusher(sandbox, repo).branch("feature", {"a.txt": "a\n"})
    owner = sandbox.github_user(repo.owner)
    number = owner.rest.pulls.create(repo.owner, repo.name, title="A", head="feature",
                                     base="main").parsed_data.number  # fmt: skip
    review = _exchange(sandbox, repo.owner_token, "POST",
                       f"/repos/{repo.full_name}/pulls/{number}/reviews", "2026-03-10",
                       {"event": "LGTM", "body": "x"})  # fmt: skip
    assert review["status"] == 422  # the sandbox's answer itself is what GitHub describes
    assert _problems(checker, review) == [
        "pulls/create-review request: event: 'LGTM' is not one of "
        "['APPROVE', 'REQUEST_CHANGES', 'COMMENT'] [enum]"
    ]
    nowhere = _exchange(sandbox, repo.owner_token, "GET", f"/repos/{repo.full_name}/nothing", None)
    assert _problems(checker, nowhere) == [
        f"GET /repos/{repo.full_name}/nothing request: "
        "the description has no operation for this method and path"
    ]
    payload = {"action": "created", "check_run": {"check_suite": {"node_id": None}}}
    hook = {"kind": "webhook", "test": "t", "event": "check_run", "action": "created",
            "headers": [], "body": json.dumps(payload)}  # fmt: skip
    found = _problems(checker, hook)
    assert "check-run-created webhook: check_run/check_suite/node_id: None for not nullable " \
           "[type]" in found  # fmt: skip
    assert checker.report.webhooks == 1


def test_only_the_listed_exceptions_are_excepted(
    sandbox: SandboxHandle, checker: github_conformance.Checker
) -> None:
    repo = sandbox.create_repo()
    raw = _exchange(sandbox, repo.owner_token, "GET",
                    f"/repos/{repo.full_name}/contents/calc/ops.py", "2026-03-10",
                    accept="application/vnd.github.raw")  # fmt: skip
    assert raw["response_body"].startswith("def add(")
    assert _problems(checker, raw) == []
    assert any("(excepted)" in reason for reason in checker.report.not_checked)
    # The same path answered as JSON is checked in full.
    listed = _exchange(sandbox, repo.owner_token, "GET",
                       f"/repos/{repo.full_name}/contents/calc/ops.py", "2026-03-10")  # fmt: skip
    assert _problems(checker, _without(listed, "sha")) == [
        "repos/get-content response 200: (root): 'sha' is a required property [required]"
    ]
