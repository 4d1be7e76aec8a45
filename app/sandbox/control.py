"""The sandbox's setup API (`/_sandbox/*`, admin token required) and `SandboxControl`, the
Python client tests and the demo use to drive it: users, repositories, permissions, the App's
installations and webhook, CI commands, faults, counters and reset.

These routes are not GitHub's: they are how a test arranges the world GitHub would already hold.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.sandbox import api_checks, events, merge_queue, workflows
from app.sandbox.gitops import BareRepo, GitError
from app.sandbox.routing import Services
from app.sandbox.serializers import repo_json
from app.sandbox.state import (
    LEVELS,
    CiConfig,
    Installation,
    Label,
    Protection,
    Repo,
    User,
    UserType,
    WorkflowCommand,
)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_USER_TYPES = ("User", "Bot", "Organization")
DEFAULT_LABELS = (
    ("bug", "d73a4a", "Something isn't working"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("duplicate", "cfd3d7", "This issue or pull request already exists"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("invalid", "e4e669", "This doesn't seem right"),
    ("question", "d876e3", "Further information is requested"),
    ("wontfix", "ffffff", "This will not be worked on"),
)


class ControlError(Exception):
    """A setup request the sandbox refuses (bad name, unknown user, ...): a 4xx answer."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


class SandboxError(Exception):
    """Raised by `SandboxControl` when the sandbox refuses a setup request."""


# ----- server side --------------------------------------------------------------------------------
def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value) or value.endswith(".git"):
        raise ControlError(f"invalid {what}: {value!r}")
    return value


def _user(sb: Services, login: Any) -> User:
    user = sb.state.user(str(login))
    if user is None:
        raise ControlError(f"unknown user {login!r}", 404)
    return user


def _repo(sb: Services, owner: str, name: str) -> Repo:
    repo = sb.state.repo(owner, name)
    if repo is None:
        raise ControlError(f"unknown repository {owner}/{name}", 404)
    return repo


def create_user(sb: Services, body: dict[str, Any]) -> dict[str, Any]:
    user_type = body.get("type", "User")
    raw_login = body.get("login")
    # Apps' bot users are named `<slug>[bot]` on GitHub; only they may carry the suffix.
    if user_type == "Bot" and isinstance(raw_login, str) and raw_login.endswith("[bot]"):
        login = _name(raw_login.removesuffix("[bot]"), "login") + "[bot]"
    else:
        login = _name(raw_login, "login")
    if user_type not in _USER_TYPES:
        raise ControlError(f"invalid user type {user_type!r}; expected one of {_USER_TYPES}")
    if sb.state.user(login) is not None:
        raise ControlError(f"user {login!r} already exists")
    kind: UserType = user_type
    user, token = sb.state.add_user(login, kind)
    return {"login": user.login, "id": user.id, "type": user.type, "token": token}


def create_repo(sb: Services, body: dict[str, Any]) -> dict[str, Any]:
    state = sb.state
    owner = _user(sb, body.get("owner"))
    name = _name(body.get("name"), "repository name")
    if state.repo(owner.login, name) is not None:
        raise ControlError(f"repository {owner.login}/{name} already exists")
    seed = body.get("seed_dir")
    if seed is not None and not Path(seed).is_dir():
        raise ControlError(f"seed_dir is not a directory: {seed}")
    branch = str(body.get("default_branch") or "main")
    path = state.data_dir / "repos" / owner.login.lower() / f"{name.lower()}.git"
    try:
        BareRepo.create(path, Path(seed) if seed else None, default_branch=branch)
    except GitError as exc:
        raise ControlError(f"could not create the repository: {exc}") from exc
    now = state.now()
    repo = Repo(
        id=state.next_id(),
        owner=owner,
        name=name,
        path=path,
        default_branch=branch,
        private=bool(body.get("private", True)),
        created_at=now,
        pushed_at=now,
        description=body.get("description"),
    )
    for label_name, color, description in DEFAULT_LABELS:
        repo.labels[label_name] = Label(state.next_id(), label_name, color, description, True)
    state.repos[(owner.login.lower(), name.lower())] = repo
    head = BareRepo(path).resolve(f"refs/heads/{branch}")
    return {**_repo_summary(sb, repo), "head_sha": head}


