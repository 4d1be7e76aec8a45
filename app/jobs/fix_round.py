"""`fix_round`: a failing check on ourobot's pull request goes back to the implementer.

Triggers: `ourobot/review` or `ourobot/guards` completed with a failure on ourobot's own pull
request (`handlers/fix_triggers.py`), or `/ourobot fix [notes]` from a person with write access
(their review comments on the pull request, inline ones included, and the notes). The findings
(`app/loop/fix_findings.py`) are fed to the implementer for `budgets.fix_iterations`
iterations on the pull request's branch; a new green commit is pushed (a fast-forward: a branch
someone else moved is left alone), and the pushed head's `synchronize` runs the guards and the
review again. Automatic rounds stop at `review.rounds`: the ticket is then labeled
`ourobot:needs-human` with the last findings in its status comment.

One round per head and trigger (its row in `cycle_records`), under the ticket's lease, with the
halt and the fence checked before every write, exactly as a cycle.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from githubkit import GitHub
from sqlalchemy import select

from app.commands import replies
from app.controls.halt import check_halt
from app.errors import UserError
from app.github_client import bot_login
from app.jobs.context import JobContext
from app.jobs.cycle_records import CycleRecords
from app.jobs.registry import job
from app.jobs.review_inputs import Fetched, PullInfo, config_at_base, read_pull, worker_secrets
from app.jobs.review_publish import Publication
from app.jobs.review_rounds import open_obligations
from app.jobs.ticket_cycle import cycle_on_mirror
from app.jobs.ticket_lease import StaleLease, TicketLeases
from app.jobs.ticket_pull import BLOCKED, NEEDS_HUMAN, PushRejected, push_branch, set_state_label
from app.jobs.ticket_status import StatusBoard
from app.loop.cycle import FixRound
from app.loop.fix_findings import FixFinding, fix_feedback, summary_lines
from app.loop.intake import issue_ticket
from app.store import Store
from app.store.schema import review_results
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.mirror import RepoMirror
from reviewers.obligations import Obligation

log = logging.getLogger(__name__)

FixSource = Literal["review", "guards", "command"]
_ISSUE_BRANCH = re.compile(rf"^{re.escape(BOT_BRANCH_PREFIX)}issue-(\d{{1,9}})$")
GUARDS_CHECK = "ourobot/guards"
REVIEW_CHECK = "ourobot/review"


@dataclass(frozen=True)
class FixRun:
    installation_id: int | None
    repo: str
    number: int  # the pull request
    source: FixSource
    head_sha: str | None = None  # the failing head (None: the head now, for a command)
    check_run_id: int | None = None
    login: str | None = None
    notes: str = ""
    comment_id: int | None = None

    @property
    def key(self) -> str:
        if self.source == "command":
            return f"fix:{self.repo.lower()}#{self.number}:command:{self.comment_id}"
        return f"fix:{self.repo.lower()}#{self.number}:{self.head_sha}"


@job("fix_round")
def fix_round(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    head_sha: str,
    source: str,
    check_run_id: int | None = None,
) -> None:
    kind: FixSource = "guards" if source == "guards" else "review"
    run = FixRun(installation_id, repo, number, kind, head_sha, check_run_id)
    log.info("fix round %s#%d: %s", repo, number, run_fix(ctx, run))


def ourobot_issue(pull: PullInfo, bot: str) -> int | None:
    """The issue an ourobot pull request works on, or None when it is not ourobot's: opened
    by ourobot's App, from `ourobot/issue-N` in the same repository."""
    match = _ISSUE_BRANCH.match(pull.head_ref)
    if match is None or pull.author != bot or (pull.head_repo or "").lower() != pull.repo.lower():
        return None
    return int(match.group(1))


def run_fix(ctx: JobContext, run: FixRun) -> str:
    check_halt(ctx, run.installation_id)
    github = ctx.github.installation(run.installation_id)
    bot = bot_login(ctx.github)
    pull = read_pull(github, run.repo, run.number)
    issue = ourobot_issue(pull, bot)
    if pull.state != "open" or issue is None:
        return "`/ourobot fix` works on ourobot's own open pull requests. Nothing was done."
    if run.head_sha is not None and pull.head_sha != run.head_sha:
        return f"`{run.head_sha[:12]}` is no longer the head: its findings are out of date."
    run = FixRun(**{**run.__dict__, "head_sha": pull.head_sha})
    records = CycleRecords(ctx.store)
    if (done := records.get(run.key)) is not None and done.state == "done":
        return "This fix round already ran."
    leases = TicketLeases(ctx.store)
    lease = leases.acquire(run.repo, issue, run.key, ttl_s=ctx.settings.task_time_limit_s)
    if lease is None:
        return replies.ticket_busy(run.login or "ourobot")
    try:
        return _Round(ctx, github, bot, run, pull, issue, lease).go()
    except StaleLease as exc:
        return f"stopped: {exc}"
    finally:
        leases.release(lease)


