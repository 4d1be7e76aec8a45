"""The gate's snapshot of one pull request, read from GitHub: the state `decide` takes, in the
format of docs/gate.md (so a maintainer can save it and ask `ourobot gate check` offline).

As few calls as the answer needs (besides the base config): the pull request, its reviews,
the latest check run per App and name on H, the combined status of H (the latest per
context), the permission of each reviewer whose latest review could count; compare
`base...H` only when `up-to-date` is required, the base branch's protection only when
`merge.required_checks` is unset, the file list only in pro mode.

What cannot be read is left out rather than guessed: a missing field fails the conditions that
read it, so a 403 on branch protection or a file list past GitHub's cap can only make the gate
wait. The config is the base branch's, read by the caller (a pull request cannot relax the
gates that judge it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.gate.reviews import COUNTING_STATES, PERMISSIONS
from app.guards.paths import ProtectedPaths
from app.repo_config import DEFAULT_SOURCE, RepoConfig, load_repo_config

PER_PAGE = 100
FILES_CAP = 3000  # GitHub's file list stops here: more is "cannot tell"
RAW = {"Accept": "application/vnd.github.raw"}


@dataclass(frozen=True)
class PullRef:
    owner: str
    name: str
    number: int

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


def _pages(fetch: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """Every item of a paged list endpoint (githubkit's `parsed_data` per page)."""
    page = 1
    while True:
        items = fetch(*args, per_page=PER_PAGE, page=page, **kwargs).parsed_data
        yield from items
        if len(items) < PER_PAGE:
            return
        page += 1


def base_config(github: GitHub[Any], pull: PullRef, ref: str) -> RepoConfig:
    """`.github/ourobot.yml` at the base branch `ref` (the defaults when there is none);
    raises ConfigError, naming the line and key, when it is invalid."""
    url = f"/repos/{pull.owner}/{pull.name}/contents/{DEFAULT_SOURCE}"
    try:
        answer = github.request("GET", url, params={"ref": ref}, headers=RAW)
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return load_repo_config(None)
        raise
    return load_repo_config(answer.text, source=f"{DEFAULT_SOURCE} on {ref}")


def read_pull(github: GitHub[Any], pull: PullRef) -> Any:
    """The pull request as GitHub shows it now (githubkit's PullRequest)."""
    return github.rest.pulls.get(pull.owner, pull.name, pull.number).parsed_data


def config_state(config: RepoConfig) -> dict[str, Any]:
    merge = config.merge
    return {
        "mode": config.mode,
        "merge": {
            "require_human_approval": merge.require_human_approval,
            "required_checks": (
                None if merge.required_checks is None else list(merge.required_checks)
            ),
            "require_up_to_date": merge.require_up_to_date,
        },
    }


def build_state(
    github: GitHub[Any],
    pull: PullRef,
    *,
    app_id: int,
    halted: bool,
    config: RepoConfig,
    data: Any = None,
) -> dict[str, Any]:
    """The snapshot of `pull` (its current head is H); `data` is the pull request when the
    caller has just read it."""
    o, r = pull.owner, pull.name
    data = data if data is not None else read_pull(github, pull)
    head = data.head.sha
    state: dict[str, Any] = {
        "app_id": app_id,
        "halted": halted,
        "config": config_state(config),
        "pr": {
            "number": data.number,
            "head_sha": head,
            "base_ref": data.base.ref,
            "head_ref": data.head.ref,
            "author": data.user.login if data.user else None,
            "draft": bool(data.draft),
            "mergeable": data.mergeable,
            "labels": [label.name for label in data.labels],
        },
        "check_runs": _check_runs(github, o, r, head),
        "statuses": _statuses(github, o, r, head),
        "reviews": _reviews(github, o, r, pull.number, head),
    }
    if config.merge.required_checks is None:
        # Unreadable (no permission, an error): left out, so `ci` waits instead of guessing.
        with contextlib.suppress(RequestFailed):
            state["branch_protection_required_checks"] = _protection(github, o, r, data.base.ref)
    else:
        state["branch_protection_required_checks"] = None  # not read: the config names them
    if config.merge.require_up_to_date:
        behind = _behind_by(github, o, r, data.base.ref, head)
        state["pr"]["behind_by"] = behind
    else:
        state["pr"]["behind_by"] = None  # not read
    if config.mode == "pro":
        touches = _touches_protected(github, pull, config)
        if touches is not None:
            state["pr"]["touches_protected"] = touches
    else:
        state["pr"]["touches_protected"] = False  # not read outside pro mode
    return state


def _check_runs(github: GitHub[Any], o: str, r: str, head: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    page = 1
    while True:
        answer = github.rest.checks.list_for_ref(
            o, r, head, filter_="latest", per_page=PER_PAGE, page=page
        ).parsed_data
        for run in answer.check_runs:
            runs.append(
                {
                    "id": run.id,
                    "name": run.name,
                    "head_sha": run.head_sha,
                    "status": run.status,
                    "conclusion": run.conclusion,
                    "app_id": run.app.id if run.app else None,
                    # Not read by the decision: how ourobot finds its own runs again.
                    "external_id": run.external_id,
                }
            )
        if len(answer.check_runs) < PER_PAGE:
            return runs
        page += 1


def _statuses(github: GitHub[Any], o: str, r: str, head: str) -> list[dict[str, Any]]:
    combined = github.rest.repos.get_combined_status_for_ref(
        o, r, head, per_page=PER_PAGE
    ).parsed_data
    statuses = [
        {"id": s.id, "context": s.context, "sha": head, "state": s.state} for s in combined.statuses
    ]
    if combined.total_count > len(statuses):
        # More contexts than one page: read them all, newest first, and keep every one (the
        # decision takes the latest per context itself).
        statuses = [
            {"id": s.id, "context": s.context, "sha": head, "state": s.state}
            for s in _pages(github.rest.repos.list_commit_statuses_for_ref, o, r, head)
        ]
    return statuses


def _reviews(github: GitHub[Any], o: str, r: str, number: int, head: str) -> list[dict[str, Any]]:
    reviews = list(_pages(github.rest.pulls.list_reviews, o, r, number))
    latest: dict[str, Any] = {}
    for review in sorted(reviews, key=lambda item: item.id):
        if review.user and review.state in COUNTING_STATES:
            latest[review.user.login.casefold()] = review
    # Permission matters only where the latest review could approve H or request changes.
    wanted = {
        key
        for key, review in latest.items()
        if review.state == "CHANGES_REQUESTED"
        or (review.state == "APPROVED" and review.commit_id == head)
    }
    levels = {key: _permission(github, o, r, latest[key].user.login) for key in wanted}
    out = []
    for review in reviews:
        login = review.user.login if review.user else None
        entry: dict[str, Any] = {
            "id": review.id,
            "user": login,
            "user_type": review.user.type if review.user else None,
            "state": review.state,
            "commit_id": review.commit_id,
        }
        key = login.casefold() if login else None
        if key in levels and levels[key] is not None:
            entry["permission"] = levels[key]
        out.append(entry)
    return out


def _permission(github: GitHub[Any], o: str, r: str, login: str) -> str | None:
    """The user's level on the repository: GitHub's role name (maintain, triage ...) where it
    is one of the built-in levels, else the legacy permission (admin, write, read, none)."""
    try:
        answer = github.rest.repos.get_collaborator_permission_level(o, r, login).parsed_data
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            return "none"
        raise
    role = getattr(answer, "role_name", None)
    if isinstance(role, str) and role in PERMISSIONS:
        return role
    return answer.permission if answer.permission in PERMISSIONS else None


def _protection(github: GitHub[Any], o: str, r: str, branch: str) -> list[str] | None:
    """The base branch's required check names; None when it is not protected or requires
    none."""
    data = github.rest.repos.get_branch(o, r, branch).parsed_data
    checks = data.protection.required_status_checks if data.protection else None
    if not data.protected or not checks or checks.enforcement_level == "off":
        return None
    names = [*checks.contexts, *(c.context for c in checks.checks)]
    return list(dict.fromkeys(names)) or None


def _behind_by(github: GitHub[Any], o: str, r: str, base_ref: str, head: str) -> int | None:
    try:
        comparison = github.rest.repos.compare_commits(o, r, f"{base_ref}...{head}").parsed_data
    except RequestFailed:
        return None  # unknown: not up to date
    return int(comparison.behind_by)


def _touches_protected(github: GitHub[Any], pull: PullRef, config: RepoConfig) -> bool | None:
    protected = ProtectedPaths(config.guards.effective_protected_paths(config.mode))
    count = 0
    for change in _pages(github.rest.pulls.list_files, pull.owner, pull.name, pull.number):
        count += 1
        names = [change.filename, getattr(change, "previous_filename", None)]
        if any(isinstance(n, str) and protected.match(n) for n in names):
            return True
    return None if count >= FILES_CAP else False
