"""The `ourobot/gate` check run: read the pull request's snapshot, decide, say so on H, and act.

Every relevant event (a check run or suite completed, a status, a review submitted or
dismissed, a label, a push to the head or to the base) asks for an evaluation; evaluations of
one pull request run one at a time and a burst folds into at most one more (`run_serialized`).
Each evaluation reads the current head H and the snapshot, runs `app.gate.decide`, and keeps
one `ourobot/gate` run on H up to date with every condition and its reason (edited only when
what it says changes). Then `next_step`:

- `merge`: the pull request is ourobot's, or a writer asked with `/ourobot merge`, and every
  condition holds. The gate run says success first (branch protection may require it), then
  `merge_exact` merges H and nothing else; see `app.jobs.gate_merge` for what follows.
- `update-branch`: only `up-to-date` is missing on ourobot's own branch: it is brought up to
  date pinned to H, once per H; the new head is evaluated from scratch.
- `wait`: the gate run says what is missing.

Light mode never merges or pushes. The Action merges only when told to (`merge: true`).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any

from githubkit import GitHub

from app.controls.halt import check_halt
from app.errors import ConfigError
from app.gate import Decision, Step, decide, next_step
from app.gate.checks import GATE_CHECK
from app.gate.merge import MergeResult, update_own_branch
from app.gate.report import gate_output
from app.github_client import bot_login
from app.guards.result import markdown_cell
from app.jobs.context import EffectBusy, JobContext, effect_done, record_effect
from app.jobs.gate_merge import finish_merge, merge_now, merged_by_ourobot
from app.jobs.gate_snapshot import PullRef, base_config, build_state, read_pull
from app.jobs.registry import job
from app.jobs.serial import run_serialized
from app.repo_config import RepoConfig
from app.workspace.branches import BOT_BRANCH_PREFIX

log = logging.getLogger(__name__)


@dataclass
class Evaluation:
    """What one evaluation found and did (for replies and tests)."""

    head_sha: str | None = None
    decision: Decision | None = None
    step: Step = "wait"
    notes: list[str] = field(default_factory=list)
    merge: MergeResult | None = None
    skipped: str | None = None  # why nothing was evaluated (closed, merged ...)
    mergeable_unknown: bool = False  # GitHub had not computed it yet


class MergeabilityPending(EffectBusy):
    """GitHub computes `mergeable` after a push, and sends no event when it has: evaluate
    again shortly instead of waiting for an event that may never come."""


def gate_key(repo: str, number: int) -> str:
    return f"gate:{repo.lower()}#{number}"


# ---- jobs -----------------------------------------------------------------------------------


MERGEABLE_RECHECK_S = 5.0


@job("gate_evaluate")
def gate_evaluate(ctx: JobContext, *, installation_id: int | None, repo: str, number: int) -> None:
    result = evaluate_serialized(ctx, installation_id, repo, number)
    if result is not None and result.mergeable_unknown:
        # The job runner retries it (a bounded number of times) after this many seconds.
        raise MergeabilityPending(gate_key(repo, number), retry_after_s=MERGEABLE_RECHECK_S)


@job("gate_base_moved")
def gate_base_moved(
    ctx: JobContext, *, installation_id: int | None, repo: str, base_ref: str
) -> None:
    """The base branch moved: every open pull request into it is evaluated again (its
    `up-to-date` changed, and ourobot's own branches get updated)."""
    github = ctx.github.installation(installation_id)
    owner, name = repo.split("/", 1)
    pulls = github.rest.paginate(
        github.rest.pulls.list, owner=owner, repo=name, state="open", base=base_ref, per_page=100
    )
    for pull in list(pulls):
        evaluate_serialized(ctx, installation_id, repo, pull.number)


@job("gate_for_commit")
def gate_for_commit(
    ctx: JobContext, *, installation_id: int | None, repo: str, sha: str, branches: list[str]
) -> None:
    """A commit status changed on `sha`: evaluate the open pull requests whose head it is."""
    github = ctx.github.installation(installation_id)
    owner, name = repo.split("/", 1)
    for branch in branches:
        listed = github.rest.pulls.list(owner, name, state="open", head=f"{owner}:{branch}")
        for pull in listed.parsed_data:
            if pull.head.sha == sha:
                evaluate_serialized(ctx, installation_id, repo, pull.number)


def evaluate_serialized(
    ctx: JobContext,
    installation_id: int | None,
    repo: str,
    number: int,
    *,
    merge_requested_by: str | None = None,
) -> Evaluation | None:
    """Evaluate now, one at a time per pull request. An ordinary request folds into a run in
    progress (None: it will be covered); a merge request waits its turn (EffectBusy)."""
    done: list[Evaluation] = []

    def work() -> None:
        done.append(evaluate(ctx, installation_id, repo, number, merge_requested_by))

    run_serialized(ctx, gate_key(repo, number), work, fold=merge_requested_by is None)
    return done[-1] if done else None


# ---- one evaluation -------------------------------------------------------------------------


def evaluate(
    ctx: JobContext,
    installation_id: int | None,
    repo: str,
    number: int,
    merge_requested_by: str | None = None,
) -> Evaluation:
    check_halt(ctx, installation_id)
    github = ctx.github.installation(installation_id)
    owner, name = repo.split("/", 1)
    pull = PullRef(owner, name, number)
    data = read_pull(github, pull)
    bot = bot_login(ctx.github)
    if data.merged:
        if merged_by_ourobot(data, bot):
            finish_merge(ctx, github, installation_id, pull, data, None)
        return Evaluation(data.head.sha, skipped="the pull request is merged")
    if data.state != "open":
        return Evaluation(data.head.sha, skipped="the pull request is closed")
    head = data.head.sha
    try:
        config = base_config(github, pull, data.base.ref)
    except ConfigError as exc:
        _publish_invalid_config(github, pull, head, str(exc))
        return Evaluation(head, skipped=f"invalid config: {exc}")
    app_id = ctx.settings.app_id or _own_app_id(github, pull, head)
    state = build_state(github, pull, app_id=app_id, halted=False, config=config, data=data)
    decision = decide(state)
    result = Evaluation(head, decision, mergeable_unknown=state["pr"]["mergeable"] is None)
    result.step = next_step(
        decision, ourobot_pr=is_ourobot_pr(data, bot), merge_requested=bool(merge_requested_by)
    )
    _hold_back(ctx, config, result)
    if result.step == "merge":
        # Say success on H first: branch protection may require ourobot/gate itself.
        publish(github, pull, state, decision, result.notes, app_id)
        result.merge = merge_now(ctx, github, installation_id, pull, data, config, decision,
                                 requested_by=merge_requested_by)  # fmt: skip
        result.notes.append(_merge_note(result.merge))
    elif result.step == "update-branch":
        result.notes.append(_update_branch(ctx, github, installation_id, pull, head))
    publish(github, pull, state, decision, result.notes, app_id)
    log.info("gate %s#%d at %s: %s (%s)", repo, number, head[:12], decision.verdict, result.step)
    return result


def is_ourobot_pr(data: Any, bot: str) -> bool:
    """ourobot's own: an `ourobot/` head branch opened by this App's bot user (a person
    naming a branch `ourobot/x` is not ourobot)."""
    user = data.user
    return (
        user is not None
        and user.type == "Bot"
        and user.login.lower() == bot.lower()
        and data.head.ref.startswith(BOT_BRANCH_PREFIX)
    )


def _hold_back(ctx: JobContext, config: RepoConfig, result: Evaluation) -> None:
    if result.step == "wait":
        return
    if config.mode == "light":
        result.notes.append("Light mode: ourobot reviews only; it never merges or pushes.")
        result.step = "wait"
    elif ctx.github.fixed_token is not None and not ctx.settings.gate_merge:
        result.notes.append("The Action reports only: `merge: true` lets it merge.")
        result.step = "wait"


def _update_branch(
    ctx: JobContext, github: GitHub[Any], installation_id: int | None, pull: PullRef, head: str
) -> str:
    """Bring ourobot's branch up to date with its base, once per head."""
    key = f"gate-update:{pull.full_name.lower()}#{pull.number}:{head}"
    if effect_done(ctx, key):
        return "The branch update for this head was already requested."
    check_halt(ctx, installation_id)
    outcome = update_own_branch(github, pull.owner, pull.name, pull.number, head)
    if outcome.status == "updated":
        record_effect(ctx, key)
        return (
            "Only `up-to-date` was missing: ourobot merged the base branch into its own "
            "branch. The new head goes through every check again."
        )
    return f"ourobot could not update its branch: {markdown_cell(outcome.message)}"


def _merge_note(merge: MergeResult) -> str:
    if merge.status == "merged":
        if merge.tree_matches:
            return (
                f"Merged as `{merge.merged_sha}`; the merged tree is this head's tree "
                f"(`{merge.head_tree}`)."
            )
        return (
            f"**Alarm**: merged as `{merge.merged_sha}`, but its tree `{merge.merged_tree}` is "
            f"not this head's tree `{merge.head_tree}`."
        )
    return (
        f"GitHub did not merge this head ({merge.status}: {markdown_cell(merge.message)}); "
        "the gate evaluates again on the next event."
    )


# ---- the check run --------------------------------------------------------------------------


def _own_runs(state: dict[str, Any], app_id: int) -> list[dict[str, Any]]:
    head = state["pr"]["head_sha"]
    return sorted(
        (
            run
            for run in state["check_runs"]
            if run.get("name") == GATE_CHECK
            and run.get("app_id") == app_id
            and run.get("head_sha") == head
        ),
        key=lambda run: int(run["id"]),
    )


def publish(
    github: GitHub[Any],
    pull: PullRef,
    state: dict[str, Any],
    decision: Decision,
    notes: list[str],
    app_id: int,
) -> None:
    """One `ourobot/gate` run on H, edited only when what it says changes."""
    head = state["pr"]["head_sha"]
    out = gate_output(decision, number=pull.number, notes=tuple(notes))
    digest = hashlib.sha256(f"{out.conclusion}\n{out.title}\n{out.summary}".encode()).hexdigest()
    external_id = f"gate:{head}:{digest[:16]}"
    runs = _own_runs(state, app_id)
    if runs and runs[-1].get("external_id") == external_id:
        return
    if runs:
        github.rest.checks.update(
            pull.owner, pull.name, int(runs[-1]["id"]), status="completed",
            conclusion=out.conclusion, output={"title": out.title, "summary": out.summary},
            external_id=external_id,
        )  # fmt: skip
        runs[-1]["external_id"] = external_id
        return
    made = github.rest.checks.create(
        pull.owner, pull.name, name=GATE_CHECK, head_sha=head, status="completed",
        conclusion=out.conclusion, output={"title": out.title, "summary": out.summary},
        external_id=external_id,
    ).parsed_data  # fmt: skip
    state["check_runs"].append(
        {"id": made.id, "name": GATE_CHECK, "head_sha": head, "app_id": app_id,
         "status": "completed", "conclusion": out.conclusion, "external_id": external_id}
    )  # fmt: skip


def _own_app_id(github: GitHub[Any], pull: PullRef, head: str) -> int:
    """Without App credentials (the Action), ourobot's "own App" is whichever App its token
    posts as: found by posting the gate run, in progress, before the evaluation."""
    made = github.rest.checks.create(
        pull.owner, pull.name, name=GATE_CHECK, head_sha=head, status="in_progress",
        output={"title": "Evaluating", "summary": f"Evaluating head commit `{head}`."},
    ).parsed_data  # fmt: skip
    if made.app is None:
        raise RuntimeError("GitHub did not say which App created the gate's check run")
    return int(made.app.id)


def _publish_invalid_config(github: GitHub[Any], pull: PullRef, head: str, error: str) -> None:
    github.rest.checks.create(
        pull.owner, pull.name, name=GATE_CHECK, head_sha=head, status="completed",
        conclusion="failure",
        output={
            "title": "Invalid .github/ourobot.yml on the base branch",
            "summary": f"Nothing merges until the base branch's config is valid: "
            f"{markdown_cell(error)}",
        },
        external_id=f"gate:{head}:invalid-config",
    )  # fmt: skip
