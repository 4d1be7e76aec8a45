"""Strict parsing of a reviewer's answer into a verdict and findings. Plain functions, no SDK.

The text format is always accepted, whatever protocol was asked for:

    FINDING <blocker|major|minor|nit> <path>:<line> <reason>     (zero or more)
    VERDICT: APPROVE | VERDICT: REJECT                           (the last non-empty line)

Other lines before the verdict are the reviewer's notes. Only the last non-empty line can be a
verdict: one quoted from the diff or written mid-text does not count. Whatever does not parse
is *incomplete*, never an approval: a verdict line in another spelling, a malformed FINDING
line, or an APPROVE that contradicts its own blocker finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal, cast, get_args

Severity = Literal["blocker", "major", "minor", "nit"]
SEVERITIES: tuple[str, ...] = get_args(Severity)
VerdictKind = Literal["approve", "reject", "incomplete"]

MAX_REASON_CHARS = 2000
MAX_FINDINGS = 100

_VERDICT = re.compile(r"VERDICT: (APPROVE|REJECT)")
_FINDING = re.compile(r"FINDING (\S+) (\S+):(\d+) (\S.*)")
# Any line that starts like a finding must be one: a finding that does not parse is not
# quietly dropped (it could be the reason for a REJECT, or hide one behind an APPROVE).
# Prose such as "Finding the cause took a while" is a note, not a finding.
_LOOKS_LIKE_FINDING = re.compile(
    r"(?:[-*]\s*)?finding:?\s+(?:blocker|major|minor|nit)\b", re.IGNORECASE
)
_EXACT_FINDING_WORD = re.compile(r"(?:[-*]\s*)?FINDING\b")


@dataclass(frozen=True)
class Finding:
    """One concrete problem at a line of the new version of a file."""

    severity: Severity
    path: str
    line: int
    reason: str

    def as_dict(self) -> dict[str, str | int]:
        return {
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ParsedVerdict:
    verdict: VerdictKind
    findings: tuple[Finding, ...] = ()
    notes: str = ""
    # Why the answer is incomplete; empty for approve/reject.
    problem: str = ""


def parse_verdict(text: str) -> ParsedVerdict:
    """The verdict in `text`, or an incomplete one saying what is wrong with it."""
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
    notes: list[str] = []
    for number, line in enumerate(lines[:-1], start=1):
        stripped = line.strip()
        if _EXACT_FINDING_WORD.match(stripped) or _LOOKS_LIKE_FINDING.match(stripped):
            finding = parse_finding(stripped)
            if isinstance(finding, str):
                return _incomplete(f"line {number}: {finding}")
            findings.append(finding)
        else:
            notes.append(line)
    if len(findings) > MAX_FINDINGS:
        return _incomplete(f"{len(findings)} findings (at most {MAX_FINDINGS} are read)")
    verdict: VerdictKind = "approve" if match.group(1) == "APPROVE" else "reject"
    if verdict == "approve" and any(f.severity == "blocker" for f in findings):
        return _incomplete("APPROVE contradicts a blocker finding", findings, notes)
    return ParsedVerdict(verdict=verdict, findings=tuple(findings), notes=_join(notes))


def parse_finding(line: str) -> Finding | str:
    """A `FINDING ...` line as a Finding, or what is wrong with it."""
    match = _FINDING.fullmatch(line)
    if match is None:
        return f"expected 'FINDING <{'|'.join(SEVERITIES)}> <path>:<line> <reason>': {_show(line)}"
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
