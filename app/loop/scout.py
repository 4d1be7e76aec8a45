"""The scout: reads a repository's map, recent commits and open issues, proposes tickets.

What the model is shown is fenced and stripped of hidden content (issue titles and bodies,
commit subjects and paths are other people's text); what it answers is parsed strictly
(`### PROPOSAL` ... `### END` blocks, `prompts/scout.md`) and is untrusted too: hidden
content is stripped from every proposal, mentions are defused, and a proposal without a
title, a body or an acceptance criterion is dropped with the reason.

Then the proposals are chosen (`choose`): well formed, not repeating an open issue or an
earlier proposal (`app.loop.similarity`), at most `MAX_PROPOSALS`. Fewer than
`MIN_PROPOSALS` left means nothing is opened: the scout asks for three to eight tickets,
and a run that cannot give three says so rather than opening a fraction.

Nothing here talks to GitHub; the job (`app/jobs/scout.py`) opens the chosen issues.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.controls.halt import Halted
from app.loop.metering import ModelGate
from app.loop.similarity import IssueText, Likeness, duplicate_of
from app.loop.tree_map import MAP_MAX_CHARS, repo_map
from app.repo_config import RepoConfig
from reviewers.git_source import run_git
from reviewers.model_client import Message, ModelClient
from reviewers.prompts import Template, Untrusted, fence, render
from reviewers.untrusted import one_line, strip_hidden

MIN_PROPOSALS = 3
MAX_PROPOSALS = 8
PROPOSED_LABEL = "ourobot:proposed"
SCOUT_MAX_TOKENS = 6000
SCOUT_TIMEOUT_S = 300.0
RECENT_COMMITS = 30
ISSUES_SHOWN = 100
ISSUE_EXCERPT_CHARS = 500
TITLE_MAX_CHARS = 100
BODY_MAX_CHARS = 3000
MAX_CRITERIA = 10

SCOUT_INPUT = Template(
    name="scout-input",
    source="app/loop/scout.py",
    text="""\
Propose tickets for this repository.

## Repository map

{{MAP}}

## Recent commits

{{COMMITS}}

## Open issues

{{ISSUES}}

Answer with {{MIN_PROPOSALS}} to {{MAX_PROPOSALS}} proposal blocks in the format of your
instructions.
""",
)


# ---- what the scout reads ------------------------------------------------------------------


@dataclass(frozen=True)
class RepoFacts:
    """The repository at its default branch's head, as the scout sees it."""

    base_sha: str
    sizes: dict[str, int]  # path -> bytes, every blob
    commits: tuple[str, ...]  # subjects, newest first


def read_repo_facts(git_dir: Path, base_sha: str) -> RepoFacts:
    """The map and the recent commit subjects at `base_sha` of a (bare) repository."""
    _, listing = run_git(git_dir, ["ls-tree", "-r", "-l", "-z", "--full-tree", base_sha])
    sizes: dict[str, int] = {}
    for record in listing.split("\0"):
        meta, _, name = record.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob" and parts[0] != "120000":
            sizes[name] = int(parts[3])
    _, log = run_git(
        git_dir, ["log", f"-n{RECENT_COMMITS}", "--no-merges", "--format=%s%x00", base_sha]
    )
    commits = tuple(s.strip() for s in log.split("\0") if s.strip())
    return RepoFacts(base_sha, sizes, commits)


def build_prompt(
    template: Template,
    facts: RepoFacts,
    issues: Sequence[IssueText],
    config: RepoConfig,
    *,
    constitution: str | None,
    secrets: Sequence[str],
) -> tuple[str, str]:
    """(system, user) for the scout; every outside text fenced."""
    counts = {"MIN_PROPOSALS": str(MIN_PROPOSALS), "MAX_PROPOSALS": str(MAX_PROPOSALS)}
    project = config.project
    system = render(
        template,
        {
            "PROJECT_NAME": Untrusted("project-name", project.name or "(unnamed)", "line"),
            "PROJECT_DESCRIPTION": Untrusted(
                "project-description", project.description or "(no description)", "line"
            ),
            "CONSTITUTION": Untrusted("constitution", constitution)
            if constitution is not None
            else "(This project has no constitution file.)",
            **counts,
        },
        secrets=secrets,
    )
    user = render(
        SCOUT_INPUT,
        {
            "MAP": _map(facts, secrets),
            "COMMITS": _commits(facts, secrets),
            "ISSUES": _issues(issues, secrets),
            **counts,
        },
        secrets=secrets,
    )
    return system, user


