"""`review_check`: the review panel on a pull request's head, published on that head.

One run = the panel of `review.models` (config from the base branch) on the PR's diff, then
one PR review (COMMENT, or REQUEST_CHANGES for a rejection; never APPROVE: a maintainer's
approval is a separate gate) with findings inline on the changed lines and a summary per model,
and the `ourobot/review` check run on the reviewed head SHA with a per-model verdict table.

Which pull requests: with `guards.apply_to: bot` (the default) only ourobot's own (opened by
the App, or from an `ourobot/...` branch of the same repository); with `all`, every PR. The
one switch decides what ourobot judges, guards and review alike. `/ourobot review` from a
person with write access reviews any PR. Others get nothing posted (a "skipped" ledger row):
a neutral or skipped check would satisfy a required check without a review.

Once per head and panel: the run key is (repo, head SHA, digest of the `review` config); a
redelivered or repeated trigger finds its effect recorded, its check run (`external_id`) or its
review (hidden marker) and posts nothing new. `/ourobot review` reruns only a run whose evidence
was incomplete (timeouts, errors, budget); a decisive verdict is not re-rolled.

A push during the review: the check run was created on the reviewed SHA and stays there; the
review is posted on that commit as a COMMENT (a stale REQUEST_CHANGES would block the new head).
The new head's own `synchronize` event starts its own run. A job that starts after its head was
already replaced does nothing.

Cheap first: where the guards apply (the guards job's own scope rule), the panel is asked
about a head only once `ourobot/guards` passed on it. Until the guards finish the job waits
(the guards check completing triggers it again); when they failed, `ourobot/review` concludes
"Not reviewed: the guards failed on <sha>" as a failure, and no model is called.

Never pay twice: a head whose reviewed inputs have the fingerprint of an earlier decisive
verdict on the pull request gets that verdict on its own SHA (`app.jobs.review_fingerprint`).

Rounds: each panel run is a round of the pull request; the open obligations of the last one
are in the prompt and the round's rules decide what blocks (`app.jobs.review_rounds`).

Spend: every call is admitted by the spend caps first and recorded in the ledger after
(`app.controls.spend_caps`); a refused call makes the check fail with "budget exhausted". The
summary and the ledger show what this head and the pull request cost, and what was saved.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from githubkit import GitHub

from app.controls.halt import check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.controls.pricing import PriceTable, usd
from app.controls.spend_caps import Caps, SpendMeter
from app.errors import UserError
from app.github_client import bot_login
from app.jobs import review_github as gh
from app.jobs.context import JobContext, once
from app.jobs.guards_check import PullHead, in_scope
from app.jobs.registry import job
from app.jobs.review_fingerprint import changed_since, fingerprint, input_digests, reusable
from app.jobs.review_inputs import (
    Fetched,
    PullInfo,
    build_prompt,
    config_at_base,
    constitution_at_base,
    credentials,
    fetch,
    read_pull,
    read_pull_change,
    ticket_for,
    worker_secrets,
)
from app.jobs.review_publish import (
    Publication,
    StoredResult,
    build_publication,
    latest_result,
    load_publication,
    not_reviewed,
    pull_results,
    reused,
    save_publication,
    unreviewable,
    with_spend,
)
from app.jobs.review_rounds import round_rules, spend_section
from app.repo_config import RepoConfig
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.mirror import MirrorError
from reviewers.panel import PanelMember, ScopeRequest, run_panel, scope_review_for
from reviewers.repo_map import build_scope_prompt
from reviewers.result import ScopeReview
from reviewers.reviewer import DEFAULT_MAX_TOKENS

log = logging.getLogger(__name__)


Trigger = Literal["pull_request", "command", "action", "guards"]
Status = Literal["published", "already", "skipped", "waiting"]


class FetchFailed(ConnectionError):
    """git could not bring the commits into the mirror; the task layer retries with backoff."""


@dataclass(frozen=True)
class ReviewRequest:
    installation_id: int | None
    repo: str
    number: int
    # The head the trigger was about; None = the PR's head now (a command).
    head_sha: str | None = None
    trigger: Trigger = "pull_request"
    comment_id: int | None = None
    # The PR's title and body as the triggering event carried them (trigger-time text).
    title: str | None = None
    body: str | None = None


@dataclass(frozen=True)
class ReviewOutcome:
    status: Status
    detail: str  # one sentence, for a reply or the log
    head_sha: str | None = None
    conclusion: str | None = None
    reason: str | None = None
    run_key: str | None = None  # the run whose publication was posted or found


@job("review_check")
def review_check(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    head_sha: str,
    trigger: str = "pull_request",
    title: str | None = None,
    body: str | None = None,
) -> None:
    request = ReviewRequest(
        installation_id,
        repo,
        number,
        head_sha,
        "action" if trigger == "action" else "guards" if trigger == "guards" else "pull_request",
        title=title,
        body=body,
    )
    outcome = run_review(ctx, request)
    log.info("review %s#%d at %s: %s", repo, number, head_sha[:12], outcome.detail)


def review_reply(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    comment_id: int,
    is_pull_request: bool,
) -> str:
    """`/ourobot review` from someone allowed to ask: run (or find) the review of the pull
    request's head; the reply's text. Runs inside the command's job, so it waits for the
    panel (the check run shows it is under way meanwhile)."""
    if not is_pull_request:
        return "`/ourobot review` reviews a pull request, and this is an issue. Nothing was done."
    outcome = run_review(
        ctx,
        ReviewRequest(installation_id, repo, number, trigger="command", comment_id=comment_id),
    )
    return outcome.detail


def run_review(ctx: JobContext, request: ReviewRequest) -> ReviewOutcome:
    """Review the PR's head and publish the result, unless there is nothing to do."""
    check_halt(ctx, request.installation_id)
    github = ctx.github.installation(request.installation_id)
    pull = read_pull(github, request.repo, request.number)
    if pull.state != "open":
        return ReviewOutcome("skipped", "The pull request is closed: nothing was reviewed.")
    head_sha = request.head_sha or pull.head_sha
    if pull.head_sha != head_sha:
        return ReviewOutcome(
            "skipped",
            f"`{head_sha[:12]}` is no longer the head (now `{pull.head_sha[:12]}`); "
            "the new head gets its own review.",
            head_sha,
        )
    token = ctx.github.git_token(request.installation_id)
    try:
        fetched = fetch(ctx.settings, pull, head_sha, token)
    except MirrorError as exc:
        _record_infra(ctx, request, head_sha, str(exc))
        raise FetchFailed(str(exc)) from exc
    try:
        config = config_at_base(fetched)
    except UserError as exc:  # an invalid config, or a config file that is not a plain file
        key = f"review:{request.repo}:{head_sha}:config-{_digest(str(exc))}"
        problem = f"The repository's config at the base branch is invalid: {exc}"
        return _publish_once(
            ctx,
            github,
            request,
            head_sha,
            key,
            panel="invalid-config",
            models=[],
            produce=lambda: unreviewable(key, head_sha, fetched.base_sha, problem),
            pull=pull,
        )
    bot = bot_login(ctx.github)
    if request.trigger != "command" and not applies(config, pull, bot):
        _record_skip(ctx, request, head_sha)
        return ReviewOutcome(
            "skipped",
            "guards.apply_to is `bot` and this is not ourobot's pull request: not reviewed.",
            head_sha,
        )
    panel = panel_digest(config)
    run_key = f"review:{request.repo}:{head_sha}:{panel}"
    models = [model.id for model in config.review.models]
    # Where the guards apply, they run first. The Action orders its own jobs (`needs:`).
    if request.trigger != "action" and guards_apply(config, pull, bot):
        guards = gh.guards_run(github, request.repo, head_sha, app_id=ctx.settings.app_id)
        if guards is None or guards.status != "completed":
            return ReviewOutcome(
                "waiting",
                f"`ourobot/guards` has not finished on `{head_sha[:12]}`: the panel reviews "
                "this head once the guards pass on it.",
                head_sha,
            )
        if guards.conclusion != "success":
            key = f"{run_key}:guards-failed.{guards.id}"
            said = f"{guards.conclusion}, {guards.output.title or 'no title'}"
            return _publish_once(
                ctx,
                github,
                request,
                head_sha,
                key,
                panel=panel,
                models=[],
                produce=lambda: _not_reviewed(ctx, request, key, head_sha, fetched, said, config),
                pull=pull,
            )
    if request.trigger == "command":
        decided = _decided(ctx, request.repo, head_sha, panel)
        if decided is not None:
            return decided
        if latest_result(ctx.store, repo=request.repo, head_sha=head_sha, panel=panel):
            run_key += f":rerun.{request.comment_id}"
    return _publish_once(
        ctx,
        github,
        request,
        head_sha,
        run_key,
        panel=panel,
        models=models,
        produce=lambda: _run_panel(
            ctx, github, request, pull, fetched, config, head_sha, run_key, token
        ),
        pull=pull,
    )


