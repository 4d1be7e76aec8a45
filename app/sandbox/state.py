"""The sandbox's in-memory world: users, Apps, installations, tokens, repositories and everything
that hangs off them (issues, pulls, comments, reviews, check runs, statuses, deliveries).

One re-entrant lock guards all of it: every HTTP handler, the webhook thread and the CI thread
take `SandboxState.lock` before they read or change anything here. Repository contents live in
bare git repositories under `data_dir`; everything else is lost on `reset()`, except the Apps
(their ids and keys stay stable for the life of the server).
"""

from __future__ import annotations

import secrets
import shutil
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

UserType = Literal["User", "Bot", "Organization"]

# Ordered weakest to strongest; "none" means no collaborator access at all.
LEVELS: tuple[str, ...] = ("none", "read", "triage", "write", "maintain", "admin")

DEFAULT_TOKEN_TTL_S = 3600.0
DEFAULT_RATE_LIMIT = 5000  # REST requests an hour per token, as on GitHub


def level_at_least(level: str, minimum: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(minimum)


def iso(ts: float) -> str:
    """GitHub's timestamp format: second precision, UTC, trailing Z."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class User:
    id: int
    login: str
    type: UserType
    created_at: float
    name: str | None = None

    @property
    def email(self) -> str:
        return f"{self.id}+{self.login}@users.noreply.github.com"


@dataclass
class AppRecord:
    id: int
    hook_id: int
    slug: str
    name: str
    client_id: str
    owner: User
    bot: User
    private_key_pem: str
    public_key_pem: str
    created_at: float
    events: tuple[str, ...]
    permissions: dict[str, str]


@dataclass
class Installation:
    id: int
    app: AppRecord
    account: User
    repo_ids: list[int]
    created_at: float
    # A workflow run's GITHUB_TOKEN is an installation of the Actions App on one repository
    # with the workflow's own `permissions:` (None: the App's).
    permissions: dict[str, str] | None = None


@dataclass
class Token:
    value: str
    kind: Literal["user", "installation"]
    user: User | None = None
    installation: Installation | None = None
    expires_at: float | None = None


@dataclass
class Label:
    id: int
    name: str
    color: str
    description: str | None
    default: bool = False


@dataclass
class Reaction:
    id: int
    user: User
    content: str
    created_at: float


@dataclass
class Comment:
    id: int
    issue_number: int
    user: User
    body: str
    created_at: float
    updated_at: float
    reactions: list[Reaction] = field(default_factory=list)
    app: AppRecord | None = None  # set when an App wrote it (performed_via_github_app)


@dataclass
class ReviewComment:
    id: int
    review_id: int
    user: User
    body: str
    path: str
    line: int
    side: str
    start_line: int | None
    commit_id: str
    diff_hunk: str
    created_at: float
    position: int  # the line's place in the file's diff, as GitHub counts it


@dataclass
class Review:
    id: int
    user: User
    body: str
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | DISMISSED | PENDING
    commit_id: str
    submitted_at: float | None
    comments: list[ReviewComment] = field(default_factory=list)


@dataclass
class Pull:
    id: int
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    draft: bool = False
    merged: bool = False
    merged_at: float | None = None
    merged_by: User | None = None
    merge_commit_sha: str | None = None
    maintainer_can_modify: bool = False
    reviews: list[Review] = field(default_factory=list)
    # GitHub answers `mergeable: null` while it computes it; this many GETs will say so.
    unknown_mergeable_reads: int = 0


@dataclass
class Issue:
    id: int
    number: int
    user: User
    title: str
    body: str | None
    created_at: float
    updated_at: float
    state: str = "open"
    state_reason: str | None = None
    closed_at: float | None = None
    closed_by: User | None = None
    labels: list[Label] = field(default_factory=list)
    comment_ids: list[int] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)
    pull: Pull | None = None


@dataclass
class CheckRun:
    id: int
    repo_id: int
    head_sha: str
    name: str
    app: AppRecord
    suite_id: int
    status: str
    conclusion: str | None
    started_at: float
    completed_at: float | None
    output: dict[str, Any]
    annotations: list[dict[str, Any]]
    details_url: str | None
    external_id: str | None


@dataclass
class CommitStatus:
    id: int
    repo_id: int
    sha: str
    state: str
    context: str
    description: str | None
    target_url: str | None
    creator: User
    created_at: float


@dataclass
class Protection:
    """A branch's protection, as far as merging is concerned: the required check names (check
    runs or statuses) and whether the head must be up to date with the branch ("strict")."""

    contexts: list[str]
    strict: bool = False


@dataclass
class MergeGroup:
    """One entry of a merge queue: the commit GitHub builds (base tip + the pull request) on a
    read-only `gh-readonly-queue/...` branch, for required checks to run on."""

    head_sha: str
    head_ref: str  # the full ref, refs/heads/gh-readonly-queue/<base>/pr-<n>-<base sha>
    base_sha: str
    base_ref: str  # the full ref of the base branch
    pull_number: int


@dataclass
class CiConfig:
    argv: list[str]
    timeout_s: float


@dataclass
class WorkflowCommand:
    """What the Actions runner stand-in runs for a dispatched run of one workflow (an argv,
    never a shell), with the environment a workflow would give it (its secrets and vars)."""

    argv: list[str]
    env: dict[str, str]
    timeout_s: float


@dataclass
class WorkflowRun:
    """One run of a workflow (`workflow_dispatch` is the only event that starts one here)."""

    id: int
    repo_id: int
    workflow_id: int
    path: str  # .github/workflows/<file>
    name: str  # the workflow's `name:`, else its path
    run_number: int
    event: str
    ref: str  # the full ref the run is for (refs/heads/main)
    head_branch: str
    head_sha: str
    actor: User
    inputs: dict[str, str]
    token: str  # the run's GITHUB_TOKEN, revoked when the run completes
    created_at: float
    updated_at: float
    status: str = "queued"  # queued | in_progress | completed
    conclusion: str | None = None
    run_started_at: float | None = None
    run_attempt: int = 1
    log: str = ""  # the end of what the runner stand-in's command printed


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    path: Path
    default_branch: str
    private: bool
    created_at: float
    pushed_at: float
    description: str | None = None
    permissions: dict[int, str] = field(default_factory=dict)  # user id -> level
    labels: dict[str, Label] = field(default_factory=dict)  # lower-case name -> label
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    statuses: list[CommitStatus] = field(default_factory=list)
    suites: dict[tuple[int, str], int] = field(default_factory=dict)  # (app id, sha) -> suite id
    protections: dict[str, Protection] = field(default_factory=dict)  # branch name -> protection
    merge_groups: list[MergeGroup] = field(default_factory=list)
    next_number: int = 1
    ci: CiConfig | None = None
    workflows: dict[str, int] = field(default_factory=dict)  # workflow path -> workflow id
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    workflow_commands: dict[str, WorkflowCommand] = field(default_factory=dict)  # by path

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"


@dataclass
class Attempt:
    """One delivery attempt of one webhook event, as `GET /app/hook/deliveries` lists it."""

    id: int
    guid: str
    event: str
    action: str | None
    installation_id: int | None
    repository_id: int | None
    body: bytes
    redelivery: bool
    created_at: float
    status_code: int = 0
    status: str = "pending"
    duration_s: float = 0.0
    delivered_at: float | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""


@dataclass
class WebhookConfig:
    url: str | None = None
    secret: str | None = None


def _new_key() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private_pem, public_pem


APP_EVENTS = (
    "check_run",
    "check_suite",
    "issue_comment",
    "issues",
    "merge_group",
    "pull_request",
    "pull_request_review",
    "push",
    "status",
)
APP_PERMISSIONS = {
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
    "statuses": "write",
}


class SandboxState:
    """Everything the sandbox knows, behind one lock. Handlers hold `lock` while they work."""

    def __init__(
        self,
        data_dir: Path,
        *,
        app_slug: str = "ourobot-sandbox",
        token_ttl_s: float = DEFAULT_TOKEN_TTL_S,
    ) -> None:
        self.lock = threading.RLock()
        self.data_dir = data_dir
        self.base_url = "http://127.0.0.1"
        self.token_ttl_s = self._initial_token_ttl_s = token_ttl_s
        self.rate_limit = DEFAULT_RATE_LIMIT
        self._next_id = 1000
        self._app_slug = app_slug
        self.app = self._make_app(app_slug, "Ourobot Sandbox", owner_login="sandbox-admin")
        # What `reset()` gives the App back after a test changed its permissions.
        self.app_permissions = dict(self.app.permissions)
        # The Actions stand-in posts its check runs as this second App, like GitHub Actions does.
        self.actions_app = self._make_app("github-actions", "GitHub Actions", owner_login="github")
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.installations: dict[int, Installation] = {}
        self.repos: dict[tuple[str, str], Repo] = {}
        self.webhook = WebhookConfig()
        self.attempts: list[Attempt] = []
        self._register_app_users()

    # ----- ids and time -------------------------------------------------------------------------
    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    @staticmethod
    def now() -> float:
        return time.time()

    # ----- lifecycle ----------------------------------------------------------------------------
    def _make_app(self, slug: str, name: str, *, owner_login: str) -> AppRecord:
        now = self.now()
        owner = User(self.next_id(), owner_login, "Organization", now)
        bot = User(self.next_id(), f"{slug}[bot]", "Bot", now)
        private_pem, public_pem = _new_key() if slug == self._app_slug else ("", "")
        return AppRecord(
            id=self.next_id(),
            hook_id=self.next_id(),
            slug=slug,
            name=name,
            client_id="Iv1." + secrets.token_hex(8),
            owner=owner,
            bot=bot,
            private_key_pem=private_pem,
            public_key_pem=public_pem,
            created_at=now,
            events=APP_EVENTS,
            permissions=dict(APP_PERMISSIONS),
        )

    def register_app(
        self, *, name: str, permissions: dict[str, str], events: tuple[str, ...]
    ) -> AppRecord:
        """Make the App the one a manifest describes: a new id, key, slug, permissions and
        events (the manifest flow, `app.sandbox.manifests`). Installations of the old App go."""
        slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") or "app"
        self._app_slug = slug
        app = self._make_app(slug, name, owner_login=self.app.owner.login)
        app.owner = self.app.owner
        app.permissions = {"metadata": "read", **permissions}
        app.events = events
        self.installations = {
            key: inst for key, inst in self.installations.items() if inst.app is not self.app
        }
        self.app = app
        self.app_permissions = dict(app.permissions)
        self.users[app.bot.login.lower()] = app.bot
        return app

    def _register_app_users(self) -> None:
        for app in (self.app, self.actions_app):
            for user in (app.owner, app.bot):
                self.users[user.login.lower()] = user

    def reset(self) -> None:
        """Forget every user, repo, token, delivery and setting; keep the Apps and their keys."""
        with self.lock:
            for repo in self.repos.values():
                shutil.rmtree(repo.path, ignore_errors=True)
            self.users.clear()
            self.tokens.clear()
            self.installations.clear()
            self.repos.clear()
            self.webhook = WebhookConfig()
            self.attempts.clear()
            self.token_ttl_s = self._initial_token_ttl_s
            self.rate_limit = DEFAULT_RATE_LIMIT
            self.app.permissions = dict(self.app_permissions)
            self._register_app_users()

    # ----- lookups ------------------------------------------------------------------------------
    def user(self, login: str) -> User | None:
        return self.users.get(login.lower())

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get((owner.lower(), name.lower()))

    def repo_by_id(self, repo_id: int) -> Repo | None:
        return next((r for r in self.repos.values() if r.id == repo_id), None)

    def installation_for(self, repo: Repo, app: AppRecord | None = None) -> Installation | None:
        app = app or self.app
        return next(
            (i for i in self.installations.values() if i.app is app and repo.id in i.repo_ids),
            None,
        )

    def permission(self, repo: Repo, user: User) -> str:
        """The user's collaborator level on the repo; the owner is admin."""
        if user.id == repo.owner.id:
            return "admin"
        return repo.permissions.get(user.id, "none")

    # ----- creation -----------------------------------------------------------------------------
    def add_user(self, login: str, user_type: UserType = "User") -> tuple[User, str]:
        user = User(self.next_id(), login, user_type, self.now())
        self.users[login.lower()] = user
        token = self.add_token("user", user=user)
        return user, token.value

    def add_token(
        self,
        kind: Literal["user", "installation"],
        *,
        user: User | None = None,
        installation: Installation | None = None,
        ttl_s: float | None = None,
    ) -> Token:
        prefix = "ghp_" if kind == "user" else "ghs_"
        expires = None if ttl_s is None else self.now() + ttl_s
        token = Token(prefix + secrets.token_hex(18), kind, user, installation, expires)
        self.tokens[token.value] = token
        return token