def _map(facts: RepoFacts, secrets: Sequence[str]) -> str:
    """The implementer's map, with no ticket to rank by: every folder takes its turn."""
    listing = repo_map(facts.sizes, {}, MAP_MAX_CHARS)
    return fence(Untrusted("repository-map", listing, "code"), secrets=secrets)


def _commits(facts: RepoFacts, secrets: Sequence[str]) -> str:
    if not facts.commits:
        return "(No commits to show.)"
    listing = "\n".join(f"- {one_line(subject, 200)}" for subject in facts.commits)
    return fence(Untrusted("recent-commits", listing + "\n"), secrets=secrets)


def _issues(issues: Sequence[IssueText], secrets: Sequence[str]) -> str:
    if not issues:
        return "(There are no open issues.)"
    entries = []
    for issue in issues[:ISSUES_SHOWN]:
        excerpt = " ".join(strip_hidden(issue.body).split())
        if len(excerpt) > ISSUE_EXCERPT_CHARS:
            excerpt = excerpt[: ISSUE_EXCERPT_CHARS - 3] + "..."
        entries.append(f"#{issue.number} {one_line(issue.title, 200)}\n  {excerpt or '(no body)'}")
    more = len(issues) - ISSUES_SHOWN
    if more > 0:
        entries.append(f"... and {more} more open issues not listed")
    return fence(Untrusted("open-issues", "\n".join(entries) + "\n"), secrets=secrets)


# ---- what the scout answers ----------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    title: str
    body: str
    criteria: tuple[str, ...]

    def as_issue(self) -> IssueText:
        return IssueText(None, self.title, self.body + "\n" + "\n".join(self.criteria))


@dataclass(frozen=True)
class Parsed:
    proposals: tuple[Proposal, ...]
    problems: tuple[str, ...]  # one line per block that could not be used
    blocks: int  # how many `### PROPOSAL` blocks the answer opened


