"""Local mode: the implementer on a repository on this machine, without GitHub (`ourobot cycle`).

The cycle starts at the repository's default branch (the branch `origin/HEAD` names, else
`main`, else `master`, else the branch checked out) and reads the config from `--config` or
`.github/ourobot.yml` at that branch. The repository's checked-out branch, index and working
tree are never touched: the work happens in a worktree of its own, on `ourobot/<ticket>`.
That input, and whether every model can be called, is read and checked first
(`local_start`), before anything here loads.

After green tests the review panel runs when the config names `review.models`; a rejection is
fixed for `budgets.fix_iterations` iterations, up to `review.rounds` times, then the ticket
needs a human. `--merge` asks on the terminal (default no) and merges `--no-ff` into the
default branch only after tests and review passed, with plumbing (a merge commit made from the
two trees, the branch ref moved only if it did not move meanwhile); a default branch that is
checked out is left alone, and the command to merge it by hand is printed instead.

Model calls go through the spend caps into the ledger of `OUROBOT_DATABASE_URL` (default: the
SQLite file in `OUROBOT_DATA_DIR`); a halt set with `ourobot halt` stops the cycle.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.controls.halt import HaltRegistry
from app.controls.ledger import Artifact, Ledger, Subject
from app.controls.pricing import PriceTable
from app.controls.spend_caps import Caps
from app.errors import UserError
from app.loop.caging import cycle_cage, suite_runner
from app.loop.cycle import CycleDeps, CycleRequest, CycleResult, record_cycle, run_cycle
from app.loop.local_start import LocalStart, git_text
from app.loop.metering import ModelGate
from app.loop.setup_phase import prepare as prepare_setup
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.settings import Settings
from app.store import Store
from app.workspace.git import GitError, git, repo_env
from app.workspace.suite import SuiteRunner
from app.workspace.worktree import Workspace, delete_branch
from reviewers.local_review import prepare
from reviewers.panel import PanelMember, ScopeRequest, run_panel, scope_review_for
from reviewers.providers import ProviderCredentials, build_client, build_fallback
from reviewers.result import PanelResult, ScopeReview
from reviewers.reviewer import DEFAULT_MAX_TOKENS
from reviewers.untrusted import secrets_from_env

Ask = Callable[[str], bool]


@dataclass(frozen=True)
class LocalRun:
    result: CycleResult
    default_branch: str
    merge_note: str | None = None


def run_local_cycle(
    start: LocalStart,
    *,
    config_file: Path | None,
    merge: bool,
    env: Mapping[str, str],
    settings: Settings,
    ask: Ask,
    progress: Callable[[str], None],
) -> LocalRun:
    """One cycle from its checked input (`local_start.start_local_cycle`); `UserError` for
    bad input (bubblewrap required but missing) before anything is spent."""
    config = start.config
    runner = suite_runner(config, cycle_cage(config, settings, server=False))
    store = Store.open(settings)
    try:
        store.migrate()
        return _run(start.repo, start.git_dir, start.branch, start.base_sha, start.ticket, config,
                    runner, store, config_file=config_file, merge=merge, env=env,
                    settings=settings, ask=ask, progress=progress)  # fmt: skip
    finally:
        store.close()


def _run(
    repo: Path,
    git_dir: Path,
    branch: str,
    base_sha: str,
    ticket: Ticket,
    config: RepoConfig,
    runner: SuiteRunner,
    store: Store,
    *,
    config_file: Path | None,
    merge: bool,
    env: Mapping[str, str],
    settings: Settings,
    ask: Ask,
    progress: Callable[[str], None],
) -> LocalRun:
    ledger = Ledger(store)
    halts = HaltRegistry(store)
    subject = Subject(
        f"cycle:{ticket.key}:{uuid.uuid4().hex[:12]}", repo=str(repo.resolve()), ticket=ticket.key
    )
    gate = ModelGate(
        ledger,
        PriceTable.from_settings(settings),
        Caps.for_repo(config, settings),
        subject,
        halt_check=lambda: halts.check(None),
    )
    credentials = ProviderCredentials.from_env(env)
    reviewer = None
    if "models" in config.review.model_fields_set:
        reviewer = panel_reviewer(repo, base_sha, ticket, config, config_file, env, gate)
    deps = CycleDeps(
        # The agent's conversation grows turn by turn: its stable prefix is cached.
        implementer=build_fallback(config.models.implementer, credentials, cache_prompt=True),
        planner=build_fallback(config.models.planner, credentials),
        gate=gate,
        runner=runner,
        reviewer=reviewer,
        secrets=(*credentials.secrets(), *secrets_from_env(env)),
        progress=progress,
        cancel=lambda: halts.active(None) is not None,
        setup=lambda ws: prepare_setup(
            ws,
            config,
            runner.cage,
            settings,
            f"local:{repo.resolve()}",
            cancel=lambda: halts.active(None) is not None,
        ),
    )
    progress(f"cycle {ticket.id} on {branch} ({base_sha[:12]}), sandbox: {runner.isolation}")
    request = CycleRequest(repo, base_sha, ticket, config)
    result = run_cycle(request, deps)
    note = None
    artifact: Artifact = "none"
    if merge and result.outcome == "ready" and result.branch is not None:
        note = merge_branch(git_dir, branch, result.branch, ticket, ask, progress)
        if note is None:
            result.outcome = "merged"
            artifact = "merged"
            progress(f"merged {result.branch} into {branch} (--no-ff)")
            delete_branch(git_dir, result.branch)
        else:
            progress(note)
    record_cycle(ledger, subject, result, artifact=artifact)
    return LocalRun(result, branch, note)


def panel_reviewer(
    repo: Path,
    base_sha: str,
    ticket: Ticket,
    config: RepoConfig,
    config_file: Path | None,
    env: Mapping[str, str],
    gate: ModelGate,
) -> Callable[[Workspace], PanelResult]:
    """The review panel on base..head of the branch, its calls through the cycle's gate."""
    credentials = ProviderCredentials.from_env(env)

    def review(workspace: Workspace) -> PanelResult:
        head = workspace.head()
        try:
            prepared = prepare(
                repo, base_sha, head, ticket=ticket.text, config_file=config_file, env=env
            )
        except UserError as exc:
            return _incomplete(config, base_sha, head, f"the change cannot be reviewed: {exc}")
        meter = gate.meter("reviewer", prepared.prompt.chars(), DEFAULT_MAX_TOKENS)
        members = [
            PanelMember(model.id, meter.wrap(build_client(model, credentials)))
            for model in config.review.models
        ]
        scope = None
        if prepared.scope_prompt is not None:
            scope = ScopeRequest(members[0], prepared.scope_prompt)
        return run_panel(
            members,
            prepared.prompt,
            quorum=config.review.quorum,
            timeout_s=config.review.timeout_s,
            base_sha=base_sha,
            head_sha=head,
            scope=scope_review_for(config.review.context),
            scope_request=scope,
            before_call=meter.before_call,
        )

    return review