def applies(config: RepoConfig, pull: PullInfo, bot: str) -> bool:
    """Whether a pull_request event gets a review: every PR, or only ourobot's own."""
    if config.guards.apply_to == "all":
        return True
    same_repo = pull.head_repo == pull.repo
    return pull.author == bot or (same_repo and pull.head_ref.startswith(BOT_BRANCH_PREFIX))


def guards_apply(config: RepoConfig, pull: PullInfo, bot: str) -> bool:
    """Whether `ourobot/guards` judges this pull request (the guards job's own rule), so the
    panel must wait for it: a PR the guards skip is reviewed without waiting."""
    head = PullHead(pull.repo, pull.number, pull.head_sha, pull.base_ref, pull.head_ref)
    return in_scope(config, head, pull.author, pull.author_is_bot, bot=bot)


def panel_digest(config: RepoConfig) -> str:
    """Names "the same panel": a change of models, quorum, timeout or context is a new one."""
    return _digest(json.dumps(config.review.model_dump(mode="json"), sort_keys=True))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _decided(ctx: JobContext, repo: str, head_sha: str, panel: str) -> ReviewOutcome | None:
    """A decisive verdict already given for this head and panel (not re-rolled on request)."""
    stored = latest_result(ctx.store, repo=repo, head_sha=head_sha, panel=panel)
    if stored is None or stored.publication.reason not in ("approved", "rejected"):
        return None
    pub = stored.publication
    return ReviewOutcome(
        "already",
        f"The panel already reviewed `{head_sha[:12]}`: {pub.check_title[0].lower()}"
        f"{pub.check_title[1:]}. A new push gets a new review; a verdict is not re-rolled.",
        head_sha,
        pub.conclusion,
        pub.reason,
        pub.run_key,
    )


