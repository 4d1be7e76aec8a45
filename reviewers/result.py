"""A panel run's result: per-model verdicts, findings, the decision and a Markdown summary.

Plain data, ready to publish: the CLI prints `as_json()`; a PR review and the
`ourobot/review` check run can be built from `verdicts`, `findings()` and
`summary_markdown()` without reparsing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reviewers.context import Omission
from reviewers.model_client import Usage
from reviewers.obligations import Assessed, Obligation
from reviewers.untrusted import is_invisible
from reviewers.verdict import Answer, Finding, VerdictKind

Conclusion = Literal["success", "failure"]
Reason = Literal["approved", "rejected", "incomplete", "budget"]
# skipped (`low`, or the panel failed before it was asked), unavailable (asked for, but no
# scope reviewer was given: fails closed), or the scope reviewer's verdict.
ScopeStatus = Literal["skipped", "unavailable", "approve", "reject", "incomplete"]


@dataclass(frozen=True)
class ModelVerdict:
    """One panel member's verdict and how it was reached."""

    model: str
    verdict: VerdictKind
    findings: tuple[Finding, ...] = ()
    notes: str = ""
    # Why the verdict is incomplete (timeout, error, unparseable answer); empty otherwise.
    problem: str = ""
    # "timeout", "budget", "unparseable", "internal" or a `ModelError` kind; None when answered.
    error_kind: str | None = None
    usage: Usage = field(default_factory=Usage)
    answered_by: str = ""  # the model that answered, when a fallback chain stands behind `model`
    elapsed_s: float = 0.0
    answers: tuple[Answer, ...] = ()  # to the open obligations the prompt listed
    assessed: tuple[Assessed, ...] = ()  # `findings` as the round's rules count them
    # What the model said when the rules count it otherwise (a REJECT resting only on
    # advisory findings counts as an approval); None when they agree.
    said: VerdictKind | None = None

    def progress_line(self) -> str:
        """One line saying this verdict arrived: `<model>: <verdict>, N findings (Ts)` and,
        when there is no usable verdict, why (control characters of a model's text shown as
        `?`, so an answer cannot rewrite the terminal or the Actions log)."""
        line = f"{self.model}: {self.verdict}"
        if self.verdict != "incomplete":
            count = len(self.findings)
            line += f", {count} finding{'' if count == 1 else 's'}"
        line += f" ({self.elapsed_s:.1f}s)"
        if self.problem:
            line += f": {self.problem}"
        return "".join(char if char.isprintable() else "?" for char in line)

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "verdict": self.verdict,
            "findings": [finding.as_dict() for finding in self.findings],
        }

    def verdict_note(self) -> str:
        """Why this verdict needs a word in the table, if it does."""
        if self.problem:
            return self.problem
        if self.said is not None:
            return f"said {self.said}, but every blocking finding is advisory"
        if self.answered_by and self.answered_by != self.model:
            return f"answered by {self.answered_by}"
        return ""


@dataclass(frozen=True)
class ScopeReview:
    """The typed row for the whole-repository scope review (`review.context`)."""

    status: ScopeStatus
    reason: str
    verdict: ModelVerdict | None = None  # the scope reviewer's answer, when it was asked

    @classmethod
    def from_verdict(cls, verdict: ModelVerdict) -> ScopeReview:
        reason = verdict.problem or f"{len(verdict.findings)} finding(s) by {verdict.model}"
        return cls(verdict.verdict, reason, verdict)


@dataclass(frozen=True)
class ModelFinding:
    model: str
    finding: Finding


