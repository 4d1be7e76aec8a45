"""REST routes for GitHub Actions: dispatching a workflow and reading a run.

`POST /repos/{o}/{r}/actions/workflows/{workflow_id}/dispatches` is checked in GitHub's order
(a repo the caller cannot see 404, anonymous 401, a body without `ref` 422, below write or
without the App's `actions: write` 403), then as `app.sandbox.workflows` says. It answers 204,
or 200 with the run's id and URLs where the API version says so (`versions`), and the runner
stand-in (`app.sandbox.runner`) runs the workflow's command when a test set one.
"""

from __future__ import annotations

from starlette.routing import Route

from app.sandbox import versions, workflows
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
    rest_route,
)
from app.sandbox.serializers import workflow_dispatch_json, workflow_run_json

MAX_INPUTS = 25


def _dispatch_body(call: Call) -> None:
    body = call.body if isinstance(call.body, dict) else None
    if body is None or not isinstance(body.get("ref"), str) or not body["ref"]:
        raise invalid("WorkflowDispatch", "ref", "missing_field")
    inputs = body.get("inputs")
    if inputs is not None and (not isinstance(inputs, dict) or len(inputs) > MAX_INPUTS):
        raise invalid("WorkflowDispatch", "inputs")


def create_dispatch(call: Call) -> Reply:
    repo = find_repo_checked(call, "write", _dispatch_body)
    path = workflows.workflow_path(call.state, repo, call.params["workflow_id"])
    if path is None:
        raise not_found()
    try:
        run = workflows.dispatch(
            call.state,
            repo,
            path,
            call.json_field("ref"),
            call.json_field("inputs") or {},
            actor(call),
        )
    except workflows.DispatchRefused as exc:
        raise ApiError(exc.status, exc.message) from None
    call.sb.runner.trigger(repo, run)
    asked = call.json_field("return_run_details") is True
    if versions.dispatch_answers_run(call.api_version, asked):
        return Reply(200, workflow_dispatch_json(call.state, repo, run))
    return Reply(204)


def get_run(call: Call) -> Reply:
    repo = find_repo(call)
    raw = call.params["run_id"]
    run = repo.workflow_runs.get(int(raw)) if raw.isdigit() else None
    if run is None:
        raise not_found()
    head = call.sb.git(repo).commit_info(run.head_sha)
    return Reply(body=workflow_run_json(call.state, repo, run, head))


def routes(sb: Services) -> list[Route]:
    base = "/repos/{owner}/{repo}/actions"
    return [
        rest_route(sb, "POST", base + "/workflows/{workflow_id}/dispatches", create_dispatch),
        rest_route(sb, "GET", base + "/runs/{run_id}", get_run),
    ]
