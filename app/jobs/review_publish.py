"""A panel run's result as it is published: the PR review and the `ourobot/review` check run.

Plain data and text, no I/O: `build_publication` turns a `PanelResult` and the reviewed diff
into a `Publication` (review body, inline comments, check title, summary and annotations, and
the ledger outcome). A publication is stored as JSON (`review_results`) before anything is
posted, so a rerun after a crash posts the same verdict instead of asking the models again.

Model text is untrusted: every piece of it shown on GitHub is cleaned so that it cannot
mention people, post HTML (or a hidden marker of ours) or hide characters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from app.controls.ledger import Execution, ReviewAxis
from app.store import Store
from app.store.ids import checked_id
from app.store.schema import review_results
from reviewers.diff import FileDiff
from reviewers.obligations import Obligation
from reviewers.result import MENTION_SAFE_AT, ModelVerdict, PanelResult
from reviewers.untrusted import is_invisible
from reviewers.verdict import Finding

CHECK_NAME = "ourobot/review"
MAX_SUMMARY_CHARS = 60_000  # GitHub's limit is 65,535 for a check summary and a review body
MAX_NOTES_CHARS = 1_500
MAX_FINDING_CHARS = 600
ANNOTATION_LEVELS = {"blocker": "failure", "major": "failure", "minor": "warning", "nit": "notice"}

Conclusion = Literal["success", "failure"]
# How a publication came to be: the panel asked; a recorded verdict reused for the same inputs;
# not reviewed because the guards failed on the head; or the change could not be evaluated.
Kind = Literal["panel", "reused", "guards-failed", "unreviewable"]


@dataclass(frozen=True)
class InlineComment:
    path: str
    line: int
    body: str


@dataclass(frozen=True)
class Annotation:
    path: str
    line: int
    level: str  # notice | warning | failure
    title: str
    message: str

    def as_github(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.line,
            "end_line": self.line,
            "annotation_level": self.level,
            "title": self.title,
            "message": self.message,
        }


@dataclass(frozen=True)
class Publication:
    """Everything posted for one panel run, and how the ledger records it."""

    run_key: str
    head_sha: str
    base_sha: str
    conclusion: Conclusion
    reason: str  # approved | rejected | incomplete | budget
    check_title: str
    check_summary: str
    review_body: str  # empty: no PR review (nothing was reviewed, e.g. an invalid config)
    inline: tuple[InlineComment, ...]
    annotations: tuple[Annotation, ...]
    # The panel rejected the change: the review asks for changes where GitHub allows it.
    request_changes: bool
    execution: Execution
    review_axis: ReviewAxis
    error_class: str | None
    cost_micro_usd: int = 0
    kind: Kind = "panel"
    round: int = 0  # the panel round on this pull request (0: no panel verdict)
    obligations: tuple[dict[str, Any], ...] = ()  # every obligation after this round
    fingerprint: str = ""  # of the inputs the verdict is about (app.jobs.review_fingerprint)
    inputs: dict[str, str] = field(default_factory=dict)  # each input's own digest
    reused_from: str = ""  # the head whose verdict this one repeats
    requests: int = 0  # model requests made for this publication
    saved_micro_usd: int = 0  # what reusing a verdict did not spend
    requests_saved: int = 0  # model requests reuse or cheap-first did not make

    @property
    def decisive(self) -> bool:
        """A verdict the panel reached on the change (not the lack of one)."""
        return self.kind in ("panel", "reused") and self.reason in ("approved", "rejected")

    def open_obligations(self) -> tuple[Obligation, ...]:
        found = (Obligation.from_dict(item) for item in self.obligations)
        return tuple(item for item in found if item.status == "open")

    @property
    def marker_key(self) -> str:
        """The hidden marker's key in the PR review (see `app.commands.status_comment.marker`)."""
        return "review." + hashlib.sha256(self.run_key.encode()).hexdigest()[:20]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Publication:
        data = json.loads(text)
        data["inline"] = tuple(InlineComment(**item) for item in data["inline"])
        data["annotations"] = tuple(Annotation(**item) for item in data["annotations"])
        data["obligations"] = tuple(data.get("obligations", ()))
        return cls(**data)


# ---- building ---------------------------------------------------------------------------------