@dataclass(frozen=True)
class PanelResult:
    conclusion: Conclusion
    reason: Reason
    detail: str  # one sentence: why this conclusion
    verdicts: tuple[ModelVerdict, ...]
    quorum: int
    base_sha: str
    head_sha: str
    scope: ScopeReview
    omitted: tuple[Omission, ...] = ()
    diff_summary: str = ""
    round: int = 1
    asked: tuple[Obligation, ...] = ()  # the open obligations this round was asked about
    obligations: tuple[Obligation, ...] = ()  # every obligation after this round

    def as_json(self) -> dict[str, Any]:
        """Exactly the CLI's contract (DESIGN.md §3): conclusion, reason, verdicts."""
        return {
            "conclusion": self.conclusion,
            "reason": self.reason,
            "verdicts": [verdict.as_json() for verdict in self.verdicts],
        }

    def findings(self) -> list[ModelFinding]:
        """The panel's findings, then the scope reviewer's (its model marked "(scope)")."""
        found = [ModelFinding(v.model, f) for v in self.verdicts for f in v.findings]
        scope = self.scope.verdict
        if scope is not None:
            found += [ModelFinding(f"{scope.model} (scope)", f) for f in scope.findings]
        return found

    @property
    def usage(self) -> Usage:
        total = Usage()
        for verdict in self.verdicts:
            total = total + verdict.usage
        if self.scope.verdict is not None:
            total = total + self.scope.verdict.usage
        return total

    def summary_markdown(self) -> str:
        title = "passed" if self.conclusion == "success" else f"failed ({self.reason})"
        lines = [
            f"## ourobot review {title}",
            "",
            f"{self.detail} Reviewed head `{self.head_sha}` against base `{self.base_sha}`;",
            f"quorum {self.quorum} of {len(self.verdicts)}.",
            "",
            "| Model | Verdict | Findings | Note |",
            "| --- | --- | --- | --- |",
        ]
        for verdict in self.verdicts:
            note = verdict.verdict_note()
            lines.append(
                f"| {_code(verdict.model)} | {verdict.verdict} | {len(verdict.findings)} "
                f"| {_cell(note)} |"
            )
        found = self.findings()
        weights = {(a.model, a.finding): a for v in self.verdicts for a in v.assessed}
        if found:
            lines += ["", "### Findings", ""]
            lines += [
                f"- {_weight(weights.get((item.model, item.finding)))}**{item.finding.severity}** "
                f"{_code(item.finding.where)} "
                f"({item.model}): {_cell(item.finding.reason)}"
                for item in found
            ]
        lines += self._obligation_lines()
        lines += ["", f"Scope review: {self.scope.status} ({_cell(self.scope.reason)})."]
        if self.diff_summary:
            lines += ["", f"Diff shown to the panel: {self.diff_summary}"]
        if self.omitted:
            lines += ["", "### Not shown to the panel", ""]
            lines += [f"- {_code(o.path)}: {o.what} ({o.chars:,} characters)" for o in self.omitted]
        return "\n".join(lines) + "\n"

    def _obligation_lines(self) -> list[str]:
        if not self.obligations:
            return []
        lines = [
            "",
            f"### Obligations after round {self.round}",
            "",
            "| Id | Status | Where | Finding | Answer |",
            "| --- | --- | --- | --- | --- |",
        ]
        for item in self.obligations:
            weight = item.severity if item.blocking else f"{item.severity}, advisory"
            lines.append(
                f"| `{item.id}` | {item.status} | {_code(item.where)} "
                f"| {weight}: {_cell(item.reason)} | {_cell(item.answer)} |"
            )
        return lines


def _weight(assessed: Assessed | None) -> str:
    """A finding's id, and why a serious one is only advisory."""
    if assessed is None:
        return ""
    why = f" (advisory: {assessed.why})" if assessed.why else ""
    return f"`{assessed.id}`{why} "


# A mention's "@" shown as the full-width at sign (U+FF20): read as "@", never a notification.
MENTION_SAFE_AT = "\uff20"


def _cell(text: str) -> str:
    """Model or user text inside a Markdown table or list item: one line, no table breaks,
    no invisible characters, no mentions or HTML that GitHub would act on."""
    flat = " ".join("".join(char for char in text if not is_invisible(char)).split())
    # Escaped the Markdown way, never as HTML entities (`&lt;` where the text is shown as
    # text); the backslash first, so the model's cannot undo ours.
    for char in "\\|<>":
        flat = flat.replace(char, "\\" + char)
    flat = flat.replace("@", MENTION_SAFE_AT)
    return flat if len(flat) <= 300 else flat[:297] + "..."


def _code(text: str) -> str:
    """A path or model id as inline code (GitHub neither mentions nor renders HTML there)."""
    flat = " ".join(text.split()).replace("`", "'").replace("|", "\\|")
    return "`" + (flat if len(flat) <= 200 else flat[:197] + "...") + "`"
