"""Strict parsing of a reviewer's answer into a verdict and findings. Plain functions, no SDK.

The text format is always accepted, whatever protocol was asked for:

    RESOLVED <id> <why>   |   OPEN <id> <why>                  (one per open obligation asked)
    FINDING <blocker|major|minor|nit> <path>:<line> <reason>     (zero or more)
    FINDING <blocker|major|minor|nit> - <reason>                 (no location: advisory)
    VERDICT: APPROVE | VERDICT: REJECT                           (the last non-empty line)

Other lines before the verdict are the reviewer's notes. Only the last non-empty line can be a
verdict: one quoted from the diff or written mid-text does not count. Whatever does not parse
is *incomplete*, never an approval: a verdict line in another spelling, a malformed FINDING,
RESOLVED or OPEN line, an obligation left unanswered, answered twice or not asked about, an
APPROVE that contradicts its own blocker finding, or one that leaves a blocking obligation open.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal, cast, get_args

Severity = Literal["blocker", "major", "minor", "nit"]
SEVERITIES: tuple[str, ...] = get_args(Severity)
VerdictKind = Literal["approve", "reject", "incomplete"]
AnswerStatus = Literal["resolved", "open"]

MAX_REASON_CHARS = 2000
MAX_FINDINGS = 100

_VERDICT = re.compile(r"VERDICT: (APPROVE|REJECT)")
_FINDING = re.compile(r"FINDING (\S+) (\S+):(\d+) (\S.*)")
_UNLOCATED = re.compile(r"FINDING (\S+) - (\S.*)")
# An obligation's id (see `reviewers.obligations.finding_id`) and the answer to it.
OBLIGATION_ID = re.compile(r"F-[0-9a-f]{8}")
_ANSWER = re.compile(r"(RESOLVED|OPEN) (\S+)(?: (\S.*))?")
_ANSWER_WORD = re.compile(r"(?:[-*]\s*)?(?:RESOLVED|OPEN)\b")
# Any line that starts like a finding must be one: a finding that does not parse is not
# quietly dropped (it could be the reason for a REJECT, or hide one behind an APPROVE).
# Prose such as "Finding the cause took a while" is a note, not a finding.
_LOOKS_LIKE_FINDING = re.compile(
    r"(?:[-*]\s*)?finding:?\s+(?:blocker|major|minor|nit)\b", re.IGNORECASE
)
_EXACT_FINDING_WORD = re.compile(r"(?:[-*]\s*)?FINDING\b")


@dataclass(frozen=True)
class Finding:
    """One problem at a line of the new version of a file; `path` "" and `line` 0 when the
    reviewer named no location (such a finding is advisory, never blocking)."""

    severity: Severity
    path: str
    line: int
    reason: str

    @property
    def located(self) -> bool:
        return bool(self.path) and self.line >= 1

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.located else "(no location)"

    def as_dict(self) -> dict[str, str | int | None]:
        return {
            "severity": self.severity,
            "path": self.path if self.located else None,
            "line": self.line if self.located else None,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Answer:
    """A reviewer's answer to one open obligation of an earlier round."""

    id: str
    status: AnswerStatus
    reason: str


@dataclass(frozen=True)
class ParsedVerdict:
    verdict: VerdictKind
    findings: tuple[Finding, ...] = ()
    notes: str = ""
    # Why the answer is incomplete; empty for approve/reject.
    problem: str = ""
    answers: tuple[Answer, ...] = ()


