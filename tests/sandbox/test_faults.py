"""Injected faults look like GitHub's, so githubkit's own retry logic handles them: 5xx, secondary
and primary rate limits, 429, latency. Every REST answer carries `x-ratelimit-*`, and requests
are counted per route and per identity."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed

from tests.plugins.sandbox import SandboxHandle, SeededRepo

pytestmark = pytest.mark.slow

REPO_ROUTE = "GET /repos/{owner}/{repo}"


@pytest.fixture
def setup(sandbox: SandboxHandle) -> tuple[SeededRepo, GitHub[Any]]:
    repo = sandbox.create_repo()
    return repo, sandbox.github_user(repo.owner, auto_retry=True)


def _attempts(sandbox: SandboxHandle, route: str) -> list[dict[str, Any]]:
    return [e for e in sandbox.control.stats()["log"] if e["route"] == route.split(" ", 1)[1]]


@pytest.mark.parametrize(
    ("kind", "status"), [("secondary", 403), ("429", 429), ("502", 502), ("primary", 403)]
)
def test_githubkit_retries_each_fault_after_the_wait_it_asks_for(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]], kind: str, status: int
) -> None:
    repo, gh = setup
    sandbox.control.add_fault(kind, method="GET", path=r"^/repos/[^/]+/[^/]+$", retry_after_s=1)
    started = time.monotonic()
    assert gh.rest.repos.get(repo.owner, repo.name).parsed_data.name == repo.name
    took = time.monotonic() - started
    first, second = _attempts(sandbox, REPO_ROUTE)
    assert (first["status"], second["status"]) == (status, 200)
    gap = second["t"] - first["t"]
    # retry-after: 1 s; a 502 backs off (0+1)^2 = 1 s; the primary limit resets within 2 s.
    assert gap >= 0.95, f"{kind}: retried after {gap:.2f} s"
    assert took >= 0.95
    assert sandbox.control.stats()["routes"][REPO_ROUTE] == 2


def test_fault_answers_are_shaped_like_githubs(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]]
) -> None:
    repo, _ = setup
    url = f"{sandbox.url}/repos/{repo.full_name}"
    headers = {"Authorization": f"token {repo.owner_token}"}
    sandbox.control.add_fault("secondary", path="/repos/", retry_after_s=7)
    secondary = httpx.get(url, headers=headers)
    assert secondary.status_code == 403
    assert secondary.headers["retry-after"] == "7"
    assert "secondary rate limit" in secondary.json()["message"]
    sandbox.control.add_fault("primary", path="/repos/", reset_in_s=30)
    primary = httpx.get(url, headers=headers)
    assert primary.status_code == 403
    assert primary.headers["x-ratelimit-remaining"] == "0"
    assert int(primary.headers["x-ratelimit-reset"]) >= int(time.time()) + 29
    assert "API rate limit exceeded" in primary.json()["message"]
    # One-shot faults are spent; the next call is normal.
    assert httpx.get(url, headers=headers).status_code == 200


def test_faults_match_method_path_and_token_and_rates_fire_until_cleared(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]]
) -> None:
    repo, _ = setup
    other = sandbox.create_user("other")
    sandbox.control.set_permission(repo.owner, repo.name, "other", "read")
    url = f"{sandbox.url}/repos/{repo.full_name}"
    mine = {"Authorization": f"token {repo.owner_token}"}
    theirs = {"Authorization": f"token {other}"}
    sandbox.control.add_fault("502", path="/repos/", token=other, rate=1.0)
    assert httpx.get(url, headers=mine).status_code == 200
    assert httpx.get(url, headers=theirs).status_code == 502
    assert httpx.get(url, headers=theirs).status_code == 502
    assert httpx.post(f"{url}/issues", headers=mine, json={"title": "t"}).status_code == 201
    (fault,) = sandbox.control.stats()["faults"]
    assert fault["fired"] == 2
    sandbox.control.clear_faults()
    assert httpx.get(url, headers=theirs).status_code == 200


def test_latency_fault_delays_but_serves(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]]
) -> None:
    repo, gh = setup
    sandbox.control.add_fault("latency", path="/repos/", delay_s=0.4)
    started = time.monotonic()
    assert gh.rest.repos.get(repo.owner, repo.name).status_code == 200
    assert time.monotonic() - started >= 0.4


def test_every_rest_answer_has_rate_limit_headers_and_is_counted(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]]
) -> None:
    repo, _ = setup
    headers = {"Authorization": f"token {repo.owner_token}"}
    ok = httpx.get(f"{sandbox.url}/repos/{repo.full_name}", headers=headers)
    missing = httpx.get(f"{sandbox.url}/repos/{repo.full_name}/nothing-here", headers=headers)
    wrong_method = httpx.delete(f"{sandbox.url}/repos/{repo.full_name}", headers=headers)
    for response in (ok, missing, wrong_method):
        assert response.headers["x-ratelimit-limit"] == "5000"
        assert int(response.headers["x-ratelimit-remaining"]) < 5000
        assert response.headers["x-ratelimit-resource"] == "core"
    for response in (missing, wrong_method):
        assert response.status_code == 404
        assert response.json() == {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        }
    used = [int(r.headers["x-ratelimit-used"]) for r in (ok, missing, wrong_method)]
    assert used == sorted(used)
    assert used[-1] - used[0] == 2
    anonymous = httpx.get(f"{sandbox.url}/repos/{repo.full_name}")
    assert anonymous.headers["x-ratelimit-limit"] == "60"
    stats = sandbox.control.stats()
    assert stats["identities"][f"user:{repo.owner}"] == 3
    assert stats["identities"]["anonymous"] == 1
    assert stats["routes"][REPO_ROUTE] == 2


def test_reset_clears_counters_and_faults(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]]
) -> None:
    repo, gh = setup
    sandbox.control.add_fault("502", path="/repos/", times=5)
    sandbox.control.reset()
    stats = sandbox.control.stats()
    assert stats["total"] == 0
    assert stats["faults"] == []
    with pytest.raises(RequestFailed) as gone:
        gh.rest.repos.get(repo.owner, repo.name)
    assert gone.value.response.status_code == 401  # the user's token went with the reset


def test_primary_rate_limit_is_enforced_per_identity(
    sandbox: SandboxHandle, setup: tuple[SeededRepo, GitHub[Any]]
) -> None:
    repo, _ = setup
    other = sandbox.create_user("other")
    sandbox.control.set_permission(repo.owner, repo.name, "other", "read")
    sandbox.control.set_rate_limit(3)
    url = f"{sandbox.url}/repos/{repo.full_name}"
    mine = {"Authorization": f"token {repo.owner_token}"}
    answers = [httpx.get(url, headers=mine) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 403]
    assert [a.headers["x-ratelimit-remaining"] for a in answers] == ["2", "1", "0", "0"]
    assert answers[-1].json()["message"] == f"API rate limit exceeded for user:{repo.owner}."
    # Another token has its own budget.
    assert httpx.get(url, headers={"Authorization": f"token {other}"}).status_code == 200
