"""The `ourobot/guards` check run: the guards engine on one pull request head, published on
exactly that head SHA.

The config comes from the base branch (fetched into the repository's mirror), never from the
head: a pull request cannot relax the gates that judge it. The base config also says whether
the pull request is in scope (`guards.apply_to`: `bot` = ourobot's own PRs, `all` = every PR).
Each push gets its own run on its own SHA; a verdict is never moved to another commit.

Fail closed: an invalid base config, a fetch that fails or a diff that cannot be evaluated
completes the check as a failure that says why, never as a success.

Idempotent: the effect `guards:<repo>:<head>:<config digest>` is recorded once done, and the
run carries the same key as its `external_id`, so a rerun finds the completed run on GitHub and
posts nothing, and a run left unfinished by a crash is updated rather than duplicated.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from githubkit import GitHub
from githubkit.utils import UNSET
from githubkit_schemas.latest.models import CheckRun
from githubkit_schemas.latest.types import (
    ReposOwnerRepoCheckRunsCheckRunIdPatchBodyPropOutputPropAnnotationsItemsType as AnnotationType,
)

from app.controls.halt import check_halt
from app.errors import ConfigError, UserError
from app.github_client import bot_login
from app.guards import GuardResult, check_repo, config_at
from app.guards.declared import Declared, from_messages, waive_static
from app.guards.repo import GitFailed
from app.guards.result import markdown_cell
from app.jobs.context import JobContext, once
from app.jobs.registry import job
from app.repo_config import RepoConfig
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.git import isolated_env, run_git
from app.workspace.mirror import MirrorError, RepoMirror

log = logging.getLogger(__name__)

CHECK_NAME = "ourobot/guards"
ANNOTATIONS_PER_REQUEST = 50  # GitHub's limit for one create or update
MAX_ANNOTATIONS = 500  # beyond this the summary's table and count speak for the rest
MAX_SUMMARY_CHARS = 60_000  # GitHub refuses more than 65,535
# Part of every effect key: a new way of judging must not be mistaken for an old verdict.
JUDGE_VERSION = "1"

Conclusion = Literal["success", "failure"]


@dataclass(frozen=True)
class PullHead:
    """The pull request and the one head commit this job judges (as the event named them)."""

    repo: str
    number: int
    head_sha: str
    base_ref: str
    head_ref: str

    @property
    def owner(self) -> str:
        return self.repo.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.repo.split("/", 1)[1]

    def describe(self) -> str:
        """One Markdown line naming the PR, its branches and the exact head SHA."""
        return (
            f"Pull request #{self.number} ({markdown_cell(self.head_ref)} into "
            f"{markdown_cell(self.base_ref)}), head commit `{self.head_sha}`."
        )


@dataclass(frozen=True)
class BaseConfig:
    """The base branch's config (or the one-line reason it is invalid), where it was read."""

    base_sha: str
    config: RepoConfig | None
    source: str
    error: str | None

    @property
    def digest(self) -> str:
        text = self.error if self.config is None else self.config.model_dump_json()
        kind = "invalid" if self.config is None else "config"
        return hashlib.sha256(f"{JUDGE_VERSION}:{kind}:{text}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Verdict:
    """What the check run will say."""

    conclusion: Conclusion
    title: str
    summary: str
    annotations: tuple[dict[str, Any], ...] = ()


class Unavailable(Exception):
    """The base branch or its config could not be read: scope and verdict are unknown."""


# ---- the job --------------------------------------------------------------------------------


@job("guards_check")
def guards_check(
    ctx: JobContext,
    *,
    installation_id: int,
    repo: str,
    number: int,
    head_sha: str,
    base_ref: str,
    head_ref: str,
    author_login: str,
    author_is_bot: bool,
) -> None:
    pull = PullHead(repo, number, head_sha, base_ref, head_ref)
    check_halt(ctx, installation_id)
    github = ctx.github.installation(installation_id)
    publisher = CheckRunPublisher(ctx, github, installation_id, pull)
    try:
        mirror = RepoMirror(ctx.settings.data_dir, repo)
        clone_url = github.rest.repos.get(pull.owner, pull.name).parsed_data.clone_url
        token = _git_token(ctx, installation_id, pull.name)
        base = read_base_config(mirror, clone_url, pull, token)
    except (Unavailable, MirrorError) as exc:
        # Scope is unknown without the base config, so fail closed on every PR. Not recorded
        # as done: a redelivery or a later push tries again and replaces this verdict.
        log.warning("guards on %s@%s: base unavailable: %s", repo, head_sha[:12], exc)
        publisher.publish(
            unavailable_verdict(pull, str(exc)),
            external_id=f"guards:{head_sha}:na",
            replace_completed=False,
        )
        return
    if base.config is not None and not in_scope(
        base.config, pull, author_login, author_is_bot, bot=bot_login(ctx.github)
    ):
        log.info("guards on %s#%d: not in scope (apply_to: bot)", repo, number)
        return
    with once(ctx, f"guards:{repo}:{head_sha}:{base.digest}") as first:
        if not first:
            return
        external_id = f"guards:{head_sha}:{base.digest}"
        run_id = publisher.start(external_id)
        if run_id is None:
            return  # GitHub already shows this verdict (the local record was lost)
        verdict = judge(mirror, clone_url, token, pull, base)
        publisher.finish(run_id, verdict, external_id)


def in_scope(
    config: RepoConfig, pull: PullHead, author_login: str, author_is_bot: bool, *, bot: str
) -> bool:
    """`apply_to: all` takes every PR; `bot` only ourobot's own: an `ourobot/` head branch
    opened by this App's bot user (a person naming a branch `ourobot/x` is not ourobot)."""
    if config.guards.apply_to == "all":
        return True
    return (
        author_is_bot
        and author_login.lower() == bot.lower()
        and pull.head_ref.startswith(BOT_BRANCH_PREFIX)
    )


def _git_token(ctx: JobContext, installation_id: int, repo_name: str) -> str:
    """A fresh installation token that can only read this one repository's contents (in the
    Action, the token it was given)."""
    if ctx.github.fixed_token is not None:
        return ctx.github.git_token(installation_id)
    app = ctx.github.app(installation_id=installation_id)  # keep a reference (weak namespaces)
    minted = app.rest.apps.create_installation_access_token(
        installation_id, repositories=[repo_name], permissions={"contents": "read"}
    )
    return minted.parsed_data.token


# ---- evaluation -----------------------------------------------------------------------------


def read_base_config(mirror: RepoMirror, clone_url: str, pull: PullHead, token: str) -> BaseConfig:
    """Fetch the base branch and read `.github/ourobot.yml` at its tip."""
    base_sha = mirror.fetch_branch(clone_url, pull.base_ref, token=token)
    try:
        config, source = config_at(mirror.path, base_sha)
    except ConfigError as exc:
        return BaseConfig(base_sha, None, f"{pull.base_ref}@{base_sha[:12]}", str(exc))
    except (UserError, GitFailed) as exc:
        raise Unavailable(f"cannot read the config at {base_sha[:12]}: {exc}") from None
    return BaseConfig(base_sha, config, source, None)


def judge(
    mirror: RepoMirror, clone_url: str, token: str, pull: PullHead, base: BaseConfig
) -> Verdict:
    """The verdict on `pull.head_sha`: the three-dot diff against the base, under its config."""
    if base.config is None:
        return config_error_verdict(pull, base)
    try:
        mirror.fetch_pull_head(clone_url, pull.number, pull.head_sha, token=token)
        result = check_repo(
            mirror.path, base.base_sha, pull.head_sha, base.config, config_source=base.source
        )
        declared = declared_in(mirror, base.base_sha, pull.head_sha)
    except (MirrorError, UserError, GitFailed) as exc:
        return unavailable_verdict(pull, str(exc))
    return result_verdict(pull, *disclose(result, declared))


def declared_in(mirror: RepoMirror, base_sha: str, head_sha: str) -> list[Declared]:
    """The test changes the implementer declared in its commits' trailers (base..head)."""
    proc = run_git(
        ["log", "--format=%B%x00", f"{base_sha}..{head_sha}", "--"],
        env=isolated_env({"GIT_DIR": str(mirror.path)}),
    )
    if proc.returncode != 0:
        raise GitFailed(f"git log failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return from_messages(proc.stdout.decode("utf-8", "replace").split("\0"))


def disclose(result: GuardResult, declared: list[Declared]) -> tuple[GuardResult, list[Declared]]:
    """A `test-tamper` finding on a test file the implementer declared it changes on purpose
    is listed for the reviewer instead of failing the check; everything else stands."""
    kept, shown = waive_static(result.violations, declared, lambda v: (v.rule, v.path, v.message))
    return replace(result, violations=tuple(kept)), shown


# ---- what the check says ----------------------------------------------------------------------


def result_verdict(
    pull: PullHead, result: GuardResult, declared: list[Declared] | None = None
) -> Verdict:
    annotations = result.annotations()
    heading, _, rest = result.summary_markdown().partition("\n")
    summary = f"{heading}\n\n{pull.describe()}\n{rest}"
    if declared:
        summary += (
            "\n### ⚠️ Changed test expectations (declared by the implementer)\n\n"
            "These test changes would fail `test-tamper`; the implementer declared each on "
            "purpose, with its reason. A person must check each against the ticket:\n\n"
            + "".join(f"- `{_code(d.test)}`: {_code(d.why)}\n" for d in declared[:50])
        )
    summary += "\nThe config was read from the base branch, never from the pull request.\n"
    if len(annotations) > MAX_ANNOTATIONS:
        summary += (
            f"\nOnly the first {MAX_ANNOTATIONS} of {len(annotations)} annotations are shown "
            "on the diff.\n"
        )
    if result.conclusion == "success":
        title = f"No violations on {pull.head_sha[:12]}"
    else:
        rules = ", ".join(dict.fromkeys(v.rule for v in result.violations))
        title = f"{len(result.violations)} violation(s): {rules}"
    return Verdict(result.conclusion, title, _clip(summary), tuple(annotations[:MAX_ANNOTATIONS]))


def config_error_verdict(pull: PullHead, base: BaseConfig) -> Verdict:
    summary = (
        f"{markdown_cell(base.error or 'invalid config')}\n\n"
        f"## ourobot/guards: failure\n\n{pull.describe()}\n\n"
        f"The repository config on the base branch {markdown_cell(pull.base_ref)} "
        f"(`{base.base_sha[:12]}`) is invalid, so no guard was evaluated and this check fails. "
        "Fix the config on the base branch; the next push re-runs the check.\n"
    )
    return Verdict("failure", "Invalid .github/ourobot.yml on the base branch", _clip(summary))


def unavailable_verdict(pull: PullHead, reason: str) -> Verdict:
    summary = (
        f"## ourobot/guards: failure\n\n{pull.describe()}\n\n"
        f"The change could not be evaluated: {markdown_cell(reason)}\n\n"
        "A change that cannot be evaluated fails; nothing was judged clean.\n"
    )
    return Verdict("failure", "The change could not be evaluated", _clip(summary))


def _code(text: str) -> str:
    return " ".join(text.replace("`", "'").split())[:300]


def _clip(text: str) -> str:
    if len(text) <= MAX_SUMMARY_CHARS:
        return text
    return text[:MAX_SUMMARY_CHARS] + "\n\n…(summary cut at GitHub's size limit)\n"


# ---- publishing -------------------------------------------------------------------------------


class CheckRunPublisher:
    """Creates or updates this App's `ourobot/guards` run on one head SHA; never a second one."""

    def __init__(
        self, ctx: JobContext, github: GitHub[Any], installation_id: int, pull: PullHead
    ) -> None:
        self.ctx = ctx
        self.github = github
        self.installation_id = installation_id
        self.pull = pull

    def publish(self, verdict: Verdict, *, external_id: str, replace_completed: bool) -> None:
        """Start (if needed) and finish in one go."""
        run_id = self.start(external_id, replace_completed=replace_completed)
        if run_id is not None:
            self.finish(run_id, verdict, external_id)

    def start(self, external_id: str, *, replace_completed: bool = True) -> int | None:
        """The run to write the verdict into, marked in progress. None when a completed run
        with this `external_id` is already there (the verdict is published), or when any
        completed run is and `replace_completed` is off: a failure to reach the repository
        must not overwrite a verdict that was really computed on this commit."""
        existing = self.find()
        if existing is not None and existing.status == "completed":
            if existing.external_id == external_id or not replace_completed:
                return None
            return int(existing.id)
        check_halt(self.ctx, self.installation_id)
        pull = self.pull
        title = f"Evaluating {pull.head_sha[:12]}"
        summary = f"## ourobot/guards: in progress\n\n{pull.describe()}\n"
        if existing is not None:
            self.github.rest.checks.update(
                pull.owner,
                pull.name,
                existing.id,
                status="in_progress",
                external_id=external_id,
                output={"title": title, "summary": summary},
            )
            return int(existing.id)
        created = self.github.rest.checks.create(
            pull.owner,
            pull.name,
            name=CHECK_NAME,
            head_sha=pull.head_sha,
            status="in_progress",
            external_id=external_id,
            output={"title": title, "summary": summary},
        )
        return int(created.parsed_data.id)

    def finish(self, run_id: int, verdict: Verdict, external_id: str) -> None:
        """Send the annotations in batches GitHub accepts, completing with the last one, so
        the run is complete only once every annotation is on it."""
        pull = self.pull
        batches = [
            [_annotation(raw) for raw in verdict.annotations[i : i + ANNOTATIONS_PER_REQUEST]]
            for i in range(0, len(verdict.annotations), ANNOTATIONS_PER_REQUEST)
        ] or [[]]
        for batch in batches[:-1]:
            check_halt(self.ctx, self.installation_id)
            self.github.rest.checks.update(
                pull.owner,
                pull.name,
                run_id,
                output={"title": verdict.title, "summary": verdict.summary, "annotations": batch},
            )
        check_halt(self.ctx, self.installation_id)
        self.github.rest.checks.update(
            pull.owner,
            pull.name,
            run_id,
            status="completed",
            conclusion=verdict.conclusion,
            completed_at=datetime.now(UTC),
            external_id=external_id,
            output={
                "title": verdict.title,
                "summary": verdict.summary,
                "annotations": batches[-1],
            },
        )

    def find(self) -> CheckRun | None:
        """This App's newest `ourobot/guards` run on exactly the head SHA, if any."""
        app_id = self.ctx.settings.app_id
        pull = self.pull
        listed = self.github.rest.checks.list_for_ref(
            pull.owner,
            pull.name,
            pull.head_sha,
            check_name=CHECK_NAME,
            filter_="all",
            per_page=100,
            app_id=app_id if app_id is not None else UNSET,
        ).parsed_data
        ours = [
            run
            for run in listed.check_runs
            if run.head_sha == pull.head_sha
            and run.name == CHECK_NAME
            and (app_id is None or (run.app is not None and run.app.id == app_id))
        ]
        return max(ours, key=lambda run: run.id, default=None)


def _annotation(raw: Mapping[str, Any]) -> AnnotationType:
    """A `GuardResult` annotation in the shape GitHub's API (and githubkit's types) take."""
    return {
        "path": str(raw["path"]),
        "start_line": int(raw["start_line"]),
        "end_line": int(raw["end_line"]),
        "annotation_level": "failure",
        "message": str(raw["message"]),
        "title": str(raw.get("title") or ""),
    }