class _Round:
    def __init__(
        self,
        ctx: JobContext,
        github: GitHub[Any],
        bot: str,
        run: FixRun,
        pull: PullInfo,
        issue: int,
        lease: Any,
    ) -> None:
        self.ctx, self.github, self.bot, self.run = ctx, github, bot, run
        self.pull, self.issue, self.lease = pull, issue, lease
        self.records = CycleRecords(ctx.store)
        self.board = StatusBoard(github, ctx.store, repo=run.repo, number=issue, bot_login=bot)

    def guard(self) -> None:
        check_halt(self.ctx, self.run.installation_id)
        TicketLeases(self.ctx.store).check(self.lease)

    def go(self) -> str:
        run, pull = self.run, self.pull
        token = self.ctx.github.git_token(run.installation_id)
        mirror = RepoMirror(self.ctx.settings.data_dir, run.repo)
        base_sha = mirror.fetch_branch(pull.clone_url, pull.base_ref, token=token)
        try:
            config = config_at_base(Fetched(mirror.path, base_sha)).capped(self.ctx.settings)
        except UserError as exc:
            return replies.ticket_bad_config(str(exc))
        if config.mode == "light":
            return replies.ticket_light_mode()
        findings = self.findings()
        # A retry of this round (a killed worker) is not a round of its own.
        rounds = self.records.count(run.repo, run.number, "fix", besides=run.key)
        automatic = run.source != "command"
        if automatic and not findings:
            return "The failing check named no finding to fix; nothing was done."
        if automatic and rounds >= config.review.rounds:
            return self.needs_human(rounds, findings)
        if self.records.get(run.key) is None:
            started = self.records.started_within_hour(run.repo)
            if started >= config.loop.cycles_per_hour:
                return self.say(replies.ticket_cap_cycles(started, config.loop.cycles_per_hour))
        record = self.records.start(run.key, run.repo, run.number, "fix")
        head = mirror.fetch_branch(pull.clone_url, pull.head_ref, token=token)
        if head != pull.head_sha:
            return f"the branch moved to `{head[:12]}` while the round started; nothing was done."
        phase = f"fix round {rounds + 1}" + ("" if not automatic else f"/{config.review.rounds}")
        feedback = fix_feedback(
            findings, notes=run.notes, secrets=worker_secrets(self.ctx.settings, token=token)
        )
        ticket = self.ticket()
        self.guard()
        result, _ = cycle_on_mirror(
            self.ctx,
            run.installation_id,
            mirror,
            pull.head_sha,
            ticket,
            config,
            token=token,
            fix=FixRound(feedback, phase),
        )
        if result.outcome != "ready" or result.head_sha is None:
            self.guard()
            set_state_label(self.github, run.repo, self.issue, BLOCKED, ())
            record.state = "done"
            self.records.save(record)
            return self.say(f"The {phase} ended without a new green commit: {result.reason}.")
        self.guard()
        try:
            push_branch(
                mirror.path,
                pull.clone_url,
                result.head_sha,
                pull.head_ref,
                token=token,
                force=False,
            )
        except PushRejected as exc:
            return self.say(f"The {phase} was not pushed: the branch moved ({exc}).")
        record.state, record.result = "done", {"head_sha": result.head_sha}
        self.records.save(record)
        return self.say(
            f"Pushed the {phase} as `{result.head_sha[:12]}` on #{run.number} "
            f"({len(findings)} finding(s) addressed); the guards and the review run again on "
            "the new head."
        )

    def say(self, text: str) -> str:
        self.guard()
        self.board.post(text)
        return text

    def needs_human(self, rounds: int, findings: list[FixFinding]) -> str:
        self.guard()
        set_state_label(self.github, self.run.repo, self.issue, NEEDS_HUMAN, ())
        return self.say(replies.fix_needs_human(rounds, summary_lines(findings)))

    def ticket(self) -> Any:
        owner, name = self.run.repo.split("/", 1)
        issue = self.github.rest.issues.get(owner, name, self.issue).parsed_data
        labels = [str(getattr(x, "name", x)) for x in (issue.labels or [])]
        return issue_ticket(
            self.run.repo,
            self.issue,
            title=str(issue.title or ""),
            body=str(issue.body or ""),
            labels=labels,
        )

    def findings(self) -> list[FixFinding]:
        run = self.run
        if run.source == "review":
            return review_round_findings(self.ctx.store, run.repo, run.number, self.pull.head_sha)
        if run.source == "guards":
            return guards_findings(self.github, run.repo, run.check_run_id)
        return person_findings(self.github, run.repo, run.number, run.login or "")