def _publish_once(
    ctx: JobContext,
    github: GitHub[Any],
    request: ReviewRequest,
    head_sha: str,
    run_key: str,
    *,
    panel: str,
    models: list[str],
    produce: Callable[[], Publication],
    pull: PullInfo,
) -> ReviewOutcome:
    """Publish the run `run_key` once: effect record, check-run id and review marker."""
    with once(ctx, run_key) as first:
        if not first:
            return _already(ctx, run_key, head_sha)
        existing = gh.find_check_run(
            github, request.repo, head_sha, run_key, app_id=ctx.settings.app_id
        )
        if existing is not None and existing.status == "completed":
            return ReviewOutcome(
                "already",
                f"This review of `{head_sha[:12]}` was already published.",
                head_sha,
                existing.conclusion,
                run_key=run_key,
            )
        if existing is None:
            check_halt(ctx, request.installation_id)
            run_id = gh.start_check_run(github, request.repo, head_sha, run_key, models=models)
        else:
            run_id = int(existing.id)
        publication = load_publication(ctx.store, run_key)
        if publication is None:
            publication = produce()
            save_publication(
                ctx.store, publication, repo=request.repo, number=request.number, panel=panel
            )
        return _publish(ctx, github, request, pull, run_id, publication)


def _already(ctx: JobContext, run_key: str, head_sha: str) -> ReviewOutcome:
    stored = load_publication(ctx.store, run_key)
    return ReviewOutcome(
        "already",
        f"This review of `{head_sha[:12]}` was already published.",
        head_sha,
        stored.conclusion if stored else None,
        stored.reason if stored else None,
        run_key,
    )