def build_publication(
    result: PanelResult,
    files: Sequence[FileDiff],
    *,
    run_key: str,
    cost_micro_usd: int,
    cost_line: str,
    requests: int = 0,
    fingerprint: str = "",
    inputs: dict[str, str] | None = None,
) -> Publication:
    """The review and check run for `result`, with findings placed on changed lines."""
    commentable = {diff.path: diff.commentable_lines() for diff in files}
    at_head = {diff.path for diff in files if diff.file.status != "deleted"}
    inline: list[InlineComment] = []
    sections: list[str] = []
    for verdict in result.verdicts:
        placed = [f for f in verdict.findings if f.line in commentable.get(f.path, frozenset())]
        inline += [InlineComment(f.path, f.line, _comment(verdict.model, f)) for f in placed]
        sections.append(_model_section(verdict, placed))
    advisory = {(a.model, a.finding) for v in result.verdicts for a in v.assessed if a.why}
    annotations = tuple(
        Annotation(
            f.path,
            f.line,
            "notice" if (item.model, f) in advisory else ANNOTATION_LEVELS[f.severity],
            f"{f.severity}{', advisory' if (item.model, f) in advisory else ''} "
            f"({_plain_text(item.model, 100)})",
            _plain_text(f.reason, MAX_FINDING_CHARS),
        )
        for item in result.findings()
        for f in (item.finding,)
        if f.path in at_head
    )
    title = check_title(result)
    execution, error_class = execution_of(result.verdicts)
    body = _review_body(result, title, sections)
    summary = _limit(result.summary_markdown() + f"\n{cost_line}\n", MAX_SUMMARY_CHARS)
    return Publication(
        run_key=run_key,
        head_sha=result.head_sha,
        base_sha=result.base_sha,
        conclusion=result.conclusion,
        reason=result.reason,
        check_title=title,
        check_summary=summary,
        review_body=body,
        inline=tuple(inline),
        annotations=annotations,
        request_changes=result.reason == "rejected",
        execution=execution,
        review_axis="incomplete" if result.reason == "budget" else result.reason,
        error_class=error_class,
        cost_micro_usd=cost_micro_usd,
        kind="panel",
        round=result.round,
        obligations=tuple(item.as_dict() for item in result.obligations),
        fingerprint=fingerprint,
        inputs=dict(inputs or {}),
        requests=requests,
    )


def reused(
    earlier: Publication,
    *,
    run_key: str,
    head_sha: str,
    base_sha: str,
) -> Publication:
    """`earlier`'s verdict on a head whose reviewed inputs are identical: the same findings
    and obligations on the new SHA, no model asked, and the summary says so."""
    note = (
        f"**Verdict reused, no model was asked:** `{head_sha}` has the same reviewed inputs "
        f"(fingerprint `{earlier.fingerprint}`: the diff, the ticket, the constitution, the "
        f"config and prompts in force, and the roster) as `{earlier.head_sha}`, which the "
        "panel already reviewed. Any change to one of them pays for a new review.\n\n"
    )
    summary = earlier.check_summary.replace(earlier.head_sha, head_sha)
    summary = summary.replace(earlier.base_sha, base_sha) if earlier.base_sha else summary
    summary = _strip_spend(summary)
    return replace(
        earlier,
        run_key=run_key,
        head_sha=head_sha,
        base_sha=base_sha,
        check_summary=_limit(note + summary, MAX_SUMMARY_CHARS),
        review_body=_limit(
            note + earlier.review_body.replace(earlier.head_sha, head_sha), MAX_SUMMARY_CHARS
        ),
        kind="reused",
        reused_from=earlier.reused_from or earlier.head_sha,
        cost_micro_usd=0,
        requests=0,
        saved_micro_usd=earlier.cost_micro_usd or earlier.saved_micro_usd,
        requests_saved=earlier.requests or earlier.requests_saved,
    )


SPEND_HEADING = "### Spend"


def _strip_spend(summary: str) -> str:
    """The summary without its spend section (a reused verdict gets its own)."""
    head, _, _ = summary.partition(f"\n{SPEND_HEADING}\n")
    return head.rstrip("\n") + "\n"


def with_spend(publication: Publication, section: str) -> Publication:
    """`publication` with its spend section at the end of the check's summary."""
    summary = _strip_spend(publication.check_summary).rstrip("\n") + "\n" + section + "\n"
    return replace(publication, check_summary=_limit(summary, MAX_SUMMARY_CHARS))


