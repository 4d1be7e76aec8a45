"""REST routes of the App itself: `/app`, installations and their access tokens, the App's webhook
deliveries (list, get, redeliver), and `GET /user`.
"""

from __future__ import annotations

import json

from starlette.routing import Route

from app.sandbox import auth
from app.sandbox.routing import (
    ApiError,
    Call,
    Reply,
    Services,
    invalid,
    not_found,
    page_args,
    rest_route,
)
from app.sandbox.serializers import (
    JSON,
    app_json,
    delivery_item_json,
    installation_json,
    private_user_json,
    repo_json,
)
from app.sandbox.state import Attempt, Installation, iso


def require_jwt(call: Call) -> None:
    if call.identity.kind != "app":
        raise ApiError(401, auth.JWT_UNDECODABLE)


def _installation(call: Call) -> Installation:
    require_jwt(call)
    try:
        inst = call.state.installations.get(int(call.params["installation_id"]))
    except ValueError:
        inst = None
    if inst is None or inst.app is not call.state.app:
        raise not_found()
    return inst


def get_app(call: Call) -> Reply:
    if call.identity.kind not in ("app", "installation"):
        raise ApiError(401, auth.JWT_UNDECODABLE)
    return Reply(body=app_json(call.state, call.state.app))


def list_installations(call: Call) -> Reply:
    require_jwt(call)
    page, per_page = page_args(call)
    found = sorted(call.state.installations.values(), key=lambda i: i.id)
    chunk = found[(page - 1) * per_page : page * per_page]
    return Reply(body=[installation_json(call.state, i) for i in chunk])


def get_installation(call: Call) -> Reply:
    return Reply(body=installation_json(call.state, _installation(call)))


def create_access_token(call: Call) -> Reply:
    inst = _installation(call)
    state = call.state
    token = state.add_token("installation", installation=inst, ttl_s=state.token_ttl_s)
    assert token.expires_at is not None
    repos = [r for r in state.repos.values() if r.id in inst.repo_ids]
    body = {
        "token": token.value,
        "expires_at": iso(token.expires_at),
        "permissions": dict(inst.app.permissions),
        "repository_selection": "selected",
        "repositories": [repo_json(state, r) for r in repos],
    }
    return Reply(201, body)


def installation_repositories(call: Call) -> Reply:
    """`GET /installation/repositories`: what an installation token may act on."""
    inst = call.identity.installation
    if call.identity.kind != "installation" or inst is None:
        raise ApiError(403, "You must authenticate with an installation access token")
    page, per_page = page_args(call)
    found = sorted(
        (r for r in call.state.repos.values() if r.id in inst.repo_ids), key=lambda r: r.id
    )
    chunk = found[(page - 1) * per_page : page * per_page]
    body = {
        "total_count": len(found),
        "repository_selection": "selected",
        "repositories": [repo_json(call.state, r) for r in chunk],
    }
    return Reply(body=body)


def repo_installation(call: Call) -> Reply:
    require_jwt(call)
    repo = call.state.repo(call.params["owner"], call.params["repo"])
    inst = call.state.installation_for(repo) if repo else None
    if inst is None:
        raise not_found()
    return Reply(body=installation_json(call.state, inst))


# ----- webhook deliveries -------------------------------------------------------------------------
def _attempt(call: Call) -> Attempt:
    require_jwt(call)
    wanted = call.params["delivery_id"]
    found = next((a for a in call.state.attempts if str(a.id) == wanted), None)
    if found is None:
        raise not_found()
    return found


def list_deliveries(call: Call) -> Reply:
    """Newest first, with GitHub's cursor pagination (`cursor` = the last id seen)."""
    require_jwt(call)
    _, per_page = page_args(call)
    items = sorted(call.state.attempts, key=lambda a: a.id, reverse=True)
    cursor = call.query.get("cursor")
    if cursor:
        try:
            items = [a for a in items if a.id < int(cursor)]
        except ValueError as exc:
            raise invalid("HookDelivery", "cursor") from exc
    chunk = items[:per_page]
    headers = {}
    if len(items) > per_page:
        url = f"{call.state.base_url}/app/hook/deliveries"
        headers["link"] = f'<{url}?per_page={per_page}&cursor={chunk[-1].id}>; rel="next"'
    return Reply(body=[delivery_item_json(a) for a in chunk], headers=headers)


def get_delivery(call: Call) -> Reply:
    attempt = _attempt(call)
    body: JSON = delivery_item_json(attempt)
    body["url"] = f"{call.state.base_url}/app/hook/deliveries/{attempt.id}"
    body["request"] = {
        "headers": attempt.request_headers or None,
        "payload": json.loads(attempt.body),
    }
    body["response"] = {
        "headers": attempt.response_headers or None,
        "payload": attempt.response_body or None,
    }
    return Reply(body=body)


def redeliver(call: Call) -> Reply:
    attempt = _attempt(call)
    if not call.state.webhook.url:
        raise ApiError(422, "Webhook is not active")
    call.sb.hooks.redeliver(attempt)
    return Reply(202, {})


def get_user(call: Call) -> Reply:
    if call.identity.kind == "anonymous":
        raise ApiError(401, "Requires authentication")
    if call.identity.kind != "user" or call.identity.user is None:
        raise ApiError(403, "Resource not accessible by integration")
    return Reply(body=private_user_json(call.state, call.identity.user))


def routes(sb: Services) -> list[Route]:
    return [
        rest_route(sb, "GET", "/app", get_app),
        rest_route(sb, "GET", "/app/installations", list_installations),
        rest_route(sb, "GET", "/app/installations/{installation_id}", get_installation),
        rest_route(
            sb,
            "POST",
            "/app/installations/{installation_id}/access_tokens",
            create_access_token,
        ),
        rest_route(sb, "GET", "/repos/{owner}/{repo}/installation", repo_installation),
        rest_route(sb, "GET", "/installation/repositories", installation_repositories),
        rest_route(sb, "GET", "/app/hook/deliveries", list_deliveries),
        rest_route(sb, "GET", "/app/hook/deliveries/{delivery_id}", get_delivery),
        rest_route(sb, "POST", "/app/hook/deliveries/{delivery_id}/attempts", redeliver),
        rest_route(sb, "GET", "/user", get_user),
    ]