def _repo_summary(sb: Services, repo: Repo) -> dict[str, Any]:
    full = repo_json(sb.state, repo)
    keys = ("id", "name", "full_name", "private", "default_branch", "clone_url", "html_url")
    return {key: full[key] for key in keys}


def set_permission(sb: Services, owner: str, name: str, login: str, body: dict[str, Any]) -> None:
    repo = _repo(sb, owner, name)
    user = _user(sb, login)
    level = body.get("level")
    if level not in LEVELS:
        raise ControlError(f"invalid level {level!r}; expected one of {LEVELS}")
    if user.id == repo.owner.id:
        raise ControlError("the owner of a repository is always admin")
    if level == "none":
        repo.permissions.pop(user.id, None)
    else:
        repo.permissions[user.id] = str(level)


def set_ci(sb: Services, owner: str, name: str, body: dict[str, Any]) -> None:
    repo = _repo(sb, owner, name)
    argv = body.get("argv")
    if argv is None:
        repo.ci = None
        return
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ControlError("argv must be a non-empty list of strings")
    timeout = float(body.get("timeout_s") or 300)
    repo.ci = CiConfig(list(argv), timeout)


def set_protection(sb: Services, owner: str, name: str, branch: str, body: dict[str, Any]) -> None:
    repo = _repo(sb, owner, name)
    contexts = body.get("contexts")
    if contexts is None:
        repo.protections.pop(branch, None)
        return
    if not isinstance(contexts, list) or not all(isinstance(c, str) and c for c in contexts):
        raise ControlError("contexts must be a list of check names, or null to unprotect")
    if BareRepo(repo.path).resolve(f"refs/heads/{branch}") is None:
        raise ControlError(f"no branch {branch!r} in {repo.full_name}", 404)
    repo.protections[branch] = Protection(list(contexts), strict=bool(body.get("strict")))


def actions_check_run(sb: Services, owner: str, name: str, body: dict[str, Any]) -> Any:
    """A check run posted by the GitHub Actions App, named as a workflow names it (anything)."""
    repo = _repo(sb, owner, name)
    head_sha, run_name = body.get("head_sha"), body.get("name")
    if not isinstance(run_name, str) or not run_name:
        raise ControlError("name must be a non-empty string")
    if not isinstance(head_sha, str) or BareRepo(repo.path).resolve(head_sha) != head_sha:
        raise ControlError(f"no commit {head_sha!r} in {repo.full_name}")
    conclusion = body.get("conclusion") or "success"
    if conclusion not in api_checks.CONCLUSIONS:
        raise ControlError(f"invalid conclusion {conclusion!r}")
    run = api_checks.record_check_run(
        sb, repo, sb.state.actions_app, name=run_name, head_sha=head_sha, conclusion=conclusion,
        output={"title": run_name, "summary": "posted by a workflow"},
    )  # fmt: skip
    return {"id": run.id, "app_id": run.app.id}


def set_workflow_command(sb: Services, owner: str, name: str, body: dict[str, Any]) -> None:
    """What the runner stand-in runs for dispatched runs of one workflow (None: nothing)."""
    repo = _repo(sb, owner, name)
    workflow = body.get("workflow")
    if not isinstance(workflow, str) or "/" in workflow or not workflow.endswith((".yml", ".yaml")):
        raise ControlError("workflow must be a file name under .github/workflows/ (x.yml)")
    path = workflows.WORKFLOWS_DIR + workflow
    argv, env = body.get("argv"), body.get("env") or {}
    if argv is None:
        repo.workflow_commands.pop(path, None)
        return
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ControlError("argv must be a non-empty list of strings")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ControlError("env must map names to strings")
    timeout = float(body.get("timeout_s") or 600)
    repo.workflow_commands[path] = WorkflowCommand(list(argv), dict(env), timeout)