def not_reviewed(
    run_key: str, head_sha: str, base_sha: str, guards: str, *, models: int
) -> Publication:
    """The check for a head the guards failed on: cheap first, so no model is asked and the
    review never passes; the guards' own check says what to fix."""
    title = f"Not reviewed: the guards failed on {head_sha[:12]}"
    summary = (
        f"## ourobot review: not reviewed\n\nNot reviewed: the guards failed on `{head_sha}` "
        f"(`ourobot/guards`: {_plain(guards, 300)}). The deterministic checks run first and "
        "the review panel is asked only about a head they passed, so no model was asked "
        f"({models} panel request(s) not made). Fix what `ourobot/guards` reports and push: "
        "the new head is checked again, then reviewed. A person with maintain access can "
        "`/ourobot override ourobot/guards <reason>`; the panel then reviews this head.\n"
    )
    return Publication(
        run_key=run_key,
        head_sha=head_sha,
        base_sha=base_sha,
        conclusion="failure",
        reason="guards-failed",
        check_title=title,
        check_summary=summary,
        review_body="",
        inline=(),
        annotations=(),
        request_changes=False,
        execution="ok",
        review_axis="skipped",
        error_class=None,
        kind="guards-failed",
        requests_saved=models,
    )


def unreviewable(run_key: str, head_sha: str, base_sha: str, problem: str) -> Publication:
    """A failed check for a change the panel could not be asked about (an invalid config, an
    empty change, a constitution over the size limit): fail closed, say why, post no review."""
    text = _plain(problem, 2_000)
    return Publication(
        run_key=run_key,
        head_sha=head_sha,
        base_sha=base_sha,
        conclusion="failure",
        reason="incomplete",
        check_title="Review failed: cannot evaluate this change",
        check_summary=(
            f"## ourobot review failed (cannot evaluate)\n\n{text}\n\nNo model was asked. "
            f"Reviewed head `{head_sha}` against base `{base_sha}`.\n"
        ),
        review_body="",
        inline=(),
        annotations=(),
        request_changes=False,
        execution="error",
        review_axis="incomplete",
        error_class="review:cannot-evaluate",
        kind="unreviewable",
    )


def check_title(result: PanelResult) -> str:
    approvals = sum(1 for verdict in result.verdicts if verdict.verdict == "approve")
    rejections = sum(1 for verdict in result.verdicts if verdict.verdict == "reject")
    count = len(result.verdicts)
    if result.reason == "approved":
        return f"Review passed: {approvals} of {count} approved"
    if result.reason == "rejected":
        return f"Review failed: rejected by {rejections} of {count}"
    if result.reason == "budget":
        return "Review failed: budget exhausted"
    return f"Review failed: incomplete evidence ({approvals} of {result.quorum} approvals)"


def execution_of(verdicts: Iterable[ModelVerdict]) -> tuple[Execution, str | None]:
    """How the run went on the ledger's execution axis, and the error class behind it."""
    kinds = [verdict.error_kind for verdict in verdicts if verdict.error_kind]
    if not kinds:
        return "ok", None
    if "budget" in kinds:
        return "budget", "review:budget"
    if "timeout" in kinds:
        return "timeout", "review:timeout"
    return "error", f"review:{kinds[0]}"


def _review_body(result: PanelResult, title: str, sections: list[str]) -> str:
    head = [
        f"## ourobot {title[0].lower()}{title[1:]}",
        "",
        f"{result.detail} Head `{result.head_sha}`, base `{result.base_sha}`. The "
        "`ourobot/review` check on that head carries the verdict; ourobot never approves a "
        "pull request, a maintainer's approval is a separate gate.",
    ]
    return _limit("\n".join([*head, *sections]) + "\n", MAX_SUMMARY_CHARS)