def _incomplete(config: RepoConfig, base: str, head: str, why: str) -> PanelResult:
    return PanelResult(
        "failure", "incomplete", why, (), config.review.quorum, base, head,
        ScopeReview("skipped", why),
    )  # fmt: skip


def merge_branch(
    git_dir: Path,
    target: str,
    branch: str,
    ticket: Ticket,
    ask: Ask,
    progress: Callable[[str], None],
) -> str | None:
    """Merge `branch` into `target` with a merge commit, after asking; None when merged, else
    why not (declined, checked out, conflicts, moved)."""
    checked_out = _checked_out_in(git_dir, target)
    if checked_out is not None:
        return (
            f"not merged: {target} is checked out in {checked_out}, and ourobot never touches a "
            f"working tree; merge it there with: git merge --no-ff {branch}"
        )
    stat = git_text(git_dir, "diff", "--stat", f"refs/heads/{target}...refs/heads/{branch}")
    progress(f"{branch} against {target}:\n{stat.rstrip()}")
    if not ask(f"Merge {branch} into {target} (--no-ff)? [y/N] "):
        return f"not merged: declined; {branch} is kept"
    target_sha = git_text(git_dir, "rev-parse", f"refs/heads/{target}").strip()
    branch_sha = git_text(git_dir, "rev-parse", f"refs/heads/{branch}").strip()
    try:
        tree = git(["merge-tree", "--write-tree", target_sha, branch_sha], cwd=git_dir,
                   env=repo_env(git_dir)).stdout.split()[0]  # fmt: skip
    except GitError:
        return f"not merged: {branch} does not merge cleanly into {target}; {branch} is kept"
    title = ticket.title or ticket.id
    message = f"Merge {branch}: {title}"[:200]
    commit = git_text(
        git_dir, "commit-tree", tree, "-p", target_sha, "-p", branch_sha, "-m", message
    )
    try:
        git_text(git_dir, "update-ref", "-m", "ourobot cycle --merge", f"refs/heads/{target}",
             commit.strip(), target_sha)  # fmt: skip
    except UserError:
        return f"not merged: {target} moved while merging; {branch} is kept"
    return None


def _checked_out_in(git_dir: Path, branch: str) -> str | None:
    current = None
    for line in git_text(git_dir, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = line[len("worktree ") :]
        elif line == f"branch refs/heads/{branch}":
            return current
    return None