def _run_panel(
    ctx: JobContext,
    github: GitHub[Any],
    request: ReviewRequest,
    pull: PullInfo,
    fetched: Fetched,
    config: RepoConfig,
    head_sha: str,
    run_key: str,
    token: str,
) -> Publication:
    """Ask the panel; its result ready to publish (the models are asked only here, and not
    at all when an earlier head's verdict covers the same inputs)."""
    from reviewers.providers import build_client  # the SDKs: only when a panel runs

    title = request.title if request.title is not None else pull.title
    body = request.body if request.body is not None else pull.body
    ticket = ticket_for(github, pull, title=title, body=body)
    secrets = worker_secrets(ctx.settings, token=token)
    history = pull_results(ctx.store, repo=request.repo, number=request.number)
    scope_prompt = None
    try:
        change = read_pull_change(fetched, head_sha)
        rules = round_rules(fetched.path, change, config, history)
        prompt = build_prompt(fetched, change, config, ticket, secrets, rules.obligations)
        if config.review.context == "max":
            scope_prompt = build_scope_prompt(
                fetched.path,
                change,
                selection=prompt.selection,
                ticket=ticket.text,
                project_name=config.project.name,
                project_description=config.project.description,
                max_chars=config.review.max_diff_chars,
                secrets=secrets,
            )
        constitution = constitution_at_base(fetched)
    except UserError as exc:
        return _spent(history, unreviewable(run_key, head_sha, fetched.base_sha, str(exc)), config)
    inputs = input_digests(
        files=change.files,
        ticket=ticket.text,
        constitution=constitution,
        config=config,
        prompt=prompt,
        scope_prompt=scope_prompt,
        shas=(change.base_sha, change.head_sha, change.merge_base),
    )
    digest = fingerprint(inputs)
    earlier = reusable(history, digest, head_sha)
    if earlier is not None:
        again = reused(earlier, run_key=run_key, head_sha=head_sha, base_sha=change.base_sha)
        return _spent(history, again, config)
    ledger = Ledger(ctx.store)
    subject = Subject(
        run_key, request.installation_id, request.repo, request.number, ticket.key, head_sha
    )
    meter = SpendMeter(
        ledger,
        PriceTable.from_settings(ctx.settings),
        Caps.for_repo(config, ctx.settings),
        subject,
        role="reviewer",
        prompt_chars=prompt.chars(),
        max_tokens=DEFAULT_MAX_TOKENS,
        halt_check=lambda: check_halt(ctx, request.installation_id),
    )
    keys = credentials(ctx.settings)
    review = config.review
    members = [
        PanelMember(model.id, meter.wrap(build_client(model, keys, cache_prompt=True)))
        for model in review.models
    ]
    # The scope reviewer is the first panel model (through the same spend meter).
    scope_request = ScopeRequest(members[0], scope_prompt) if scope_prompt else None
    result = run_panel(
        members,
        prompt,
        quorum=review.quorum,
        timeout_s=review.timeout_s,
        base_sha=change.base_sha,
        head_sha=head_sha,
        scope=scope_review_for(review.context),
        scope_request=scope_request,
        before_call=meter.before_call,
        # A panel may take minutes: each verdict in the log (the Action's log too) as it comes.
        on_verdict=lambda verdict: log.info(
            "review %s#%d: %s", request.repo, request.number, verdict.progress_line()
        ),
        rules=rules,
    )
    scope = result.scope
    ledger.record(
        "scope-review", subject, _scope_outcome(scope), detail={"reason": scope.reason}, once=True
    )
    calls = ledger.calls(subject=run_key)
    cost = sum(row.call.cost_micro_usd for row in calls)
    answered = sum(1 for row in calls if row.call.outcome == "ok")
    cost_line = (
        f"Model spend for this run: {usd(cost)} in {answered} answered call(s), counted "
        f"against {ticket.key}."
    )
    why_again = changed_since(history, inputs)
    if why_again:
        cost_line += f" Not reused: {why_again}."
    publication = build_publication(
        result,
        change.files,
        run_key=run_key,
        cost_micro_usd=cost,
        cost_line=cost_line,
        requests=len(calls),
        fingerprint=digest,
        inputs=inputs,
    )
    return _spent(history, publication, config)


def _not_reviewed(
    ctx: JobContext,
    request: ReviewRequest,
    key: str,
    head_sha: str,
    fetched: Fetched,
    guards: str,
    config: RepoConfig,
) -> Publication:
    history = pull_results(ctx.store, repo=request.repo, number=request.number)
    models = _panel_requests(config)
    publication = not_reviewed(key, head_sha, fetched.base_sha, guards, models=models)
    return _spent(history, publication, config)


def _panel_requests(config: RepoConfig) -> int:
    """The model requests one panel round makes when every reviewer answers once."""
    return len(config.review.models) + (1 if config.review.context == "max" else 0)


def _spent(
    history: list[StoredResult], publication: Publication, config: RepoConfig
) -> Publication:
    section = spend_section(history, publication)
    return with_spend(publication, section)


