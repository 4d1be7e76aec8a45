"""`scout`: propose three to eight tickets as issues labeled `ourobot:proposed`.

One run, for `/ourobot scout` (a maintainer's comment) or for the schedule (`scout_schedule`):

    default branch fetched into the mirror -> config, constitution, prompt override at its head
    -> the map, the recent commits, the open issues -> one model call through the spend caps
    -> proposals parsed strictly and chosen (no repeat of an open issue, at most eight)
    -> the choice saved -> the issues opened, each with a hidden marker -> the report

Nothing is opened unless at least three proposals survive; an answer with none is a failure
that says why. The scout never admits a ticket: it adds `ourobot:proposed` only, and a
maintainer relabels a proposal `ourobot:ticket` to admit it.

Once per run key (`scout:<repo>:comment.<id>` or `scout:<repo>:every.<h>.<slot>`): the
choice is saved before the first issue is opened (the model is asked once, and the open issues
are compared once, so a retry does not see its own issues as duplicates), and each issue carries
the marker `scout.<run digest>.<n>`, found again among ourobot's issues on a retry. A GitHub
failure halfway through is retried by the job runner and opens only what is missing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

from githubkit import GitHub
from sqlalchemy import select

from app.commands.status_comment import marker
from app.controls.halt import check_halt
from app.controls.ledger import Ledger, Outcome, Subject
from app.controls.pricing import PriceTable, usd
from app.controls.spend_caps import Caps
from app.errors import UserError
from app.github_client import bot_login
from app.jobs.context import JobContext, once, record_effect
from app.jobs.default_branch import config_at, fetch_default_branch
from app.jobs.registry import job
from app.jobs.review_inputs import credentials, worker_secrets
from app.loop.context import read_constitution, role_template
from app.loop.metering import ModelGate
from app.loop.scout import (
    MAX_PROPOSALS,
    MIN_PROPOSALS,
    PROPOSED_LABEL,
    SCOUT_TIMEOUT_S,
    Proposal,
    Selection,
    ask_scout,
    build_prompt,
    choose,
    parse_proposals,
    read_repo_facts,
)
from app.loop.similarity import IssueText
from app.store.schema import effects
from reviewers.untrusted import one_line, strip_hidden

log = logging.getLogger(__name__)

Trigger = Literal["command", "schedule"]
Status = Literal["opened", "too-few", "failed", "already", "skipped"]
PER_PAGE = 100
MAX_ISSUE_PAGES = 10
# What ourobot appends to a proposal: cut off again before a proposal is compared with it.
FOOTER_RULE = "\n\n---\n_Proposed by ourobot's scout"


@dataclass(frozen=True)
class ScoutRequest:
    installation_id: int | None
    repo: str
    run_key: str
    trigger: Trigger


@dataclass(frozen=True)
class ScoutReport:
    status: Status
    text: str  # Markdown: the reply to `/ourobot scout`, or the log line's detail
    opened: tuple[int, ...] = ()


def command_run_key(repo: str, comment_id: int) -> str:
    return f"scout:{repo.lower()}:comment.{comment_id}"


def schedule_run_key(repo: str, every_hours: int, slot: int) -> str:
    return f"scout:{repo.lower()}:every.{every_hours}.{slot}"


@job("scout")
def scout(
    ctx: JobContext, *, installation_id: int | None, repo: str, run_key: str, every_hours: int
) -> None:
    """The scheduled run; `every_hours` is the schedule the sweep saw (a changed config is
    checked again here)."""
    report = run_scout(
        ctx, ScoutRequest(installation_id, repo, run_key, "schedule"), every_hours=every_hours
    )
    log.info("scout %s (%s): %s: %s", repo, run_key, report.status, one_line(report.text, 300))


def scout_reply(ctx: JobContext, *, installation_id: int | None, repo: str, comment_id: int) -> str:
    """`/ourobot scout` from a maintainer: run it now; the reply's text."""
    request = ScoutRequest(installation_id, repo, command_run_key(repo, comment_id), "command")
    return run_scout(ctx, request).text


def run_scout(
    ctx: JobContext, request: ScoutRequest, *, every_hours: int | None = None
) -> ScoutReport:
    check_halt(ctx, request.installation_id)
    github = ctx.github.installation(request.installation_id)
    with once(ctx, request.run_key) as first:
        if not first:
            return _finished(ctx, github, request)
        saved = load_selection(ctx, request.run_key)
        if saved is None:
            outcome = _decide(ctx, github, request, every_hours)
            if isinstance(outcome, ScoutReport):
                _record(ctx, request, outcome)
                return outcome
            record_effect(ctx, _selection_key(request.run_key), outcome.to_json())
            saved = load_selection(ctx, request.run_key)
            assert saved is not None
        selection, decided_at = saved
        if not selection.enough:
            report = ScoutReport("too-few", too_few_text(selection))
        else:
            opened = _open_issues(ctx, github, request, selection, decided_at)
            pairs = [(n, p.title) for n, p in zip(opened, selection.chosen, strict=True)]
            report = ScoutReport("opened", opened_text(selection, pairs), tuple(opened))
        _record(ctx, request, report)
        return report


