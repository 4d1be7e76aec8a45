"""The GitHub App manifest: exactly the permissions and events ourobot uses, each with why.

GitHub's App-manifest format (docs: "Registering a GitHub App from a manifest"): a JSON object
posted from a browser form to `https://github.com/settings/apps/new` (or an organization's
`/organizations/ORG/settings/apps/new`); GitHub shows the App pre-filled, the person creates it,
GitHub redirects to `redirect_url?code=...`, and `POST /app-manifests/{code}/conversions`
answers the App's id, private key and webhook secret (`ourobot app convert CODE`).

`PERMISSIONS` and `EVENTS` are the one list: the manifest, `docs/github-app.md` and the tests
(which compare the events with the router's and the permissions with the API calls) read them.
"""

from __future__ import annotations

import json
from typing import Any

from app.errors import UserError

# permission -> (level, why ourobot needs it)
PERMISSIONS: dict[str, tuple[str, str]] = {
    "checks": (
        "write",
        "creates and updates the ourobot/guards, ourobot/review and ourobot/gate check runs, "
        "and reads CI's check runs on a head for the merge gate",
    ),
    "contents": (
        "write",
        "clones and fetches repositories for the guards, the review and the implementer; "
        "pushes ourobot/* branches; merges a pull request with sha= pinned; deletes a merged "
        "ourobot branch; reads .github/ourobot.yml at the base",
    ),
    "issues": (
        "write",
        "reads tickets (issues) and slash-command comments; posts and edits its status "
        "comments; sets the ourobot:* labels; closes a done ticket; reacts to a command",
    ),
    "pull_requests": (
        "write",
        "opens the implementer's pull requests; reads their files and reviews; posts the "
        "panel's review; dismisses its own stale review; updates its own branch",
    ),
    "statuses": (
        "read",
        "reads commit statuses (CI that reports statuses, not check runs) for the merge gate",
    ),
    "merge_queues": (
        "read",
        "receives merge_group events, to run the guards and carry the review to the queue's "
        "commit when the repository uses GitHub's merge queue",
    ),
    "metadata": (
        "read",
        "mandatory for every App; also how it reads a commenter's permission on the repository",
    ),
}

# Asked for only when the operator says so (`ourobot app manifest --actions`): a manifest is one
# App's, and every installation grants its permissions on every repository it covers, so a
# permission only some repositories need is not asked of all of them. permission -> (level, why)
OPTIONAL_PERMISSIONS: dict[str, tuple[str, str]] = {
    "actions": (
        "write",
        "starts the repository's ourobot workflow (workflow_dispatch) and reads its run, for "
        "repositories whose config says implementer.runs_on: actions; only with --actions",
    ),
}

# event -> why ourobot subscribes to it
EVENTS: dict[str, str] = {
    "issues": "an issue labeled ourobot:ticket becomes a ticket",
    "issue_comment": "a comment line /ourobot <verb> is a command (/ourobot panic inline)",
    "pull_request": "opened or pushed: the guards and the review run on the new head",
    "pull_request_review": "a human approval (or its dismissal) can change the merge gate",
    "check_run": "CI's checks finishing can complete the merge gate's conditions",
    "check_suite": "another App's suite finishing, likewise",
    "status": "a commit status (CI reporting statuses) can complete the gate",
    "push": "a push to the base branch makes open pull requests re-check that they contain it",
    "merge_group": "GitHub's merge queue asks for ourobot's checks on the queue's commit",
}

DEFAULT_NAME = "ourobot"
WEBHOOK_PATH = "/api/github/webhooks"


def build_manifest(
    url: str,
    *,
    name: str = DEFAULT_NAME,
    redirect_url: str | None = None,
    public: bool = False,
    actions: bool = False,
) -> dict[str, Any]:
    """The manifest for a deployment reachable at `url` (its webhooks go to `url` + the path);
    `actions` adds the `actions` permission, for cycles on repositories' own Actions runners."""
    base = url.rstrip("/")
    if not base.startswith(("https://", "http://")):
        raise UserError(
            f"--url {url!r}: give the deployment's address, e.g. https://ourobot.example.com"
        )
    if not name.strip() or len(name) > 34:
        raise UserError("--name must be 1 to 34 characters (GitHub's limit for an App's name)")
    manifest: dict[str, Any] = {
        "name": name,
        "url": base,
        "hook_attributes": {"url": base + WEBHOOK_PATH, "active": True},
        "redirect_url": redirect_url or base,
        "description": "A reviewed AI development loop: guards, a review panel, a merge gate.",
        "public": public,
        "default_permissions": {
            key: level
            for key, (level, _) in [
                *PERMISSIONS.items(),
                *(OPTIONAL_PERMISSIONS.items() if actions else ()),
            ]
        },
        "default_events": sorted(EVENTS),
    }
    return manifest


def manifest_json(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2) + "\n"


def manifest_form(manifest: dict[str, Any], *, github_url: str, org: str | None = None) -> str:
    """A page that posts the manifest to GitHub when its button is pressed (the flow needs a
    browser: GitHub asks the signed-in person to confirm the App)."""
    from html import escape

    target = github_url.rstrip("/") + (
        f"/organizations/{org}/settings/apps/new" if org else "/settings/apps/new"
    )
    value = escape(json.dumps(manifest), quote=True)
    return (
        "<!doctype html>\n<meta charset=utf-8>\n<title>Create the ourobot GitHub App</title>\n"
        f'<form action="{escape(target, quote=True)}" method="post">\n'
        f'  <input type="hidden" name="manifest" value="{value}">\n'
        "  <button type=submit>Create the ourobot GitHub App</button>\n</form>\n"
    )