def _scope_outcome(scope: ScopeReview) -> Outcome:
    """The ledger row for the scope review: its verdict, or why there is none."""
    if scope.status == "skipped":
        return Outcome("ok", review="skipped", artifact="pr")
    if scope.status == "approve":
        return Outcome("ok", review="approved", artifact="pr")
    if scope.status == "reject":
        return Outcome("ok", review="rejected", artifact="pr")
    return Outcome("error", review="incomplete", artifact="pr")


def _publish(
    ctx: JobContext,
    github: GitHub[Any],
    request: ReviewRequest,
    pull: PullInfo,
    run_id: int,
    publication: Publication,
) -> ReviewOutcome:
    """The PR review first, then the check's conclusion: a completed check means both are
    there, which is what a rerun looks for."""
    bot = bot_login(ctx.github)
    head_now = read_pull(github, request.repo, request.number).head_sha
    moved = head_now != publication.head_sha
    if publication.review_body and not gh.find_review(
        github, request.repo, request.number, publication.marker_key, bot
    ):
        # GitHub refuses "request changes" from a PR's own author; a head that moved must not
        # be blocked by a rejection of an older commit.
        ask = publication.request_changes and not moved and pull.author != bot
        check_halt(ctx, request.installation_id)
        gh.post_review(
            github,
            request.repo,
            request.number,
            publication,
            event="REQUEST_CHANGES" if ask else "COMMENT",
        )
    check_halt(ctx, request.installation_id)
    gh.complete_check_run(github, request.repo, run_id, publication)
    Ledger(ctx.store).record(
        "review",
        Subject(
            publication.run_key,
            request.installation_id,
            request.repo,
            request.number,
            None,
            publication.head_sha,
        ),
        Outcome(publication.execution, review=publication.review_axis, artifact="pr"),
        error_class=publication.error_class,
        detail={
            "conclusion": publication.conclusion,
            "reason": publication.reason,
            "trigger": request.trigger,
            "head_moved": moved,
            "cost_micro_usd": publication.cost_micro_usd,
            "kind": publication.kind,
            "round": publication.round,
            "fingerprint": publication.fingerprint,
            "reused_from": publication.reused_from,
            "model_requests": publication.requests,
            "saved_micro_usd": publication.saved_micro_usd,
            "model_requests_saved": publication.requests_saved,
            "pr_cost_micro_usd": _pr_cost(ctx, request, publication),
            "open_obligations": [item.id for item in publication.open_obligations()],
        },
        once=True,
    )
    if publication.conclusion == "success" and not moved:
        check_halt(ctx, request.installation_id)
        gh.dismiss_stale_requests(
            github, request.repo, request.number, bot, head_sha=publication.head_sha
        )
    verdict = publication.check_title[0].lower() + publication.check_title[1:]
    return ReviewOutcome(
        "published",
        f"Reviewed `{publication.head_sha[:12]}`: {verdict}. See the `ourobot/review` check.",
        publication.head_sha,
        publication.conclusion,
        publication.reason,
        publication.run_key,
    )


def _pr_cost(ctx: JobContext, request: ReviewRequest, publication: Publication) -> int:
    """The panel's spend on this pull request so far, this publication included."""
    stored = pull_results(ctx.store, repo=request.repo, number=request.number)
    others = sum(s.publication.cost_micro_usd for s in stored if s.key != publication.run_key)
    return others + publication.cost_micro_usd


def _record_skip(ctx: JobContext, request: ReviewRequest, head_sha: str) -> None:
    Ledger(ctx.store).record(
        "review",
        Subject(
            f"review-skip:{request.repo}:{head_sha}",
            request.installation_id,
            request.repo,
            request.number,
            None,
            head_sha,
        ),
        Outcome("ok", review="skipped", artifact="pr"),
        detail={"why": "guards.apply_to is bot and the PR is not ourobot's"},
        once=True,
    )


def _record_infra(ctx: JobContext, request: ReviewRequest, head_sha: str, problem: str) -> None:
    # One row per attempt: the pattern register counts how often fetching fails.
    Ledger(ctx.store).record(
        "review",
        Subject(
            f"review-fetch:{request.repo}:{head_sha}",
            request.installation_id,
            request.repo,
            request.number,
            None,
            head_sha,
        ),
        Outcome("infra", review="incomplete", artifact="pr"),
        error_class="review:fetch",
        detail={"problem": problem[:500]},
    )
