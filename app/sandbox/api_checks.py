"""REST routes for check runs (Apps only, as on GitHub) and commit statuses, and the functions
the Actions stand-in shares with them to record a check run and emit its webhooks.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.routing import Route

from app.sandbox import events
from app.sandbox.routing import (
    ApiError,
    Call,
    Reply,
    Services,
    actor,
    find_repo,
    find_repo_checked,
    invalid,
    not_found,
    paginate,
    rest_route,
)
from app.sandbox.serializers import check_run_json, repo_json, status_json
from app.sandbox.state import AppRecord, CheckRun, CommitStatus, Repo

RUN_STATUSES = ("queued", "in_progress", "completed")
CONCLUSIONS = (
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
)
STATUS_STATES = ("error", "failure", "pending", "success")
MAX_ANNOTATIONS_PER_CALL = 50


# ----- shared with the Actions stand-in -----------------------------------------------------------
def record_check_run(
    sb: Services,
    repo: Repo,
    app: AppRecord,
    *,
    name: str,
    head_sha: str,
    status: str = "queued",
    conclusion: str | None = None,
    output: dict[str, Any] | None = None,
    details_url: str | None = None,
    external_id: str | None = None,
) -> CheckRun:
    """Create a check run; emit `check_run.created` (and `.completed` if so). Hold the lock."""
    now = sb.state.now()
    suite_key = (app.id, head_sha)
    suite_id = repo.suites.setdefault(suite_key, sb.state.next_id())
    if conclusion is not None:
        status = "completed"
    run = CheckRun(
        id=sb.state.next_id(),
        repo_id=repo.id,
        head_sha=head_sha,
        name=name,
        app=app,
        suite_id=suite_id,
        status=status,
        conclusion=conclusion,
        started_at=now,
        completed_at=now if status == "completed" else None,
        output=dict(output or {}),
        annotations=list((output or {}).get("annotations") or []),
        details_url=details_url or f"{sb.state.base_url}/apps/{app.slug}",
        external_id=external_id or "",
    )
    repo.check_runs[run.id] = run
    events.check_run(sb, "created", repo, run, app.bot)
    if run.status == "completed":
        events.check_run(sb, "completed", repo, run, app.bot)
        events.check_suite_completed(sb, repo, run, app.bot)
    return run


def update_check_run(sb: Services, repo: Repo, run: CheckRun, changes: dict[str, Any]) -> None:
    """Apply a PATCH to a check run; emit `check_run.completed` on completion. Hold the lock."""
    was_completed = run.status == "completed"
    for key in ("name", "details_url", "external_id"):
        if isinstance(changes.get(key), str):
            setattr(run, key, changes[key])
    if changes.get("status") is not None:
        run.status = changes["status"]
    if changes.get("conclusion") is not None:
        run.conclusion, run.status = changes["conclusion"], "completed"
    output = changes.get("output")
    if isinstance(output, dict):
        run.annotations.extend(output.get("annotations") or [])
        run.output.update({k: v for k, v in output.items() if k != "annotations"})
    if run.status == "completed" and not was_completed:
        run.completed_at = sb.state.now()
        events.check_run(sb, "completed", repo, run, run.app.bot)
        events.check_suite_completed(sb, repo, run, run.app.bot)


# ----- validation ---------------------------------------------------------------------------------
def _validate(call: Call, *, creating: bool) -> None:
    body = call.body if isinstance(call.body, dict) else {}
    if creating and not isinstance(body.get("name"), str):
        raise invalid("CheckRun", "name", "missing_field")
    if body.get("status") is not None and body["status"] not in RUN_STATUSES:
        raise invalid("CheckRun", "status")
    if body.get("conclusion") is not None and body["conclusion"] not in CONCLUSIONS:
        raise invalid("CheckRun", "conclusion")
    if body.get("status") == "completed" and body.get("conclusion") is None:
        raise invalid("CheckRun", "conclusion", "missing_field")
    output = body.get("output")
    if output is None:
        return
    if (
        not isinstance(output, dict)
        or not isinstance(output.get("summary"), str)
        or (creating and not isinstance(output.get("title"), str))
    ):
        raise invalid("CheckRun", "output", "missing_field")
    annotations = output.get("annotations") or []
    if not isinstance(annotations, list) or len(annotations) > MAX_ANNOTATIONS_PER_CALL:
        raise invalid("CheckRun", "annotations")
    for item in annotations:
        needed = ("path", "start_line", "end_line", "annotation_level", "message")
        if not isinstance(item, dict) or any(k not in item for k in needed):
            raise invalid("CheckRun", "annotations", "missing_field")


def _require_app(call: Call) -> AppRecord:
    if call.identity.kind != "installation" or call.identity.app is None:
        raise ApiError(403, "You must authenticate via a GitHub App.")
    return call.identity.app


def _find_run(call: Call, repo: Repo) -> CheckRun:
    run = (
        repo.check_runs.get(int(call.params["check_run_id"]))
        if call.params["check_run_id"].isdigit()
        else None
    )
    if run is None:
        raise not_found()
    return run


# ----- check run routes ---------------------------------------------------------------------------
def create_run(call: Call) -> Reply:
    repo = find_repo_checked(call, "write", partial(_validate, creating=True))
    app = _require_app(call)
    head_sha = call.json_field("head_sha")
    if not isinstance(head_sha, str) or call.sb.git(repo).resolve(head_sha) != head_sha:
        raise ApiError(422, f"No commit found for SHA: {head_sha}")
    run = record_check_run(
        call.sb,
        repo,
        app,
        name=call.json_field("name"),
        head_sha=head_sha,
        status=call.json_field("status") or "queued",
        conclusion=call.json_field("conclusion"),
        output=call.json_field("output"),
        details_url=call.json_field("details_url"),
        external_id=call.json_field("external_id"),
    )
    return Reply(201, check_run_json(call.state, repo, run))


def update_run(call: Call) -> Reply:
    repo = find_repo(call, "write")
    app = _require_app(call)
    run = _find_run(call, repo)
    if run.app is not app:
        raise ApiError(
            403,
            f"Invalid app_id `{app.id}` - check run can only be modified by the GitHub App "
            "that created it.",
        )
    _validate(call, creating=False)
    update_check_run(call.sb, repo, run, call.body if isinstance(call.body, dict) else {})
    return Reply(body=check_run_json(call.state, repo, run))


def get_run(call: Call) -> Reply:
    repo = find_repo(call)
    return Reply(body=check_run_json(call.state, repo, _find_run(call, repo)))


def list_annotations(call: Call) -> Reply:
    repo = find_repo(call)
    run = _find_run(call, repo)
    url = f"{call.state.base_url}/repos/{repo.full_name}/check-runs/{run.id}/annotations"
    chunk, headers = paginate(call, run.annotations, url)
    body = [
        {
            "path": a["path"],
            "start_line": a["start_line"],
            "end_line": a["end_line"],
            "start_column": a.get("start_column"),
            "end_column": a.get("end_column"),
            "annotation_level": a["annotation_level"],
            "title": a.get("title"),
            "message": a["message"],
            "raw_details": a.get("raw_details"),
            "blob_href": f"{call.state.base_url}/{repo.full_name}/blob/{run.head_sha}/{a['path']}",
        }
        for a in chunk
    ]
    return Reply(body=body, headers=headers)


def _sha_for(call: Call, repo: Repo) -> str:
    ref = call.params["ref"]
    sha = call.sb.git(repo).resolve(ref)
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}")
    return sha


def list_runs_for_ref(call: Call) -> Reply:
    repo = find_repo(call)
    sha = _sha_for(call, repo)
    runs = sorted(
        (r for r in repo.check_runs.values() if r.head_sha == sha), key=lambda r: r.id, reverse=True
    )
    name, status = call.query.get("check_name"), call.query.get("status")
    runs = [r for r in runs if name in (None, r.name) and status in (None, r.status)]
    app_id = call.query.get("app_id")
    if app_id:
        runs = [r for r in runs if str(r.app.id) == app_id]
    if call.query.get("filter", "latest") == "latest":
        seen: set[tuple[int, str]] = set()
        latest = []
        for run in runs:
            if (run.app.id, run.name) not in seen:
                seen.add((run.app.id, run.name))
                latest.append(run)
        runs = latest
    url = f"{call.state.base_url}/repos/{repo.full_name}/commits/{sha}/check-runs"
    chunk, headers = paginate(call, runs, url)
    body = {
        "total_count": len(runs),
        "check_runs": [check_run_json(call.state, repo, r) for r in chunk],
    }
    return Reply(body=body, headers=headers)


# ----- commit statuses ----------------------------------------------------------------------------
def _status_body(call: Call) -> None:
    if call.json_field("state") not in STATUS_STATES:
        raise invalid("Status", "state")


def create_status(call: Call) -> Reply:
    repo = find_repo_checked(call, "write", _status_body)
    sha = call.params["sha"]
    if call.sb.git(repo).resolve(sha) != sha:
        raise ApiError(422, f"No commit found for SHA: {sha}")
    state = call.json_field("state")
    record = CommitStatus(
        id=call.state.next_id(),
        repo_id=repo.id,
        sha=sha,
        state=state,
        context=str(call.json_field("context") or "default"),
        description=call.json_field("description"),
        target_url=call.json_field("target_url"),
        creator=actor(call),
        created_at=call.state.now(),
    )
    repo.statuses.append(record)
    events.status(call.sb, repo, record, record.creator)
    return Reply(201, status_json(call.state, repo, record))


def _latest_statuses(repo: Repo, sha: str) -> list[CommitStatus]:
    latest: dict[str, CommitStatus] = {}
    for record in repo.statuses:
        if record.sha == sha:
            latest[record.context] = record
    return sorted(latest.values(), key=lambda s: s.id, reverse=True)


def combined_status(call: Call) -> Reply:
    repo = find_repo(call)
    sha = _sha_for(call, repo)
    statuses = _latest_statuses(repo, sha)
    states = {s.state for s in statuses}
    if states & {"error", "failure"}:
        combined = "failure"
    elif not statuses or "pending" in states:
        combined = "pending"
    else:
        combined = "success"
    api = f"{call.state.base_url}/repos/{repo.full_name}"
    body = {
        "state": combined,
        "statuses": [{**status_json(call.state, repo, s), "required": False} for s in statuses],
        "sha": sha,
        "total_count": len(statuses),
        "repository": repo_json(call.state, repo),
        "commit_url": f"{api}/commits/{sha}",
        "url": f"{api}/commits/{sha}/status",
    }
    return Reply(body=body)


def list_statuses(call: Call) -> Reply:
    repo = find_repo(call)
    sha = _sha_for(call, repo)
    found = sorted((s for s in repo.statuses if s.sha == sha), key=lambda s: s.id, reverse=True)
    url = f"{call.state.base_url}/repos/{repo.full_name}/commits/{sha}/statuses"
    chunk, headers = paginate(call, found, url)
    return Reply(body=[status_json(call.state, repo, s) for s in chunk], headers=headers)


def routes(sb: Services) -> list[Route]:
    base = "/repos/{owner}/{repo}"
    run = base + "/check-runs/{check_run_id}"
    return [
        rest_route(sb, "POST", base + "/check-runs", create_run),
        rest_route(sb, "GET", run, get_run),
        rest_route(sb, "PATCH", run, update_run),
        rest_route(sb, "GET", run + "/annotations", list_annotations),
        rest_route(sb, "GET", base + "/commits/{ref:path}/check-runs", list_runs_for_ref),
        rest_route(sb, "GET", base + "/commits/{ref:path}/status", combined_status),
        rest_route(sb, "GET", base + "/commits/{ref:path}/statuses", list_statuses),
        rest_route(sb, "POST", base + "/statuses/{sha}", create_status),
    ]
