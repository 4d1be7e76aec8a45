"""The REST API versions the sandbox speaks, and what each one changes in an answer.

GitHub shapes an answer by the request's `X-GitHub-Api-Version` header: a request without it
gets 2022-11-28 (GitHub's documented default, kept for unversioned clients), and a version
GitHub does not support gets 400 before anything else is looked at. The serializers build
2022-11-28's shape; `shape` takes out what a later version removed, by the changesets GitHub
lists for it (its breaking-changes page and the `x-github-breaking-changes` entries of its
OpenAPI description), so the rule for each version lives here and nowhere else.

Webhook payloads carry no request, so no version: the sandbox sends them in 2022-11-28's
shape, which is also what GitHub's description gives for them unpatched.
"""

from __future__ import annotations

from typing import Any

V2022 = "2022-11-28"
V2026 = "2026-03-10"
SUPPORTED = (V2022, V2026)  # oldest first; the last is the most recent
DEFAULT = V2022
HEADER = "x-github-api-version"
DOCS = "https://docs.github.com/rest/about-the-rest-api/api-versions"

# 2026-03-10's removals, by the object that carried the field. An object is recognised by a
# key only that kind of object has, so a field of the same name elsewhere is left alone.
_REMOVED_2026: tuple[tuple[str, tuple[str, ...]], ...] = (
    # remove_pull_request_merge_commit_sha: pull requests (full and simple) only.
    ("review_comments_url", ("merge_commit_sha",)),
    # remove_singular_assignee_from_issues_and_pull_requests: `assignees` stays.
    ("assignees", ("assignee",)),
    # remove_has_downloads, remove_use_squash_pr_title_as_default, deprecate_beta_media_type.
    ("full_name", ("has_downloads", "use_squash_pr_title_as_default", "master_branch")),
)


class UnsupportedVersion(ValueError):
    """The header named a version GitHub does not serve; `str()` is GitHub's message."""


def requested(value: str | None) -> str:
    """The version a request asked for; a missing header is the default."""
    if value is None:
        return DEFAULT
    version = value.strip()
    if version not in SUPPORTED:
        raise UnsupportedVersion(unsupported_message(value))
    return version


def unsupported_message(value: str) -> str:
    listed = [f'"{v}"' for v in reversed(SUPPORTED)]
    listed[0] += " (most recent)"
    return (
        f'The version you specified in the "X-GitHub-Api-Version" request header, "{value}", '
        f"is not a supported version. The following versions are currently supported: "
        f"{', '.join(listed)}."
    )


def shape(body: Any, version: str) -> Any:
    """`body` (2022-11-28's shape) as `version` answers it; a new object, `body` untouched."""
    if version == V2022:
        return body
    return _without_2026_removals(body)


def _without_2026_removals(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_2026_removals(item) for item in value]
    if not isinstance(value, dict):
        return value
    removed: set[str] = set()
    for marker, fields in _REMOVED_2026:
        if marker in value:
            removed.update(fields)
    return {k: _without_2026_removals(v) for k, v in value.items() if k not in removed}


def dispatch_answers_run(version: str, asked: bool) -> bool:
    """Whether `POST .../dispatches` answers 200 with the run it started (else 204):
    2026-03-10 always does (change_workflow_dispatch_response_status, which also drops the
    `return_run_details` parameter); 2022-11-28 only when the body asks for it."""
    return version != V2022 or asked