def workflow_runs(sb: Services, owner: str, name: str) -> list[dict[str, Any]]:
    """Every run of the repository's workflows, oldest first, with what a test needs to play
    its runner: the inputs, the event file's payload, the run's token."""
    repo = _repo(sb, owner, name)
    return [
        {
            "id": run.id,
            "workflow": run.path,
            "ref": run.ref,
            "head_sha": run.head_sha,
            "event": run.event,
            "inputs": dict(run.inputs),
            "actor": run.actor.login,
            "status": run.status,
            "conclusion": run.conclusion,
            "token": run.token,
            "payload": workflows.event_payload(sb.state, repo, run),
            "env": workflows.run_env(sb.state, repo, run),
            "log": run.log,
        }
        for run in sorted(repo.workflow_runs.values(), key=lambda r: r.id)
    ]


def set_workflow_run(
    sb: Services, owner: str, name: str, run_id: int, body: dict[str, Any]
) -> None:
    """Move a run along by hand (a runner picking it up, or it ending)."""
    repo = _repo(sb, owner, name)
    run = repo.workflow_runs.get(run_id)
    if run is None:
        raise ControlError(f"no workflow run {run_id} in {repo.full_name}", 404)
    status, conclusion = body.get("status"), body.get("conclusion")
    if status not in ("queued", "in_progress", "completed"):
        raise ControlError(f"invalid status {status!r}")
    if conclusion is not None and conclusion not in workflows.RUN_CONCLUSIONS:
        raise ControlError(f"invalid conclusion {conclusion!r}")
    workflows.set_status(sb.state, run, str(status), conclusion)


def set_app_permissions(sb: Services, body: dict[str, Any]) -> None:
    """The App's permissions, as an owner who edits them (and every installation accepted);
    `reset()` gives back the ones the App was registered with."""
    permissions = body.get("permissions")
    if not isinstance(permissions, dict) or not all(
        isinstance(k, str) and v in ("read", "write", "admin") for k, v in permissions.items()
    ):
        raise ControlError("permissions must map names to read, write or admin")
    sb.state.app.permissions = {"metadata": "read", **permissions}


def mergeable_unknown(
    sb: Services, owner: str, name: str, number: int, body: dict[str, Any]
) -> None:
    repo = _repo(sb, owner, name)
    issue = repo.issues.get(number)
    reads = body.get("reads")
    if issue is None or issue.pull is None:
        raise ControlError(f"no pull request #{number} in {repo.full_name}", 404)
    if type(reads) is not int or reads < 0:
        raise ControlError("reads must be a whole number >= 0")
    issue.pull.unknown_mergeable_reads = reads


def enqueue(sb: Services, owner: str, name: str, number: int, body: dict[str, Any]) -> Any:
    repo = _repo(sb, owner, name)
    issue = repo.issues.get(number)
    if issue is None:
        raise ControlError(f"no pull request #{number} in {repo.full_name}", 404)
    sender = _user(sb, body["login"]) if body.get("login") else repo.owner
    try:
        group = merge_queue.enqueue(sb, repo, issue, sender)
    except merge_queue.QueueError as exc:
        raise ControlError(str(exc)) from exc
    return {
        "head_sha": group.head_sha,
        "head_ref": group.head_ref,
        "base_sha": group.base_sha,
        "base_ref": group.base_ref,
    }


def complete_merge_group(sb: Services, owner: str, name: str, sha: str) -> dict[str, Any]:
    repo = _repo(sb, owner, name)
    try:
        return {"merged": merge_queue.complete(sb, repo, sha, repo.owner)}
    except merge_queue.QueueError as exc:
        raise ControlError(str(exc), 404) from exc


def install_app(sb: Services, body: dict[str, Any]) -> dict[str, Any]:
    state = sb.state
    account = _user(sb, body.get("owner"))
    names = body.get("repos") or []
    repos = [_repo(sb, account.login, str(n)) for n in names]
    for repo in repos:
        if state.installation_for(repo) is not None:
            raise ControlError(f"the App is already installed on {repo.full_name}")
    existing = next((i for i in state.installations.values() if i.account.id == account.id), None)
    if existing is not None:
        existing.repo_ids.extend(r.id for r in repos)
        return {"id": existing.id}
    inst = Installation(state.next_id(), state.app, account, [r.id for r in repos], state.now())
    state.installations[inst.id] = inst
    events.installation_created(sb, inst, account)
    return {"id": inst.id}