def _finished(ctx: JobContext, github: GitHub[Any], request: ScoutRequest) -> ScoutReport:
    """A run already done (a redelivered command whose reply was lost): its report again,
    from the saved choice and the issues GitHub holds, opening nothing."""
    saved = load_selection(ctx, request.run_key)
    if saved is None or not saved[0].enough:
        return ScoutReport("already", "This scout run has already finished; nothing was opened.")
    selection, decided_at = saved
    found = _already_opened(
        github, request.repo, bot_login(ctx.github), run_digest(request.run_key), since=decided_at
    )
    digest = run_digest(request.run_key)
    pairs = [
        (found[key], proposal.title)
        for n, proposal in enumerate(selection.chosen, start=1)
        if (key := f"scout.{digest}.{n}") in found
    ]
    return ScoutReport(
        "already", opened_text(selection, pairs), tuple(number for number, _ in pairs)
    )


# ---- deciding what to propose --------------------------------------------------------------


def _decide(
    ctx: JobContext, github: GitHub[Any], request: ScoutRequest, every_hours: int | None
) -> Selection | ScoutReport:
    """The proposals to open, or the report of why there are none (asked of the model once)."""
    base = fetch_default_branch(ctx, github, request.installation_id, request.repo)
    try:
        config = config_at(base, ctx)
        template = role_template(base.git_dir, base.base_sha, "scout")
        constitution = read_constitution(base.git_dir, base.base_sha)
    except UserError as exc:  # an invalid config or policy file: nothing risky, say why
        return ScoutReport("failed", f"The scout did not run: {exc}. Nothing was opened.")
    if request.trigger == "schedule" and config.scout.every_hours != every_hours:
        return ScoutReport("skipped", "scout.every_hours changed since this run was planned.")
    issues = list(open_issues(github, request.repo, bot_login(ctx.github)))
    facts = read_repo_facts(base.git_dir, base.base_sha)
    secrets = worker_secrets(ctx.settings, token=None)
    try:
        system, user = build_prompt(
            template, facts, issues, config, constitution=constitution, secrets=secrets
        )
    except UserError as exc:  # a prompt override with a hole in it
        return ScoutReport("failed", f"The scout did not run: {exc}. Nothing was opened.")
    from reviewers.providers import build_fallback  # the SDKs: only when a model is asked

    gate = ModelGate(
        Ledger(ctx.store),
        PriceTable.from_settings(ctx.settings),
        Caps.for_repo(config, ctx.settings),
        _subject(request),
        halt_check=lambda: check_halt(ctx, request.installation_id),
    )
    client = build_fallback(config.models.scout, credentials(ctx.settings))
    answer = ask_scout(system, user, client, gate, timeout_s=SCOUT_TIMEOUT_S)
    if answer.text is None:
        return ScoutReport(
            "failed", f"The scout got no answer ({answer.note}). Nothing was opened."
        )
    parsed = parse_proposals(answer.text)
    if not parsed.proposals:
        return ScoutReport("failed", garbage_text(parsed.blocks, parsed.problems))
    return choose(parsed, issues)


def open_issues(github: GitHub[Any], repo: str, bot: str) -> Iterator[IssueText]:
    """The repository's open issues (not pull requests) as the scout compares them."""
    owner, name = repo.split("/", 1)
    for page in range(1, MAX_ISSUE_PAGES + 1):
        listed: Any = github.rest.issues.list_for_repo(
            owner, name, state="open", per_page=PER_PAGE, page=page
        )
        items: list[Any] = listed.parsed_data
        for item in items:
            if getattr(item, "pull_request", None):
                continue
            body = str(item.body or "")
            if getattr(item.user, "login", None) == bot:
                body = body.split(FOOTER_RULE, 1)[0]
            yield IssueText(int(item.number), strip_hidden(str(item.title)), strip_hidden(body))
        if len(items) < PER_PAGE:
            return


# ---- opening them --------------------------------------------------------------------------


def _open_issues(
    ctx: JobContext,
    github: GitHub[Any],
    request: ScoutRequest,
    selection: Selection,
    decided_at: datetime,
) -> list[int]:
    owner, name = request.repo.split("/", 1)
    bot = bot_login(ctx.github)
    digest = run_digest(request.run_key)
    found = _already_opened(github, request.repo, bot, digest, since=decided_at)
    opened: list[int] = []
    for index, proposal in enumerate(selection.chosen, start=1):
        key = f"scout.{digest}.{index}"
        if key in found:
            opened.append(found[key])
            continue
        check_halt(ctx, request.installation_id)
        made = github.rest.issues.create(
            owner,
            name,
            title=proposal.title,
            body=issue_body(proposal, key),
            labels=[PROPOSED_LABEL],
        ).parsed_data
        opened.append(int(made.number))
    return opened


