"""Gate states for tests: one where everything holds, and small edits of it."""

from __future__ import annotations

import copy
from typing import Any

APP_ID = 101
OTHER_APP_ID = 202
H = "a" * 40  # the head
OLD = "b" * 40  # an earlier head

DELETE = object()


def run(
    ident: int,
    name: str,
    *,
    sha: str = H,
    status: str = "completed",
    conclusion: str | None = "success",
    app_id: int = APP_ID,
) -> dict[str, Any]:
    return {
        "id": ident,
        "name": name,
        "head_sha": sha,
        "status": status,
        "conclusion": conclusion,
        "app_id": app_id,
    }


def status(ident: int, context: str, state: str = "success", *, sha: str = H) -> dict[str, Any]:
    return {"id": ident, "context": context, "sha": sha, "state": state}


def review(
    ident: int,
    user: str,
    state: str = "APPROVED",
    *,
    commit_id: str | None = H,
    permission: str = "write",
    user_type: str = "User",
) -> dict[str, Any]:
    return {
        "id": ident,
        "user": user,
        "user_type": user_type,
        "state": state,
        "commit_id": commit_id,
        "permission": permission,
    }


def good() -> dict[str, Any]:
    """Everything met: CI (one status), guards, review, an approval on H."""
    return {
        "app_id": APP_ID,
        "halted": False,
        "config": {
            "mode": "advanced",
            "merge": {
                "require_human_approval": True,
                "required_checks": None,
                "require_up_to_date": True,
            },
        },
        "branch_protection_required_checks": None,
        "pr": {
            "number": 7,
            "head_sha": H,
            "author": "ourobot[bot]",
            "draft": False,
            "mergeable": True,
            "labels": [],
            "touches_protected": False,
            "behind_by": 0,
        },
        "check_runs": [run(11, "ourobot/guards"), run(12, "ourobot/review")],
        "statuses": [status(21, "ci/lint")],
        "reviews": [review(31, "alice")],
    }


def edit(state: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `state` with the field at `path` (`pr.draft`, `reviews.0.state`) set to
    `value`, or removed when `value` is DELETE."""
    out = copy.deepcopy(state)
    *parents, last = path.split(".")
    node: Any = out
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    key: Any = int(last) if isinstance(node, list) else last
    if value is DELETE:
        del node[key]
    else:
        node[key] = value
    return out


def with_(**changes: Any) -> dict[str, Any]:
    """`good()` with top-level or dotted changes: with_(**{"pr.draft": True})."""
    state = good()
    for path, value in changes.items():
        state = edit(state, path, value)
    return state
