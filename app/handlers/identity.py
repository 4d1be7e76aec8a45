"""The App's own identity (its bot login), asked of GitHub once per process."""

from __future__ import annotations

import threading

from app.github_client import GitHubClients

_lock = threading.Lock()
_known: dict[tuple[str, int | None], str] = {}


def bot_login(github: GitHubClients) -> str:
    """`<slug>[bot]`: the login GitHub shows on everything the App writes."""
    if github.fixed_token is not None:
        return github.settings.bot_login
    key = (github.settings.github_api_url, github.settings.app_id)
    with _lock:
        if key in _known:
            return _known[key]
    client = github.app()  # githubkit's namespaces hold the client weakly: keep a reference
    app = client.rest.apps.get_authenticated().parsed_data
    if app is None or not app.slug:
        raise RuntimeError("GitHub did not say which App these credentials belong to")
    login = f"{app.slug}[bot]"
    with _lock:
        _known[key] = login
    return login
