"""Authorization: a person's permission on a repository, from GitHub, cached briefly.

Never decided from a login's shape (a `[bot]` suffix, a name): only from what GitHub says the
account may do. A lookup that fails means "no permission" (fail closed).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.commands.slash import Permission

DEFAULT_TTL_S = 60.0
CacheKey = tuple[int | None, str, str]  # (installation, repo, login), lower-cased


@dataclass
class PermissionCache:
    """Per-process cache of (installation, repo, login) -> permission, for `ttl_s` seconds."""

    ttl_s: float = DEFAULT_TTL_S
    _entries: dict[CacheKey, tuple[float, Permission]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: CacheKey) -> Permission | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] < time.monotonic():
                return None
            return entry[1]

    def put(self, key: CacheKey, permission: Permission) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic() + self.ttl_s, permission)


def permission_of(
    github: GitHub[Any],
    *,
    installation_id: int | None,
    repo: str,
    login: str,
    cache: PermissionCache | None = None,
) -> Permission:
    """`login`'s permission on `repo` ("owner/name"). Not a collaborator: NONE."""
    key = (installation_id, repo.lower(), login.lower())
    if cache is not None and (hit := cache.get(key)) is not None:
        return hit
    owner, name = repo.split("/", 1)
    try:
        data = github.rest.repos.get_collaborator_permission_level(owner, name, login).parsed_data
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            permission = Permission.NONE
            if cache is not None:
                cache.put(key, permission)
            return permission
        raise
    # role_name distinguishes triage and maintain, which the legacy field folds away.
    permission = Permission.parse(data.role_name or data.permission)
    if cache is not None:
        cache.put(key, permission)
    return permission
