"""ourobot's githubkit clients against the sandbox: App auth, retries that honour GitHub."""

from __future__ import annotations

import time

import pytest
from githubkit.exception import RateLimitExceeded, RequestFailed

from app.errors import ConfigError
from app.github_client import GitHubClients, RetryPolicy
from app.settings import load_settings

pytestmark = pytest.mark.slow


def clients(sandbox, tmp_path, **options) -> GitHubClients:
    settings = load_settings(
        env={},
        app_id=sandbox.app.id,
        private_key=sandbox.app.private_key_pem,
        github_api_url=sandbox.url,
        data_dir=tmp_path,
    )
    return GitHubClients(settings, **options)


def test_app_then_installation_then_rest(sandbox, tmp_path):
    repo = sandbox.create_repo()
    made = clients(sandbox, tmp_path)
    app = made.app()
    assert app.rest.apps.get_authenticated().parsed_data.slug == sandbox.app.slug
    github = made.installation(repo.installation_id)
    assert github.rest.repos.get(repo.owner, repo.name).parsed_data.full_name == repo.full_name
    identities = sandbox.control.stats()["identities"]
    assert any(k.startswith("app:") for k in identities)
    assert any(k.startswith("installation:") for k in identities)


def test_secondary_rate_limit_waits_retry_after_then_succeeds(sandbox, tmp_path):
    repo = sandbox.create_repo()
    github = clients(sandbox, tmp_path).installation(repo.installation_id)
    github.rest.repos.get(repo.owner, repo.name)  # token minted before the fault
    sandbox.control.add_fault("secondary", path=r"^/repos/[^/]+/[^/]+$", retry_after_s=1)
    started = time.monotonic()
    assert github.rest.repos.get(repo.owner, repo.name).parsed_data.name == repo.name
    assert time.monotonic() - started >= 1.0


def test_502_is_retried_with_backoff(sandbox, tmp_path):
    repo = sandbox.create_repo()
    policy = RetryPolicy(backoff_base_s=0.05)
    github = clients(sandbox, tmp_path, retry=policy).installation(repo.installation_id)
    github.rest.repos.get(repo.owner, repo.name)
    sandbox.control.add_fault("502", path=r"^/repos/[^/]+/[^/]+$", times=2)
    assert github.rest.repos.get(repo.owner, repo.name).parsed_data.name == repo.name


def test_persistent_502_gives_up_after_the_bounded_retries(sandbox, tmp_path):
    repo = sandbox.create_repo()
    policy = RetryPolicy(backoff_base_s=0.01, server_error_retries=2)
    github = clients(sandbox, tmp_path, retry=policy).installation(repo.installation_id)
    github.rest.repos.get(repo.owner, repo.name)
    sandbox.control.add_fault("502", path=r"^/repos/[^/]+/[^/]+$", times=None)
    with pytest.raises(RequestFailed) as info:
        github.rest.repos.get(repo.owner, repo.name)
    assert info.value.response.status_code == 502


def test_a_long_wait_is_not_spent_inline(sandbox, tmp_path):
    repo = sandbox.create_repo()
    policy = RetryPolicy(max_inline_wait_s=1)
    github = clients(sandbox, tmp_path, retry=policy).installation(repo.installation_id)
    github.rest.repos.get(repo.owner, repo.name)
    sandbox.control.add_fault("secondary", path=r"^/repos/[^/]+/[^/]+$", retry_after_s=30)
    started = time.monotonic()
    with pytest.raises(RateLimitExceeded) as info:
        github.rest.repos.get(repo.owner, repo.name)
    assert time.monotonic() - started < 5
    assert info.value.retry_after.total_seconds() == 30


def test_missing_credentials_are_a_clear_error(tmp_path):
    made = GitHubClients(load_settings(env={}, data_dir=tmp_path))
    with pytest.raises(ConfigError, match="OUROBOT_APP_ID"):
        made.app()


def _mints(sandbox) -> int:
    routes = sandbox.control.stats()["routes"]
    return int(routes.get("POST /app/installations/{installation_id}/access_tokens", 0))


def test_the_git_token_is_reused_until_it_is_near_expiry(sandbox, tmp_path):
    repo = sandbox.create_repo()
    made = clients(sandbox, tmp_path)
    first = made.git_token(repo.installation_id)
    assert made.git_token(repo.installation_id) == first  # an hour left: reused
    assert clients(sandbox, tmp_path).git_token(repo.installation_id) == first  # per process
    assert _mints(sandbox) == 1


def test_a_token_near_its_expiry_is_not_reused(sandbox, tmp_path):
    sandbox.control.set_token_ttl(60)  # less than the refresh margin
    repo = sandbox.create_repo()
    made = clients(sandbox, tmp_path)
    made.git_token(repo.installation_id)
    made.git_token(repo.installation_id)
    assert _mints(sandbox) == 2