def parse_verdict(text: str, asked: Mapping[str, bool] | None = None) -> ParsedVerdict:
    """The verdict in `text`, or an incomplete one saying what is wrong with it.

    `asked` maps the id of every open obligation the prompt listed to whether it blocks: each
    must be answered exactly once, and an APPROVE cannot leave a blocking one open."""
    asked = asked or {}
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return _incomplete("the answer is empty")
    last = lines[-1].strip()
    match = _VERDICT.fullmatch(last)
    if match is None:
        return _incomplete(
            f"the last line is not 'VERDICT: APPROVE' or 'VERDICT: REJECT': {_show(last)}"
        )
    findings: list[Finding] = []
    answers: dict[str, Answer] = {}
    notes: list[str] = []
    for number, line in enumerate(lines[:-1], start=1):
        stripped = line.strip()
        if _EXACT_FINDING_WORD.match(stripped) or _LOOKS_LIKE_FINDING.match(stripped):
            finding = parse_finding(stripped)
            if isinstance(finding, str):
                return _incomplete(f"line {number}: {finding}")
            findings.append(finding)
        elif _ANSWER_WORD.match(stripped):
            answer = parse_answer(stripped, asked)
            if isinstance(answer, str):
                return _incomplete(f"line {number}: {answer}")
            if answer.id in answers:
                return _incomplete(f"line {number}: obligation {answer.id} is answered twice")
            answers[answer.id] = answer
        else:
            notes.append(line)
    if len(findings) > MAX_FINDINGS:
        return _incomplete(f"{len(findings)} findings (at most {MAX_FINDINGS} are read)")
    unanswered = [ident for ident in asked if ident not in answers]
    if unanswered:
        return _incomplete(
            f"obligation(s) not answered with RESOLVED or OPEN: {', '.join(unanswered)}",
            findings,
            notes,
        )
    verdict: VerdictKind = "approve" if match.group(1) == "APPROVE" else "reject"
    if verdict == "approve" and any(f.severity == "blocker" for f in findings):
        return _incomplete("APPROVE contradicts a blocker finding", findings, notes)
    still_open = [a.id for a in answers.values() if a.status == "open" and asked[a.id]]
    if verdict == "approve" and still_open:
        return _incomplete(
            f"APPROVE leaves blocking obligation(s) open: {', '.join(still_open)}", findings, notes
        )
    return ParsedVerdict(
        verdict=verdict,
        findings=tuple(findings),
        notes=_join(notes),
        answers=tuple(answers[ident] for ident in asked),
    )


def parse_answer(line: str, asked: Mapping[str, bool]) -> Answer | str:
    """A `RESOLVED <id> <why>` or `OPEN <id> <why>` line, or what is wrong with it."""
    match = _ANSWER.fullmatch(line)
    if match is None:
        return f"expected 'RESOLVED <id> <why>' or 'OPEN <id> <why>': {_show(line)}"
    word, ident, reason = match.group(1), match.group(2), (match.group(3) or "").strip()
    if ident not in asked:
        return f"{word} {_show(ident)}: no such open obligation was asked about"
    if word == "OPEN" and not reason:
        return f"OPEN {ident} needs a reason: why it is still open"
    if len(reason) > MAX_REASON_CHARS:
        return f"reason longer than {MAX_REASON_CHARS} characters"
    return Answer(ident, "open" if word == "OPEN" else "resolved", reason)


def parse_finding(line: str) -> Finding | str:
    """A `FINDING ...` line as a Finding, or what is wrong with it."""
    unlocated = _UNLOCATED.fullmatch(line)
    if unlocated is not None:
        severity, reason = unlocated.groups()
        if severity not in SEVERITIES:
            return f"unknown severity {severity!r} (expected {', '.join(SEVERITIES)})"
        if len(reason) > MAX_REASON_CHARS:
            return f"reason longer than {MAX_REASON_CHARS} characters"
        return Finding(cast(Severity, severity), "", 0, reason.strip())
    match = _FINDING.fullmatch(line)
    if match is None:
        return (
            f"expected 'FINDING <{'|'.join(SEVERITIES)}> <path>:<line> <reason>' "
            f"(or '- <reason>' without a location): {_show(line)}"
        )
    severity, path, number, reason = match.groups()
    if severity not in SEVERITIES:
        return f"unknown severity {severity!r} (expected {', '.join(SEVERITIES)})"
    problem = _path_problem(path)
    if problem:
        return problem
    line_number = int(number)
    if line_number < 1:
        return f"line number must be at least 1, got {line_number}"
    if len(reason) > MAX_REASON_CHARS:
        return f"reason longer than {MAX_REASON_CHARS} characters"
    return Finding(cast(Severity, severity), path, line_number, reason.strip())


def _path_problem(path: str) -> str:
    if path.startswith("/") or "\\" in path:
        return f"path must be relative to the repository root with '/': {_show(path)}"
    parts = PurePosixPath(path).parts
    if any(part in ("..", ".") for part in parts) or path.endswith("/"):
        return f"path must name a file inside the repository: {_show(path)}"
    return ""


def _incomplete(
    problem: str, findings: list[Finding] | None = None, notes: list[str] | None = None
) -> ParsedVerdict:
    return ParsedVerdict(
        verdict="incomplete",
        findings=tuple(findings or ()),
        notes=_join(notes or []),
        problem=problem,
    )


def _join(lines: list[str]) -> str:
    return "\n".join(lines).strip()


def _show(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")