def installation_token(sb: Services, installation_id: int, body: dict[str, Any]) -> dict[str, Any]:
    inst = sb.state.installations.get(installation_id)
    if inst is None:
        raise ControlError(f"unknown installation {installation_id}", 404)
    ttl = body.get("ttl_s")
    token = sb.state.add_token(
        "installation",
        installation=inst,
        ttl_s=float(ttl) if ttl is not None else sb.state.token_ttl_s,
    )
    return {"token": token.value, "expires_at": token.expires_at}


def app_info(sb: Services, key_path: Path | None) -> dict[str, Any]:
    app = sb.state.app
    return {
        "id": app.id,
        "slug": app.slug,
        "name": app.name,
        "client_id": app.client_id,
        "private_key_pem": app.private_key_pem,
        "private_key_path": str(key_path) if key_path else None,
        "bot_login": app.bot.login,
        "bot_id": app.bot.id,
        "webhook_secret": sb.state.webhook.secret,
        "actions_app_id": sb.state.actions_app.id,
    }


def set_webhook(sb: Services, body: dict[str, Any]) -> None:
    url, secret = body.get("url"), body.get("secret")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ControlError(f"invalid webhook url {url!r}")
    sb.state.webhook.url = url
    sb.state.webhook.secret = secret if isinstance(secret, str) and secret else None


def set_settings(sb: Services, body: dict[str, Any]) -> None:
    if "token_ttl_s" in body:
        ttl = float(body["token_ttl_s"])
        if ttl <= 0:
            raise ControlError("token_ttl_s must be positive")
        sb.state.token_ttl_s = ttl
    if "rate_limit" in body:
        limit = int(body["rate_limit"])
        if limit < 1:
            raise ControlError("rate_limit must be at least 1")
        sb.state.rate_limit = limit


def add_fault(sb: Services, body: dict[str, Any]) -> dict[str, Any]:
    allowed = {
        "kind",
        "method",
        "path",
        "token",
        "times",
        "rate",
        "retry_after_s",
        "delay_s",
        "reset_in_s",
    }
    unknown = set(body) - allowed
    if unknown:
        raise ControlError(f"unknown fault fields: {sorted(unknown)}")
    try:
        fault = sb.faults.add(
            str(body.get("kind")), **{k: v for k, v in body.items() if k != "kind"}
        )
    except (ValueError, TypeError, re.error) as exc:
        raise ControlError(str(exc)) from exc
    return fault.describe()


def deliveries(sb: Services) -> list[dict[str, Any]]:
    return [
        {
            "id": a.id,
            "guid": a.guid,
            "event": a.event,
            "action": a.action,
            "redelivery": a.redelivery,
            "status_code": a.status_code,
            "status": a.status,
            "delivered_at": a.delivered_at,  # epoch seconds when the receiver answered
            "payload": json.loads(a.body),
        }
        for a in sb.state.attempts
    ]


def reset(sb: Services) -> None:
    with sb.state.lock:
        sb.state.reset()
        sb.faults.reset()


# ----- HTTP plumbing ------------------------------------------------------------------------------
Op = Callable[[Request, dict[str, Any]], Any]


