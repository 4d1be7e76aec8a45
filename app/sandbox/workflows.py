"""The part of GitHub Actions the sandbox plays: workflows found under `.github/workflows/`, a
`workflow_dispatch` that starts a run, the run's `GITHUB_TOKEN`, and the run's life (queued,
in progress, completed) as the runner stand-in (`app.sandbox.runner`) or a test moves it.

As on GitHub:
- a workflow is a file under `.github/workflows/` on the default branch, known by a stable id;
  a path's `workflow_id` is that id or the file's name; another name is 404;
- a dispatch reads the workflow file at `ref` (a branch or a tag, short or full): no such ref
  is 422 `No ref found for: <ref>`; a file there without a `workflow_dispatch` trigger is 422
  `Workflow does not have 'workflow_dispatch' trigger`; an input the file does not declare is
  422 `Unexpected inputs provided: [...]`; a required input with no default left out is 422
  `Required input '<name>' not provided`; a choice outside its options is 422;
- the event the run reads (`GITHUB_EVENT_PATH`) carries the inputs as strings with the
  defaults filled in, the full `ref`, the workflow's path, `repository` and `sender`;
- the run's `GITHUB_TOKEN` is an installation token of the GitHub Actions App for the run's
  repository alone, with the permissions the workflow's `permissions:` grant (GitHub's
  restricted default, contents and packages read, when it names none), and it stops working
  when the run completes.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from app.sandbox.gitops import BareRepo
from app.sandbox.serializers import repo_json, user_json
from app.sandbox.state import Installation, Repo, SandboxState, User, WorkflowRun

WORKFLOWS_DIR = ".github/workflows/"
RUN_TOKEN_TTL_S = 24 * 3600.0  # GitHub's longest: a job's token expires when the job ends
# Every scope a workflow's `permissions:` may name (as GitHub spells them there).
SCOPES = (
    "actions", "attestations", "checks", "contents", "deployments", "discussions",
    "id-token", "issues", "models", "packages", "pages", "pull-requests",
    "repository-projects", "security-events", "statuses",
)  # fmt: skip
RESTRICTED_DEFAULT = {"contents": "read", "packages": "read"}
RUN_CONCLUSIONS = (
    "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required",
)  # fmt: skip


class DispatchRefused(Exception):
    """GitHub's refusal of a dispatch: `status` (404 or 422) and its message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ----- the workflow files -----------------------------------------------------------------------
def workflow_path(state: SandboxState, repo: Repo, workflow_id: str) -> str | None:
    """The path of the workflow `workflow_id` names (an id or a file name), registered from
    the default branch; None when there is none."""
    if workflow_id.isdigit():
        wanted = int(workflow_id)
        return next((path for path, ident in repo.workflows.items() if ident == wanted), None)
    if "/" in workflow_id or not workflow_id.endswith((".yml", ".yaml")):
        return None
    path = WORKFLOWS_DIR + workflow_id
    if BareRepo(repo.path).read_blob(f"refs/heads/{repo.default_branch}", path) is None:
        return None
    repo.workflows.setdefault(path, state.next_id())
    return path


def resolve_ref(repo: Repo, ref: str) -> tuple[str, str] | None:
    """(full ref, commit) for a branch or tag name, or a full `refs/...` name."""
    git = BareRepo(repo.path)
    candidates = [ref] if ref.startswith("refs/") else [f"refs/heads/{ref}", f"refs/tags/{ref}"]
    for full in candidates:
        sha = git.resolve(full)
        if sha is not None:
            return full, sha
    return None


def _document(repo: Repo, sha: str, path: str) -> dict[Any, Any]:
    raw = BareRepo(repo.path).read_blob(sha, path)
    if raw is None:
        raise DispatchRefused(404, "Not Found")
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, dict):
        raise DispatchRefused(422, f"Invalid workflow file {path}")
    return doc


def _triggers(doc: dict[Any, Any]) -> Any:
    # YAML 1.1 reads a bare `on:` key as the boolean true.
    return doc.get("on", doc.get(True))


def dispatch_inputs(doc: dict[Any, Any]) -> dict[str, Any]:
    """The `workflow_dispatch` trigger's declared inputs; refused when it has no such trigger."""
    on = _triggers(doc)
    if on == "workflow_dispatch" or (isinstance(on, list) and "workflow_dispatch" in on):
        return {}
    if isinstance(on, dict) and "workflow_dispatch" in on:
        trigger = on["workflow_dispatch"] or {}
        declared = trigger.get("inputs") if isinstance(trigger, dict) else None
        return dict(declared) if isinstance(declared, dict) else {}
    raise DispatchRefused(422, "Workflow does not have 'workflow_dispatch' trigger")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def checked_inputs(declared: dict[str, Any], given: dict[str, Any]) -> dict[str, str]:
    """The run's inputs as strings, defaults filled in, checked as GitHub checks them."""
    unexpected = sorted(name for name in given if name not in declared)
    if unexpected:
        raise DispatchRefused(422, f"Unexpected inputs provided: {json.dumps(unexpected)}")
    inputs: dict[str, str] = {}
    for name, spec in declared.items():
        spec = spec if isinstance(spec, dict) else {}
        if name in given:
            value = _text(given[name])
        elif "default" in spec:
            value = _text(spec["default"])
        elif spec.get("required"):
            raise DispatchRefused(422, f"Required input '{name}' not provided")
        else:
            value = ""
        options = spec.get("options")
        allowed = [_text(option) for option in options] if isinstance(options, list) else None
        if spec.get("type") == "choice" and allowed is not None and value not in allowed:
            why = f"Provided value '{value}' for input '{name}' not in the list of allowed values"
            raise DispatchRefused(422, why)
        inputs[name] = value
    return inputs


