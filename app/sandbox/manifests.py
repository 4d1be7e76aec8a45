"""Registering a GitHub App from a manifest, as GitHub does it (the App-manifest flow).

1. `POST /settings/apps/new` (or `/organizations/{org}/settings/apps/new`) with a form field
   `manifest` (JSON) and an optional `state`: on GitHub a browser posts this and the signed-in
   person confirms the App; here the post itself is the confirmation. The manifest is checked
   the way GitHub checks it (required keys, known permissions and levels, known events, and
   every event backed by a permission that delivers it); a bad one answers 422 with the
   reasons. A good one registers the sandbox's App from it (name, permissions, events, webhook
   URL, a new key and webhook secret) and redirects (302) to `redirect_url?code=...&state=...`.
2. `POST /app-manifests/{code}/conversions` (no authentication: the code is the credential,
   once, within an hour) answers 201 with the App and its `pem`, `webhook_secret`,
   `client_id` and `client_secret`.

From then on the App's JWTs are checked against the new key, installation tokens carry the
manifest's permissions, and a call those permissions do not cover answers 403 (`permissions`).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from app.sandbox.routing import ApiError, Call, Reply, Services, not_found, rest_route
from app.sandbox.serializers import app_json

CODE_TTL_S = 3600
MANIFEST_KEYS = {
    "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url",
    "description", "public", "default_events", "default_permissions",
    "request_oauth_on_install", "setup_on_update",
}  # fmt: skip
LEVELS = ("read", "write", "admin")
# The repository and organization permissions a GitHub App may ask for.
PERMISSION_NAMES = {
    "actions", "administration", "attestations", "checks", "codespaces", "contents",
    "custom_properties", "dependabot_secrets", "deployments", "discussions", "environments",
    "issues", "merge_queues", "metadata", "packages", "pages", "pull_requests",
    "repository_hooks", "repository_projects", "secret_scanning_alerts", "secrets",
    "security_events", "single_file", "statuses", "vulnerability_alerts", "workflows",
    "members", "organization_administration", "organization_hooks", "organization_plan",
    "organization_projects", "organization_secrets", "organization_self_hosted_runners",
    "organization_user_blocking", "team_discussions", "email_addresses", "followers",
    "git_ssh_keys", "gpg_keys", "profile", "starring",
}  # fmt: skip
# Event -> the permissions any one of which makes GitHub deliver it (GitHub refuses a manifest
# whose default_events include one none of its permissions covers).
EVENT_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "check_run": ("checks",),
    "check_suite": ("checks",),
    "commit_comment": ("contents",),
    "create": ("contents",),
    "delete": ("contents",),
    "deployment": ("deployments",),
    "deployment_status": ("deployments",),
    "discussion": ("discussions",),
    "discussion_comment": ("discussions",),
    "fork": ("contents",),
    "gollum": ("contents",),
    "issue_comment": ("issues", "pull_requests"),
    "issues": ("issues",),
    "label": ("metadata",),
    "member": ("members",),
    "merge_group": ("merge_queues",),
    "milestone": ("issues", "pull_requests"),
    "public": ("metadata",),
    "pull_request": ("pull_requests",),
    "pull_request_review": ("pull_requests",),
    "pull_request_review_comment": ("pull_requests",),
    "pull_request_review_thread": ("pull_requests",),
    "push": ("contents",),
    "release": ("contents",),
    "repository": ("metadata",),
    "status": ("statuses",),
    "workflow_dispatch": ("actions",),
    "workflow_job": ("actions",),
    "workflow_run": ("actions",),
}


@dataclass
class PendingConversion:
    app_id: int
    webhook_secret: str
    client_secret: str
    expires_at: float


def check_manifest(manifest: Any) -> list[str]:
    """What GitHub would refuse in this manifest; empty when it is acceptable."""
    if not isinstance(manifest, dict):
        return ["the manifest is not a JSON object"]
    problems = [f"unknown key {key!r}" for key in sorted(set(manifest) - MANIFEST_KEYS)]
    if not _is_url(manifest.get("url")):
        problems.append("url is required: the App's homepage, an http(s) URL")
    hook = manifest.get("hook_attributes")
    if hook is not None and (not isinstance(hook, dict) or not _is_url(hook.get("url"))):
        problems.append("hook_attributes.url is required with hook_attributes: an http(s) URL")
    if "redirect_url" in manifest and not _is_url(manifest["redirect_url"]):
        problems.append("redirect_url must be an http(s) URL")
    name = manifest.get("name")
    if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 34):
        problems.append("name must be 1 to 34 characters")
    permissions = manifest.get("default_permissions") or {}
    if not isinstance(permissions, dict):
        return [*problems, "default_permissions must be an object of permission -> level"]
    for key, level in sorted(permissions.items()):
        if key not in PERMISSION_NAMES:
            problems.append(f"default_permissions: unknown permission {key!r}")
        elif level not in LEVELS:
            problems.append(f"default_permissions.{key}: {level!r} is not read, write or admin")
    events = manifest.get("default_events") or []
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        return [*problems, "default_events must be a list of event names"]
    for event in events:
        needs = EVENT_PERMISSIONS.get(event)
        if needs is None:
            problems.append(f"default_events: unknown event {event!r}")
        elif not any(permission in permissions for permission in needs):
            problems.append(
                f"default_events: {event!r} needs one of the permissions {', '.join(needs)}"
            )
    return problems


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and urlsplit(value).scheme in ("http", "https")


def routes(sb: Services) -> list[Route]:
    async def new_app(request: Request) -> Response:
        # A browser's form post (application/x-www-form-urlencoded), read without a form library.
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        form = {key: values[0] for key, values in fields.items()}
        raw = form.get("manifest")
        try:
            manifest = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            manifest = None
        problems = check_manifest(manifest) if manifest is not None else ["no manifest posted"]
        if problems:
            return JSONResponse({"message": "Invalid manifest", "errors": problems}, 422)
        assert isinstance(manifest, dict)
        with sb.state.lock:
            code = register(sb, manifest)
        target = manifest.get("redirect_url") or manifest["url"]
        query = {"code": code}
        state = form.get("state")
        if isinstance(state, str) and state:
            query["state"] = state
        separator = "&" if urlsplit(target).query else "?"
        return RedirectResponse(f"{target}{separator}{urlencode(query)}", status_code=302)

    return [
        Route("/settings/apps/new", new_app, methods=["POST"]),
        Route("/organizations/{org}/settings/apps/new", new_app, methods=["POST"]),
        rest_route(sb, "POST", "/app-manifests/{code}/conversions", convert),
    ]


def register(sb: Services, manifest: dict[str, Any]) -> str:
    """Make the sandbox's App the one this manifest describes; the one-time code for it."""
    state = sb.state
    app = state.register_app(
        name=str(manifest.get("name") or "ourobot"),
        permissions=dict(manifest.get("default_permissions") or {}),
        events=tuple(manifest.get("default_events") or ()),
    )
    webhook_secret = secrets.token_hex(20)
    hook = manifest.get("hook_attributes") or {}
    if hook.get("active", True):
        state.webhook.url = hook.get("url")
        state.webhook.secret = webhook_secret
    code = secrets.token_hex(10)
    sb.conversions[code] = PendingConversion(
        app_id=app.id,
        webhook_secret=webhook_secret,
        client_secret=secrets.token_hex(20),
        expires_at=time.time() + CODE_TTL_S,
    )
    return code


def convert(call: Call) -> Reply:
    pending = call.sb.conversions.pop(call.params["code"], None)
    app = call.state.app
    if pending is None or pending.expires_at < time.time() or pending.app_id != app.id:
        raise not_found()
    if not app.private_key_pem:
        raise ApiError(500, "the App has no key")
    body = {
        **app_json(call.state, app),
        "client_secret": pending.client_secret,
        "webhook_secret": pending.webhook_secret,
        "pem": app.private_key_pem,
    }
    return Reply(201, body)