def control_routes(sb: Services, admin_token: str, key_path: Path | None) -> list[Route]:
    def guarded(op: Op) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            given = request.headers.get("authorization", "").partition(" ")[2]
            if not hmac.compare_digest(given.encode(), admin_token.encode()):
                return JSONResponse({"message": "admin token required"}, status_code=401)
            raw = await request.body()
            try:
                body = json.loads(raw) if raw.strip() else {}
            except ValueError:
                return JSONResponse({"message": "body is not JSON"}, status_code=400)
            if not isinstance(body, dict):
                return JSONResponse({"message": "body must be an object"}, status_code=400)

            def run() -> Any:
                with sb.state.lock:
                    return op(request, body)

            try:
                result = await run_in_threadpool(run)
            except ControlError as exc:
                return JSONResponse({"message": str(exc)}, status_code=exc.status)
            return JSONResponse(result if result is not None else {})

        return endpoint

    async def wait_endpoint(request: Request) -> Response:
        given = request.headers.get("authorization", "").partition(" ")[2]
        if not hmac.compare_digest(given.encode(), admin_token.encode()):
            return JSONResponse({"message": "admin token required"}, status_code=401)
        raw = await request.body()
        timeout = float((json.loads(raw) if raw.strip() else {}).get("timeout_s", 30))

        def block() -> bool:
            return (
                sb.ci.wait_idle(timeout)
                and sb.runner.wait_idle(timeout)
                and sb.hooks.wait_idle(timeout)
            )

        # Waiting must not hold the state lock: the threads it waits for need it.
        return JSONResponse({"idle": await run_in_threadpool(block)})

    p = "/_sandbox"

    def repo_args(request: Request) -> tuple[str, str]:
        return request.path_params["owner"], request.path_params["repo"]

    return [
        Route(f"{p}/users", guarded(lambda r, b: create_user(sb, b)), methods=["POST"]),
        Route(f"{p}/repos", guarded(lambda r, b: create_repo(sb, b)), methods=["POST"]),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/permissions/{{login}}",
            guarded(lambda r, b: set_permission(sb, *repo_args(r), r.path_params["login"], b)),
            methods=["PUT"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/ci",
            guarded(lambda r, b: set_ci(sb, *repo_args(r), b)),
            methods=["PUT"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/branches/{{branch:path}}/protection",
            guarded(lambda r, b: set_protection(sb, *repo_args(r), r.path_params["branch"], b)),
            methods=["PUT"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/actions-check-runs",
            guarded(lambda r, b: actions_check_run(sb, *repo_args(r), b)),
            methods=["POST"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/workflow-command",
            guarded(lambda r, b: set_workflow_command(sb, *repo_args(r), b)),
            methods=["PUT"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/workflow-runs",
            guarded(lambda r, b: workflow_runs(sb, *repo_args(r))),
            methods=["GET"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/workflow-runs/{{run_id:int}}",
            guarded(lambda r, b: set_workflow_run(sb, *repo_args(r), r.path_params["run_id"], b)),
            methods=["PUT"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/pulls/{{number:int}}/mergeable-unknown",
            guarded(lambda r, b: mergeable_unknown(sb, *repo_args(r), r.path_params["number"], b)),
            methods=["PUT"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/pulls/{{number:int}}/enqueue",
            guarded(lambda r, b: enqueue(sb, *repo_args(r), r.path_params["number"], b)),
            methods=["POST"],
        ),
        Route(
            f"{p}/repos/{{owner}}/{{repo}}/merge-groups/{{sha}}/complete",
            guarded(lambda r, b: complete_merge_group(sb, *repo_args(r), r.path_params["sha"])),
            methods=["POST"],
        ),
        Route(f"{p}/installations", guarded(lambda r, b: install_app(sb, b)), methods=["POST"]),
        Route(
            f"{p}/installations/{{installation_id:int}}/token",
            guarded(lambda r, b: installation_token(sb, r.path_params["installation_id"], b)),
            methods=["POST"],
        ),
        Route(f"{p}/app", guarded(lambda r, b: app_info(sb, key_path)), methods=["GET"]),
        Route(
            f"{p}/app/permissions",
            guarded(lambda r, b: set_app_permissions(sb, b)),
            methods=["PUT"],
        ),
        Route(f"{p}/webhook", guarded(lambda r, b: set_webhook(sb, b)), methods=["PUT"]),
        Route(f"{p}/settings", guarded(lambda r, b: set_settings(sb, b)), methods=["PUT"]),
        Route(f"{p}/faults", guarded(lambda r, b: add_fault(sb, b)), methods=["POST"]),
        Route(f"{p}/faults", guarded(lambda r, b: sb.faults.clear_faults()), methods=["DELETE"]),
        Route(f"{p}/stats", guarded(lambda r, b: sb.faults.snapshot()), methods=["GET"]),
        Route(f"{p}/deliveries", guarded(lambda r, b: deliveries(sb)), methods=["GET"]),
        Route(f"{p}/reset", guarded(lambda r, b: reset(sb)), methods=["POST"]),
        Route(f"{p}/wait", wait_endpoint, methods=["POST"]),
    ]


# ----- client side --------------------------------------------------------------------------------
class SandboxControl:
    """A client for the `/_sandbox/*` API of a running sandbox."""

    def __init__(self, url: str, admin_token: str, *, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._client = httpx.Client(
            base_url=self.url + "/_sandbox",
            headers={"Authorization": f"Bearer {admin_token}"},
            timeout=timeout_s,
            trust_env=False,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> SandboxControl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self._client.request(method, path, json=body)
        if response.status_code >= 400:
            try:
                message = response.json().get("message", response.text)
            except ValueError:
                message = response.text
            raise SandboxError(f"{method} /_sandbox{path}: {response.status_code} {message}")
        return response.json()

    # users, repos, permissions
    def create_user(self, login: str, *, type: str = "User") -> str:
        """Create a user (or Bot, or Organization) and return its personal token."""
        return str(self._call("POST", "/users", {"login": login, "type": type})["token"])

    def create_repo(
        self,
        owner: str,
        name: str,
        seed_dir: Path | str | None = None,
        *,
        default_branch: str = "main",
        private: bool = True,
        description: str | None = None,
    ) -> dict[str, Any]:
        """A repo seeded from `seed_dir` (one commit): id, full_name, clone_url, head_sha, ..."""
        body = {
            "owner": owner,
            "name": name,
            "seed_dir": str(seed_dir) if seed_dir is not None else None,
            "default_branch": default_branch,
            "private": private,
            "description": description,
        }
        result: dict[str, Any] = self._call("POST", "/repos", body)
        return result

    def set_permission(self, owner: str, repo: str, login: str, level: str) -> None:
        """level: none|read|triage|write|maintain|admin ("none" removes collaborator access)."""
        self._call("PUT", f"/repos/{owner}/{repo}/permissions/{login}", {"level": level})

    def set_ci_command(
        self, owner: str, repo: str, argv: list[str] | None, *, timeout_s: float = 300
    ) -> None:
        """Run `argv` as the `ci/test` check on every PR head; None turns CI off."""
        self._call("PUT", f"/repos/{owner}/{repo}/ci", {"argv": argv, "timeout_s": timeout_s})

    def set_branch_protection(
        self,
        owner: str,
        repo: str,
        branch: str,
        contexts: list[str] | None,
        *,
        strict: bool = False,
    ) -> None:
        """Require these checks (check runs or statuses) before a merge into `branch`; strict:
        the head must contain the branch's tip. None removes the protection."""
        body = {"contexts": contexts, "strict": strict}
        self._call("PUT", f"/repos/{owner}/{repo}/branches/{branch}/protection", body)

    def actions_check_run(
        self, owner: str, repo: str, head_sha: str, name: str, *, conclusion: str = "success"
    ) -> dict[str, Any]:
        """Post a check run as the GitHub Actions App, with any name (a workflow can)."""
        body = {"head_sha": head_sha, "name": name, "conclusion": conclusion}
        path = f"/repos/{owner}/{repo}/actions-check-runs"
        result: dict[str, Any] = self._call("POST", path, body)
        return result

    def set_workflow_command(
        self,
        owner: str,
        repo: str,
        workflow: str,
        argv: list[str] | None,
        *,
        env: dict[str, str] | None = None,
        timeout_s: float = 600,
    ) -> None:
        """Run `argv` (with `env` besides the runner's own variables) for every dispatched run
        of `.github/workflows/<workflow>`; None: its runs stay queued."""
        body = {"workflow": workflow, "argv": argv, "env": env or {}, "timeout_s": timeout_s}
        self._call("PUT", f"/repos/{owner}/{repo}/workflow-command", body)

    def workflow_runs(self, owner: str, repo: str) -> list[dict[str, Any]]:
        """Every workflow run, oldest first: id, workflow, ref, head_sha, inputs, status,
        conclusion, token (its GITHUB_TOKEN), payload (its event file), env, log."""
        result: list[dict[str, Any]] = self._call("GET", f"/repos/{owner}/{repo}/workflow-runs")
        return result

    def set_workflow_run(
        self, owner: str, repo: str, run_id: int, status: str, conclusion: str | None = None
    ) -> None:
        """Move a run to `status` (queued, in_progress, completed with `conclusion`)."""
        body = {"status": status, "conclusion": conclusion}
        self._call("PUT", f"/repos/{owner}/{repo}/workflow-runs/{run_id}", body)

    def set_mergeable_unknown(self, owner: str, repo: str, number: int, reads: int) -> None:
        """The next `reads` GETs of the pull request say `mergeable: null` (GitHub computing)."""
        path = f"/repos/{owner}/{repo}/pulls/{number}/mergeable-unknown"
        self._call("PUT", path, {"reads": reads})

    def enqueue(
        self, owner: str, repo: str, number: int, *, login: str | None = None
    ) -> dict[str, Any]:
        """Put a pull request into the merge queue: its merge group's head_sha, head_ref,
        base_sha and base_ref; `merge_group.checks_requested` is on its way."""
        result: dict[str, Any] = self._call(
            "POST", f"/repos/{owner}/{repo}/pulls/{number}/enqueue", {"login": login}
        )
        return result

    def complete_merge_group(self, owner: str, repo: str, head_sha: str) -> bool:
        """Let the queue finish a group: merged when its required checks are green."""
        path = f"/repos/{owner}/{repo}/merge-groups/{head_sha}/complete"
        return bool(self._call("POST", path)["merged"])

    # the App
    def install_app(self, owner: str, repos: list[str]) -> int:
        return int(self._call("POST", "/installations", {"owner": owner, "repos": repos})["id"])

    def installation_token(self, installation_id: int, *, ttl_s: float | None = None) -> str:
        body = {"ttl_s": ttl_s}
        return str(self._call("POST", f"/installations/{installation_id}/token", body)["token"])

    def app_info(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/app")
        return result

    def set_app_permissions(self, permissions: dict[str, str]) -> None:
        """The App's permissions from now on (metadata read is always there); `reset()`
        restores the ones it was registered with."""
        self._call("PUT", "/app/permissions", {"permissions": permissions})

    def set_webhook(self, url: str | None, secret: str | None = None) -> None:
        self._call("PUT", "/webhook", {"url": url, "secret": secret})

    def set_token_ttl(self, seconds: float) -> None:
        self._call("PUT", "/settings", {"token_ttl_s": seconds})

    def set_rate_limit(self, per_hour: int) -> None:
        """The primary rate limit of every token (GitHub's 5,000 by default; reset restores it)."""
        self._call("PUT", "/settings", {"rate_limit": per_hour})

    # faults and accounting
    def add_fault(
        self,
        kind: str,
        *,
        method: str = "*",
        path: str = "",
        token: str | None = None,
        times: int | None = 1,
        rate: float | None = None,
        retry_after_s: int = 1,
        delay_s: float = 0.0,
        reset_in_s: int = 2,
    ) -> dict[str, Any]:
        """kind: 502 | secondary | 429 | primary | latency; `path` is a regex searched in the
        request path; one-shot by default (`times`), or random with probability `rate`."""
        body = {
            "kind": kind,
            "method": method,
            "path": path,
            "token": token,
            "times": times,
            "rate": rate,
            "retry_after_s": retry_after_s,
            "delay_s": delay_s,
            "reset_in_s": reset_in_s,
        }
        result: dict[str, Any] = self._call("POST", "/faults", body)
        return result

    def clear_faults(self) -> None:
        self._call("DELETE", "/faults")

    def stats(self) -> dict[str, Any]:
        """{"total", "routes": {"GET /repos/{owner}/{repo}": n}, "identities", "faults", "log"}"""
        result: dict[str, Any] = self._call("GET", "/stats")
        return result

    def deliveries(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("GET", "/deliveries")
        return result

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Wait until queued CI runs and webhook deliveries are done."""
        return bool(self._call("POST", "/wait", {"timeout_s": timeout_s})["idle"])

    def reset(self) -> None:
        self._call("POST", "/reset")