def _model_section(verdict: ModelVerdict, placed: list[Finding]) -> str:
    lines = ["", f"### {_code(verdict.model)}: {verdict.verdict}"]
    if verdict.problem:
        lines += ["", f"Why no usable verdict: {_plain(verdict.problem, MAX_FINDING_CHARS)}"]
    if verdict.notes:
        notes = _plain_block(verdict.notes, MAX_NOTES_CHARS)
        lines += ["", *(f"> {line}" if line else ">" for line in notes.split("\n"))]
    elsewhere = [f for f in verdict.findings if f not in placed]
    if placed:
        lines += ["", f"{len(placed)} finding(s) inline on the changed lines."]
    if elsewhere:
        lines += [
            "",
            "Findings outside the changed lines:" if placed else "Findings:",
            "",
            *(
                f"- **{f.severity}** {_code(f'{f.path}:{f.line}')}: "
                f"{_plain(f.reason, MAX_FINDING_CHARS)}"
                for f in elsewhere
            ),
        ]
    return "\n".join(lines)


def _comment(model: str, finding: Finding) -> str:
    return f"**{finding.severity}** ({_code(model)}): {_plain(finding.reason, MAX_FINDING_CHARS)}"


# ---- untrusted text on GitHub ----------------------------------------------------------------


def _visible(text: str) -> str:
    """No invisible characters, no mentions."""
    visible = "".join(char for char in text if char == "\n" or not is_invisible(char))
    return visible.replace("@", MENTION_SAFE_AT)


def _clean(text: str) -> str:
    """Text for Markdown: `_visible`, and no HTML (so no hidden marker). Escaped the Markdown
    way (a backslash), never as HTML entities, which read as `&lt;` wherever the text is
    shown unrendered; the backslash itself first, so the model's cannot undo ours."""
    return _visible(text).replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>")


def _plain(text: str, limit: int) -> str:
    """One line of model text, for Markdown."""
    flat = " ".join(_clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _plain_text(text: str, limit: int) -> str:
    """One line of model text where GitHub shows text as written (an annotation)."""
    flat = " ".join(_visible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _plain_block(text: str, limit: int) -> str:
    """Model notes, line breaks kept."""
    lines = [" ".join(line.split()) for line in _clean(text).split("\n")]
    block = "\n".join(lines).strip()
    return block if len(block) <= limit else block[: limit - 3] + "..."


def _code(text: str) -> str:
    flat = " ".join(text.split()).replace("`", "'")
    return "`" + (flat if len(flat) <= 200 else flat[:197] + "...") + "`"


def _limit(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 60] + "\n\n(cut here: longer than GitHub shows)\n"


# ---- storage ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredResult:
    key: str
    publication: Publication
    created_at: datetime


def save_publication(
    store: Store, publication: Publication, *, repo: str, number: int, panel: str
) -> None:
    """Keep `publication` under its run key (the first one stays: a rerun reposts it)."""
    values = {
        "key": publication.run_key,
        "created_at": datetime.now(UTC),
        "repo": repo,
        "number": checked_id("pull request number", number, "int"),
        "head_sha": publication.head_sha,
        "panel": panel,
        "conclusion": publication.conclusion,
        "reason": publication.reason,
        "publication": publication.to_json(),
    }
    with store.session() as session:
        dialect = session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        session.execute(
            insert(review_results)
            .values(values)
            .on_conflict_do_nothing(index_elements=[review_results.c.key])
        )


def load_publication(store: Store, run_key: str) -> Publication | None:
    with store.read_session() as session:
        text = session.execute(
            select(review_results.c.publication).where(review_results.c.key == run_key)
        ).scalar_one_or_none()
    return Publication.from_json(text) if text is not None else None


def pull_results(store: Store, *, repo: str, number: int) -> list[StoredResult]:
    """Every stored run of one pull request, oldest first (its rounds, reuses and skips)."""
    query = (
        select(review_results)
        .where(review_results.c.repo == repo, review_results.c.number == number)
        .order_by(review_results.c.created_at, review_results.c.key)
    )
    with store.read_session() as session:
        rows = session.execute(query).all()
    return [StoredResult(r.key, Publication.from_json(r.publication), r.created_at) for r in rows]


def latest_result(store: Store, *, repo: str, head_sha: str, panel: str) -> StoredResult | None:
    """The newest stored run for this head and panel, if any."""
    query = (
        select(review_results)
        .where(
            review_results.c.repo == repo,
            review_results.c.head_sha == head_sha,
            review_results.c.panel == panel,
        )
        .order_by(review_results.c.created_at.desc())
        .limit(1)
    )
    with store.read_session() as session:
        row = session.execute(query).first()
    if row is None:
        return None
    return StoredResult(row.key, Publication.from_json(row.publication), row.created_at)