def _already_opened(
    github: GitHub[Any], repo: str, bot: str, digest: str, *, since: datetime
) -> dict[str, int]:
    """Marker key -> issue number of this run's issues GitHub already holds."""
    owner, name = repo.split("/", 1)
    prefix = f"<!-- ourobot:scout.{digest}."
    # Some minutes of margin: GitHub's clock and ours need not agree to the second.
    after = github_timestamp(since - timedelta(minutes=5))
    found: dict[str, int] = {}
    for page in range(1, MAX_ISSUE_PAGES + 1):
        listed: Any = github.rest.issues.list_for_repo(  # `since` typed datetime; sent as text
            owner, name, state="all", creator=bot, since=cast(Any, after), per_page=PER_PAGE,
            page=page,
        )
        items: list[Any] = listed.parsed_data
        for item in items:
            body = str(item.body or "")
            if getattr(item.user, "login", None) != bot or prefix not in body:
                continue
            key = body.split(prefix, 1)[1].split(" -->", 1)[0]
            found[f"scout.{digest}.{key}"] = int(item.number)
        if len(items) < PER_PAGE:
            break
    return found


def github_timestamp(moment: datetime) -> str:
    """`moment` as GitHub documents a timestamp parameter (`YYYY-MM-DDTHH:MM:SSZ`). githubkit
    sends a datetime query parameter as `str(datetime)`, with a space where the `T` goes."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_digest(run_key: str) -> str:
    return hashlib.sha256(run_key.encode()).hexdigest()[:12]


def issue_body(proposal: Proposal, key: str) -> str:
    criteria = "\n".join(f"- [ ] {criterion}" for criterion in proposal.criteria)
    return (
        f"{proposal.body}\n\n## Acceptance criteria\n\n{criteria}{FOOTER_RULE} (labeled "
        f"`{PROPOSED_LABEL}`). Nothing happens until a maintainer relabels it "
        f"`ourobot:ticket`._\n{marker(key)}\n"
    )


# ---- the saved choice ----------------------------------------------------------------------


def _selection_key(run_key: str) -> str:
    return f"{run_key}:selection"


def load_selection(ctx: JobContext, run_key: str) -> tuple[Selection, datetime] | None:
    """The choice a run saved (the first one stays), with when it was saved."""
    with ctx.store.read_session() as session:
        row = session.execute(
            select(effects.c.detail, effects.c.created_at).where(
                effects.c.key == _selection_key(run_key)
            )
        ).first()
    if row is None or row.detail is None:
        return None
    at = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    return Selection.from_json(row.detail), at


# ---- what it says --------------------------------------------------------------------------


def opened_text(selection: Selection, opened: list[tuple[int, str]]) -> str:
    lines = [
        f"The scout proposed {len(opened)} ticket(s), labeled `{PROPOSED_LABEL}`:",
        "",
        *(f"- #{number} {title}" for number, title in opened),
        "",
        "None is admitted: relabel a proposal `ourobot:ticket` to admit it.",
    ]
    return "\n".join(lines + _left_out(selection))


def too_few_text(selection: Selection) -> str:
    lines = [
        f"The scout found {len(selection.chosen)} usable proposal(s), fewer than the "
        f"{MIN_PROPOSALS} it asks for, so nothing was opened.",
    ]
    if selection.chosen:
        lines += ["", "What it had:", *(f"- {p.title}" for p in selection.chosen)]
    return "\n".join(lines + _left_out(selection))


def garbage_text(blocks: int, problems: tuple[str, ...]) -> str:
    what = (
        "held no `### PROPOSAL` block"
        if blocks == 0
        else f"held {blocks} proposal block(s), none usable"
    )
    lines = [f"The scout failed: its answer {what}. Nothing was opened."]
    lines += [f"- {problem}" for problem in problems[: MAX_PROPOSALS * 2]]
    return "\n".join(lines)


def _left_out(selection: Selection) -> list[str]:
    lines: list[str] = []
    if selection.duplicates:
        lines += ["", "Not opened, because an open issue already asks for it:"]
        lines += [
            f"- {d.title}: " + (f"#{d.number} ({d.why})" if d.number is not None else d.why)
            for d in selection.duplicates
        ]
    if selection.over_cap:
        lines += ["", f"Not opened, over the cap of {MAX_PROPOSALS} per run:"]
        lines += [f"- {title}" for title in selection.over_cap]
    if selection.problems:
        lines += ["", "Not usable:", *(f"- {problem}" for problem in selection.problems)]
    return lines


# ---- the record ----------------------------------------------------------------------------


def _subject(request: ScoutRequest) -> Subject:
    # Each run is its own "ticket" for the spend caps: one run's budget is usd_per_ticket.
    return Subject(request.run_key, request.installation_id, request.repo, ticket=request.run_key)


def _record(ctx: JobContext, request: ScoutRequest, report: ScoutReport) -> None:
    execution: Any = "error" if report.status == "failed" else "ok"
    objective: Any = "met" if report.status == "opened" else "unmet"
    ledger = Ledger(ctx.store)
    calls = ledger.calls(subject=request.run_key)
    ledger.record(
        "scout",
        _subject(request),
        Outcome(execution, objective),
        error_class="scout:answer" if report.status == "failed" else None,
        detail={
            "trigger": request.trigger,
            "status": report.status,
            "opened": list(report.opened),
            "cost": usd(sum(row.call.cost_micro_usd for row in calls)),
        },
        once=True,
    )