def latest_publication(store: Store, repo: str, head_sha: str) -> Publication | None:
    """The newest review published for this head (any panel), from the store."""
    with store.read_session() as session:
        text = session.execute(
            select(review_results.c.publication)
            .where(review_results.c.repo == repo, review_results.c.head_sha == head_sha)
            .order_by(review_results.c.created_at.desc())
            .limit(1)
        ).scalar_one_or_none()
    return Publication.from_json(text) if text is not None else None


def review_round_findings(store: Store, repo: str, number: int, head_sha: str) -> list[FixFinding]:
    """What the rejected head's review asks of the fix: the obligations its panel round left
    open, each with its id (the next round asks every reviewer about that id), or, when the
    store holds no panel round for the head (a review published before obligations, or none),
    the published check's findings."""
    open_now = open_obligations(store, repo=repo, number=number, head_sha=head_sha)
    if open_now:
        return [obligation_finding(item) for item in open_now]
    publication = latest_publication(store, repo, head_sha)
    return review_findings(publication) if publication is not None else []


def obligation_finding(item: Obligation) -> FixFinding:
    severity = item.severity if item.blocking else f"{item.severity} (advisory)"
    located = item.path and item.line >= 1
    return FixFinding(
        "review",
        severity,
        item.path or None,
        item.line if located else None,
        item.reason,
        item.model,
        obligation=item.id,
    )


def review_findings(publication: Publication) -> list[FixFinding]:
    """The review check's findings as the fix round takes them: one per annotation (they
    carry the path, line, severity and model), or the check's summary when none has a line."""
    found = [
        FixFinding(
            "review",
            _severity(a.title),
            a.path,
            a.line,
            a.message,
            _model(a.title),
        )
        for a in publication.annotations
    ]
    if not found and publication.conclusion != "success":
        found.append(
            FixFinding("review", "major", None, None, publication.check_summary[:4000], "panel")
        )
    return found


def _severity(title: str) -> str:
    for word in ("blocker", "major", "minor", "nit"):
        if word in title.lower():
            return word
    return "major"


def _model(title: str) -> str:
    match = re.search(r"\b((?:anthropic|openai):[\w.\-]+)", title)
    return match.group(1) if match else "panel"


def guards_findings(github: GitHub[Any], repo: str, check_run_id: int | None) -> list[FixFinding]:
    """The guards' violations: their check run's annotations, and its summary when none has a
    line (a whole-PR limit, such as the deletions of the entire change)."""
    if check_run_id is None:
        return []
    owner, name = repo.split("/", 1)
    listed = github.rest.checks.list_annotations(owner, name, check_run_id).parsed_data
    found = [
        FixFinding(
            "guards",
            str(a.annotation_level or "failure"),
            str(a.path),
            int(a.start_line or 0),
            str(a.message or ""),
            str(a.title or "guards"),
        )
        for a in listed
    ]
    if found:
        return found
    run = github.rest.checks.get(owner, name, check_run_id).parsed_data
    output = run.output
    text = str(getattr(output, "text", None) or getattr(output, "summary", None) or "")
    if not text.strip():
        return []
    return [FixFinding("guards", "failure", None, None, text[:4000], "ourobot/guards")]


def person_findings(github: GitHub[Any], repo: str, number: int, login: str) -> list[FixFinding]:
    """A person's review comments on the pull request (inline ones with their line) and the
    bodies of their reviews."""
    owner, name = repo.split("/", 1)
    found: list[FixFinding] = []
    inline: Iterable[Any] = github.rest.paginate(
        github.rest.pulls.list_review_comments,
        owner=owner,
        repo=name,
        pull_number=number,
        per_page=100,
    )
    for comment in inline:
        if getattr(comment.user, "login", None) == login:
            line = comment.line or comment.original_line
            found.append(FixFinding("person", "major", comment.path, line, comment.body, login))
    reviews: Iterable[Any] = github.rest.pulls.list_reviews(
        owner, name, number, per_page=100
    ).parsed_data
    for review in reviews:
        if getattr(review.user, "login", None) == login and (review.body or "").strip():
            found.append(FixFinding("person", "major", None, None, str(review.body), login))
    return found


def fix_reply(
    ctx: JobContext,
    *,
    installation_id: int | None,
    repo: str,
    number: int,
    comment_id: int,
    login: str,
    notes: str,
    is_pull_request: bool,
) -> str:
    """`/ourobot fix [notes]` from someone allowed to ask (the command job checked)."""
    if not is_pull_request:
        return "`/ourobot fix` asks for changes on ourobot's pull request, and this is an issue."
    run = FixRun(
        installation_id, repo, number, "command", login=login, notes=notes, comment_id=comment_id
    )
    return run_fix(ctx, run)