_OPEN = re.compile(r"^\s{0,3}#{2,4}\s*PROPOSAL\s*$", re.IGNORECASE)
_CLOSE = re.compile(r"^\s{0,3}#{2,4}\s*END\s*$", re.IGNORECASE)
_TITLE = re.compile(r"^\s*Title\s*:\s*(.*)$", re.IGNORECASE)
_CRITERIA = re.compile(r"^\s*(?:#+\s*)?Acceptance criteria\s*:?\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
# `@name` notifies that person; a proposal has no business doing so.
_MENTION = re.compile(r"(?<![\w`])@([A-Za-z0-9][A-Za-z0-9-]{0,38}(?:/[A-Za-z0-9_-]+)?)")


def parse_proposals(answer: str) -> Parsed:
    """Every proposal block of the scout's answer, cleaned; the unusable ones as problems."""
    proposals: list[Proposal] = []
    problems: list[str] = []
    blocks = 0
    current: list[str] | None = None
    for line in strip_hidden(answer).split("\n"):
        if _OPEN.match(line):
            if current is not None:
                problems.append(f"proposal {blocks}: not closed by ### END")
            blocks += 1
            current = []
        elif _CLOSE.match(line) and current is not None:
            _take(current, blocks, proposals, problems)
            current = None
        elif current is not None:
            current.append(line)
    if current is not None:
        problems.append(f"proposal {blocks}: not closed by ### END")
    return Parsed(tuple(proposals), tuple(problems), blocks)


def _take(lines: list[str], number: int, proposals: list[Proposal], problems: list[str]) -> None:
    try:
        proposals.append(_proposal(lines))
    except ValueError as exc:
        problems.append(f"proposal {number}: {exc}")


def _proposal(lines: list[str]) -> Proposal:
    content = list(lines)
    while content and not content[0].strip():
        content.pop(0)
    title_match = _TITLE.match(content[0]) if content else None
    if title_match is None:
        raise ValueError("does not start with a `Title:` line")
    title = defuse_mentions(one_line(title_match.group(1), 1000))
    if not title:
        raise ValueError("the title is empty")
    if len(title) > TITLE_MAX_CHARS:
        raise ValueError(f"the title is longer than {TITLE_MAX_CHARS} characters")
    rest = content[1:]
    at = next((i for i, line in enumerate(rest) if _CRITERIA.match(line)), None)
    if at is None:
        raise ValueError("has no `Acceptance criteria:` section")
    body = defuse_mentions("\n".join(rest[:at]).strip())
    if not body:
        raise ValueError("says nothing between the title and the acceptance criteria")
    if len(body) > BODY_MAX_CHARS:
        raise ValueError(f"the body is longer than {BODY_MAX_CHARS} characters")
    criteria: list[str] = []
    for line in rest[at + 1 :]:
        if not line.strip():
            continue
        bullet = _BULLET.match(line)
        if bullet is None:
            raise ValueError(f"an acceptance criterion is not a list item: {one_line(line, 60)!r}")
        criteria.append(defuse_mentions(one_line(bullet.group(1), 500)))
    if not criteria:
        raise ValueError("has no acceptance criterion")
    if len(criteria) > MAX_CRITERIA:
        raise ValueError(f"has more than {MAX_CRITERIA} acceptance criteria")
    return Proposal(title, body, tuple(criteria))


def defuse_mentions(text: str) -> str:
    return _MENTION.sub(r"`@\1`", text)


# ---- which proposals are opened ------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    title: str
    why: str
    number: int | None = None  # the open issue it repeats


@dataclass
class Selection:
    """The proposals to open, in order, and why the others are not."""

    chosen: list[Proposal] = field(default_factory=list)
    duplicates: list[Skipped] = field(default_factory=list)
    over_cap: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def enough(self) -> bool:
        return len(self.chosen) >= MIN_PROPOSALS

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Selection:
        data: dict[str, Any] = json.loads(text)
        return cls(
            chosen=[Proposal(p["title"], p["body"], tuple(p["criteria"])) for p in data["chosen"]],
            duplicates=[Skipped(**d) for d in data["duplicates"]],
            over_cap=list(data["over_cap"]),
            problems=list(data["problems"]),
        )


def choose(parsed: Parsed, open_issues: Sequence[IssueText]) -> Selection:
    """Well-formed proposals that repeat no open issue and no earlier proposal, capped."""
    selection = Selection(problems=list(parsed.problems))
    kept: list[IssueText] = []
    for proposal in parsed.proposals:
        text = proposal.as_issue()
        match: Likeness | None = duplicate_of(text, open_issues)
        if match is not None:
            selection.duplicates.append(
                Skipped(proposal.title, match.describe(), match.other.number)
            )
            continue
        if duplicate_of(text, kept) is not None:
            selection.duplicates.append(Skipped(proposal.title, "repeats an earlier proposal"))
            continue
        if len(selection.chosen) == MAX_PROPOSALS:
            selection.over_cap.append(proposal.title)
            continue
        kept.append(text)
        selection.chosen.append(proposal)
    return selection


# ---- asking the model ----------------------------------------------------------------------


@dataclass(frozen=True)
class ScoutAnswer:
    text: str | None  # None: no answer (the reason is in `note`)
    note: str
    model: str | None = None


def ask_scout(
    system: str, user: str, client: ModelClient, gate: ModelGate, *, timeout_s: float
) -> ScoutAnswer:
    """The scout's answer through the spend caps; a failed or refused call is a note, a halt
    is raised."""
    try:
        answer = gate.complete(
            "scout",
            client,
            system,
            [Message("user", user)],
            max_tokens=SCOUT_MAX_TOKENS,
            timeout_s=max(1.0, min(SCOUT_TIMEOUT_S, timeout_s)),
        )
    except Halted:
        raise
    except Exception as exc:  # a model error or the budget: the run ends, saying which
        return ScoutAnswer(None, f"{type(exc).__name__}: {str(exc)[:300]}")
    model = answer.model or client.model_id
    return ScoutAnswer(answer.text, f"answered by {model}", model)