def token_permissions(doc: dict[Any, Any]) -> dict[str, str]:
    """What the run's GITHUB_TOKEN may do: the workflow's `permissions:` (a lone job's own
    replace them), as App permissions (`pull_requests`, ...), metadata read always."""
    granted: Any = doc.get("permissions")
    jobs = doc.get("jobs")
    if isinstance(jobs, dict) and len(jobs) == 1:
        only = next(iter(jobs.values()))
        if isinstance(only, dict) and "permissions" in only:
            granted = only["permissions"]
    if granted is None:
        levels = dict(RESTRICTED_DEFAULT)
    elif granted in ("read-all", "write-all"):
        levels = {scope: granted.removesuffix("-all") for scope in SCOPES}
    elif isinstance(granted, dict):
        levels = {
            str(scope): str(level)
            for scope, level in granted.items()
            if scope in SCOPES and level in ("read", "write")
        }
    else:
        levels = {}
    permissions = {scope.replace("-", "_"): level for scope, level in levels.items()}
    permissions.pop("id_token", None)  # not a REST permission
    return {**permissions, "metadata": "read"}


# ----- a dispatch starts a run ------------------------------------------------------------------
def dispatch(
    state: SandboxState, repo: Repo, path: str, ref: str, given: dict[str, Any], sender: User
) -> WorkflowRun:
    """Check the dispatch as GitHub does and record its queued run. Hold the lock."""
    found = resolve_ref(repo, ref)
    if found is None:
        raise DispatchRefused(422, f"No ref found for: {ref}")
    full_ref, sha = found
    doc = _document(repo, sha, path)
    inputs = checked_inputs(dispatch_inputs(doc), given)
    installation = Installation(
        state.next_id(),
        state.actions_app,
        repo.owner,
        [repo.id],
        state.now(),
        permissions=token_permissions(doc),
    )
    token = state.add_token("installation", installation=installation, ttl_s=RUN_TOKEN_TTL_S)
    now = state.now()
    name = doc.get("name")
    run = WorkflowRun(
        id=state.next_id(),
        repo_id=repo.id,
        workflow_id=repo.workflows.setdefault(path, state.next_id()),
        path=path,
        name=name if isinstance(name, str) and name else path,
        run_number=1 + sum(1 for r in repo.workflow_runs.values() if r.path == path),
        event="workflow_dispatch",
        ref=full_ref,
        head_branch=full_ref.removeprefix("refs/heads/").removeprefix("refs/tags/"),
        head_sha=sha,
        actor=sender,
        inputs=inputs,
        token=token.value,
        created_at=now,
        updated_at=now,
    )
    repo.workflow_runs[run.id] = run
    return run


def event_payload(state: SandboxState, repo: Repo, run: WorkflowRun) -> dict[str, Any]:
    """The `workflow_dispatch` event as the run reads it from GITHUB_EVENT_PATH."""
    return {
        "inputs": dict(run.inputs),
        "ref": run.ref,
        "repository": repo_json(state, repo),
        "sender": user_json(state, run.actor),
        "workflow": run.path,
    }


def run_env(state: SandboxState, repo: Repo, run: WorkflowRun) -> dict[str, str]:
    """The variables a runner sets for every step (GitHub's default environment)."""
    return {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": state.base_url,
        "GITHUB_SERVER_URL": state.base_url,
        "GITHUB_REPOSITORY": repo.full_name,
        "GITHUB_REPOSITORY_OWNER": repo.owner.login,
        "GITHUB_EVENT_NAME": run.event,
        "GITHUB_SHA": run.head_sha,
        "GITHUB_REF": run.ref,
        "GITHUB_REF_NAME": run.head_branch,
        "GITHUB_RUN_ID": str(run.id),
        "GITHUB_RUN_NUMBER": str(run.run_number),
        "GITHUB_RUN_ATTEMPT": str(run.run_attempt),
        "GITHUB_WORKFLOW": run.name,
        "GITHUB_WORKFLOW_REF": f"{repo.full_name}/{run.path}@{run.ref}",
        "GITHUB_ACTOR": run.actor.login,
        "GITHUB_TRIGGERING_ACTOR": run.actor.login,
        "GITHUB_TOKEN": run.token,
    }


def set_status(state: SandboxState, run: WorkflowRun, status: str, conclusion: str | None) -> None:
    """Move a run along; a completed run's token stops working. Hold the lock."""
    now = state.now()
    if status == "in_progress" and run.run_started_at is None:
        run.run_started_at = now
    if status == "completed":
        run.conclusion = conclusion or "success"
        run.run_started_at = run.run_started_at or now
        state.tokens.pop(run.token, None)
    run.status = status
    run.updated_at = now
