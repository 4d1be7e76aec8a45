"""App authentication as GitHub does it: RS256 JWTs with the 60 s skew and 10 min cap,
installation tokens that expire, personal tokens, and the refusals in between."""

from __future__ import annotations

import time
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from githubkit.exception import RequestFailed

from tests.plugins.sandbox import SandboxHandle

pytestmark = pytest.mark.slow


def _jwt(
    sandbox: SandboxHandle, *, iat: float, exp: float, key: str | None = None, iss: Any = None
) -> str:
    claims = {"iss": str(sandbox.app.id) if iss is None else iss, "iat": int(iat), "exp": int(exp)}
    return jwt.encode(claims, key or sandbox.app.private_key_pem, algorithm="RS256")


def _get_app(sandbox: SandboxHandle, token: str) -> httpx.Response:
    return httpx.get(f"{sandbox.url}/app", headers={"Authorization": f"Bearer {token}"})


def test_app_jwt_then_installation_token_then_rest_calls(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    app = sandbox.github_app()
    assert app.rest.apps.get_authenticated().parsed_data.slug == sandbox.app.slug
    installations = app.rest.apps.list_installations().parsed_data
    assert [i.id for i in installations] == [repo.installation_id]
    gh = sandbox.github_installation(repo.installation_id)
    issue = gh.rest.issues.create(repo.owner, repo.name, title="from the bot").parsed_data
    # Writes by an installation are made by the App's bot user, of type Bot.
    assert issue.user is not None
    assert issue.user.login == f"{sandbox.app.slug}[bot]"
    assert issue.user.type == "Bot"
    identities = sandbox.control.stats()["identities"]
    assert identities[f"app:{sandbox.app.id}"] >= 2  # the JWT calls, token minting included
    assert identities[f"installation:{repo.installation_id}"] == 1


def test_jwt_rules(sandbox: SandboxHandle) -> None:
    now = time.time()
    # githubkit's shape: iat 60 s in the past, 10 minutes long.
    assert _get_app(sandbox, _jwt(sandbox, iat=now - 60, exp=now + 540)).status_code == 200
    # Clock skew of up to 60 s is forgiven on both ends.
    assert _get_app(sandbox, _jwt(sandbox, iat=now + 30, exp=now + 500)).status_code == 200
    assert _get_app(sandbox, _jwt(sandbox, iat=now - 600, exp=now - 30)).status_code == 200
    refusals = {
        "expired": _jwt(sandbox, iat=now - 700, exp=now - 100),
        "too long": _jwt(sandbox, iat=now - 10, exp=now + 900),
        "from the future": _jwt(sandbox, iat=now + 300, exp=now + 600),
        "unknown issuer": _jwt(sandbox, iat=now - 60, exp=now + 500, iss="999999"),
        "garbage": "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln",
    }
    other_key = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    refusals["wrong key"] = _jwt(sandbox, iat=now - 60, exp=now + 500, key=other_key)
    for why, token in refusals.items():
        response = _get_app(sandbox, token)
        assert response.status_code == 401, why
        body = response.json()
        assert body["status"] == "401"
        assert body["documentation_url"].startswith("https://docs.github.com/")


def test_app_routes_need_a_jwt(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    gh = sandbox.github_user(repo.owner)
    with pytest.raises(RequestFailed) as refused:
        gh.rest.apps.list_installations()
    assert refused.value.response.status_code == 401
    assert "JSON web token" in refused.value.response.json()["message"]


def test_expired_installation_token_is_bad_credentials(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    sandbox.control.set_token_ttl(0.5)
    app = sandbox.github_app()
    minted = app.rest.apps.create_installation_access_token(repo.installation_id).parsed_data
    token = minted.token
    headers = {"Authorization": f"token {token}"}
    url = f"{sandbox.url}/repos/{repo.full_name}"
    assert httpx.get(url, headers=headers).status_code == 200
    time.sleep(0.6)
    response = httpx.get(url, headers=headers)
    assert response.status_code == 401
    assert response.json()["message"] == "Bad credentials"


def test_unknown_token_and_token_scopes(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    other = sandbox.create_repo("someone", "elsewhere", install=False)
    assert repo.installation_id is not None
    url = f"{sandbox.url}/repos"
    bad = httpx.get(f"{url}/{repo.full_name}", headers={"Authorization": "token ghp_nope"})
    assert bad.status_code == 401
    assert bad.json()["message"] == "Bad credentials"
    token = sandbox.control.installation_token(repo.installation_id)
    headers = {"Authorization": f"Bearer {token}"}
    # An installation token sees its installation's repos only; a private repo elsewhere is 404.
    assert httpx.get(f"{url}/{repo.full_name}", headers=headers).status_code == 200
    assert httpx.get(f"{url}/{other.full_name}", headers=headers).status_code == 404
    # Anonymous callers are asked to sign in for nothing private: they just see nothing.
    assert httpx.get(f"{url}/{repo.full_name}").status_code == 404


def test_get_user_for_people_not_installations(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    owner = sandbox.github_user(repo.owner)
    me = owner.rest.users.get_authenticated().parsed_data
    assert me.login == repo.owner
    bot = sandbox.github_installation(repo.installation_id)
    with pytest.raises(RequestFailed) as refused:
        bot.rest.users.get_authenticated()
    assert refused.value.response.status_code == 403
    assert httpx.get(f"{sandbox.url}/user").status_code == 401
