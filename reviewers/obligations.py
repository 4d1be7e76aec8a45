"""Findings as obligations across review rounds, and the convergence rule. Plain functions.

Each finding of a rejecting round becomes an *obligation* with a stable id (`finding_id`: a
digest of where it is and what it says, so the same finding gets the same id in every round
and every process). The next round's prompt lists the open ones; every reviewer answers each
with `RESOLVED <id> <why>` or `OPEN <id> <why>` (`reviewers.verdict`), and one that stays open
in any usable answer stays open. The implementer's fix round is given the same list.

What blocks and what is advisory (`assess`):
- a `blocker` or `major` finding blocks; `minor` and `nit` never do;
- a finding without a path and line, or naming a path that is neither in the change nor in the
  repository, is advisory: a blocker must name something concrete;
- the convergence rule: a *new* finding raised in a round after `review.converge_after`,
  about code the fix did not touch since the last reviewed head, is advisory. Obligations
  raised earlier keep blocking until they are resolved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, cast

from reviewers.verdict import Answer, Finding, Severity

BLOCKING_SEVERITIES: tuple[str, ...] = ("blocker", "major")
# A finding within this many lines of a line the fix added counts as about touched code.
TOUCH_MARGIN = 3

ObligationStatus = Literal["open", "resolved"]


def finding_id(finding: Finding) -> str:
    """The stable id of `finding`: the same place, severity and words give the same id."""
    words = " ".join(finding.reason.split()).lower()
    text = f"{finding.path}\0{finding.line}\0{finding.severity}\0{words}"
    return "F-" + hashlib.sha256(text.encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Obligation:
    """A finding of a rejecting round that a later round must answer."""

    id: str
    severity: Severity
    path: str
    line: int
    reason: str
    model: str
    raised_round: int
    raised_head: str
    blocking: bool
    status: ObligationStatus = "open"
    answer: str = ""  # the last round's reason for its status

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.path and self.line >= 1 else "(no location)"

    def describe(self) -> str:
        """One line, as a prompt lists it."""
        weight = self.severity if self.blocking else f"{self.severity}, advisory"
        return (
            f"{self.id} ({weight}) {self.where}: {' '.join(self.reason.split())} "
            f"(raised in round {self.raised_round} by {self.model})"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Obligation:
        return cls(**{**data, "severity": cast(Severity, data["severity"])})


@dataclass(frozen=True)
class Touched:
    """What the fix changed since the last reviewed head: new line numbers added per path."""

    lines: Mapping[str, frozenset[int]]

    def covers(self, path: str, line: int) -> bool:
        added = self.lines.get(path)
        if added is None:
            return False
        return any(abs(line - number) <= TOUCH_MARGIN for number in added)


@dataclass(frozen=True)
class RoundRules:
    """What a round is judged with: its number, the convergence setting, the obligations it
    asks about, what the fix touched and which paths exist."""

    round: int = 1
    converge_after: int | None = None  # None: new findings always count
    obligations: tuple[Obligation, ...] = ()
    # None: no earlier reviewed head to compare with (the whole change is new to the panel).
    touched: Touched | None = None
    known_path: Callable[[str], bool] | None = None

    def asked(self) -> dict[str, bool]:
        """The id of every obligation asked about, and whether it blocks."""
        return {item.id: item.blocking for item in self.obligations}


@dataclass(frozen=True)
class Assessed:
    """One finding of one reviewer as this round counts it."""

    model: str
    finding: Finding
    id: str
    blocking: bool
    why: str = ""  # why a blocker or major finding is advisory; "" otherwise

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "id": self.id,
            "blocking": self.blocking,
            "why": self.why,
            **self.finding.as_dict(),
        }


def assess(model: str, finding: Finding, rules: RoundRules) -> Assessed:
    """Whether `finding` blocks this round, and if a serious one does not, why."""
    ident = finding_id(finding)
    if finding.severity not in BLOCKING_SEVERITIES:
        return Assessed(model, finding, ident, False)
    why = _advisory_reason(finding, ident, rules)
    return Assessed(model, finding, ident, not why, why)


def _advisory_reason(finding: Finding, ident: str, rules: RoundRules) -> str:
    if not finding.located:
        return "names no path and line"
    if rules.known_path is not None and not rules.known_path(finding.path):
        return "names a path that is neither in the change nor in the repository"
    already = ident in {item.id for item in rules.obligations}
    converging = rules.converge_after is not None and rules.round > rules.converge_after
    touched = rules.touched
    untouched = touched is not None and not touched.covers(finding.path, finding.line)
    if converging and not already and untouched:
        return (
            f"new in round {rules.round} about code the fix did not touch "
            f"(review.converge_after: {rules.converge_after})"
        )
    return ""


def rests_on_advisory(
    assessed: Sequence[Assessed], answers: Sequence[Answer], rules: RoundRules
) -> bool:
    """A REJECT whose every serious finding the rules made advisory, and that leaves no
    blocking obligation open: it does not block. A bare REJECT (nothing made advisory) does."""
    asked = rules.asked()
    if any(item.blocking for item in assessed):
        return False
    if any(answer.status == "open" and asked.get(answer.id, True) for answer in answers):
        return False
    return any(item.why for item in assessed)


def next_obligations(
    rules: RoundRules,
    answered: Iterable[Sequence[Answer]],
    assessed: Iterable[Assessed],
    *,
    rejected: bool,
    head_sha: str,
) -> tuple[Obligation, ...]:
    """The obligations after this round. `answered` holds every panel member's answers (an
    empty one for a member without a usable verdict): an asked obligation is resolved only
    when every member answered it RESOLVED, so a missing answer leaves it open (fail
    closed). When the round rejected, its new findings are added as open obligations (the
    first reviewer to raise an id is named)."""
    members = [{answer.id: answer for answer in answers} for answers in answered]
    state: dict[str, Obligation] = {}
    for item in rules.obligations:
        given = [member.get(item.id) for member in members]
        if given and all(a is not None and a.status == "resolved" for a in given):
            reason = "; ".join(a.reason for a in given if a is not None and a.reason)
            state[item.id] = replace(item, status="resolved", answer=reason)
        else:
            still = [a.reason for a in given if a is not None and a.status == "open"]
            reason = "; ".join(still) or "not every reviewer answered it RESOLVED"
            state[item.id] = replace(item, answer=reason)
    if rejected:
        for found in assessed:
            if found.id not in state:
                state[found.id] = _obligation(found, rules.round, head_sha)
    return tuple(state.values())


def _obligation(found: Assessed, round_number: int, head_sha: str) -> Obligation:
    finding = found.finding
    return Obligation(
        id=found.id,
        severity=finding.severity,
        path=finding.path,
        line=finding.line,
        reason=finding.reason,
        model=found.model,
        raised_round=round_number,
        raised_head=head_sha,
        blocking=found.blocking,
    )


def still_open(obligations: Iterable[Obligation]) -> tuple[Obligation, ...]:
    return tuple(item for item in obligations if item.status == "open")


def for_implementer(obligations: Sequence[Obligation]) -> str:
    """The open obligations as a fix round's prompt lists them (Markdown, one per line)."""
    if not obligations:
        return "(no open review obligations)\n"
    return "".join(f"- {item.describe()}\n" for item in obligations)
