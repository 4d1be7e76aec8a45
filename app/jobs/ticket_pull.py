"""What a cycle leaves on GitHub: the pushed branch, the pull request and the ticket's labels.

The branch is pushed from ourobot's bare mirror with the installation token in a one-command
HTTP header (`app.workspace.git`: never in the URL, a config file or a log). The pull request is
found by its head branch before one is opened, so a retry never opens a second; its body closes
the issue and carries a hidden marker. Labels are GitHub's ticket states (DESIGN §1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.commands.status_comment import marker
from app.controls.pricing import usd
from app.workspace.git import GitError, git, is_object_id
from app.workspace.mirror import MirrorError

IN_PROGRESS = "ourobot:in-progress"
BLOCKED = "ourobot:blocked"
NEEDS_HUMAN = "ourobot:needs-human"
STATE_LABELS = (IN_PROGRESS, BLOCKED, NEEDS_HUMAN)
MAX_LOG_ROWS = 30


class PushRejected(Exception):
    """git refused the push (the branch moved under us, or no permission); one line."""


def push_branch(
    mirror: Path, clone_url: str, sha: str, branch: str, *, token: str, force: bool
) -> None:
    """Make `branch` on GitHub point at `sha` (a fast-forward unless `force`)."""
    if not clone_url.startswith(("https://", "http://")) or not is_object_id(sha):
        raise MirrorError(f"refusing to push {sha[:12]!r} to {clone_url!r}")
    refspec = f"{'+' if force else ''}{sha}:refs/heads/{branch}"
    try:
        git(
            ["push", "--quiet", "--no-verify", "--porcelain", clone_url, refspec],
            token=token,
            env={"GIT_DIR": str(mirror), "GIT_ALLOW_PROTOCOL": "https:http"},
        )
    except GitError as exc:
        raise PushRejected(str(exc)) from None


@dataclass(frozen=True)
class OpenPull:
    number: int
    head_ref: str
    head_sha: str
    same_repo: bool
    author: str


def open_pulls(github: GitHub[Any], repo: str) -> list[OpenPull]:
    """The repository's open pull requests (one page of 100: the caps need only a count)."""
    owner, name = repo.split("/", 1)
    listed = github.rest.pulls.list(owner, name, state="open", per_page=100).parsed_data
    found = []
    for pull in listed:
        head_repo = getattr(pull.head, "repo", None)
        same = getattr(head_repo, "full_name", "").lower() == repo.lower()
        found.append(
            OpenPull(
                int(pull.number),
                str(pull.head.ref),
                str(pull.head.sha),
                same,
                str(getattr(pull.user, "login", "") or ""),
            )
        )
    return found


def pull_body(number: int, summary: Mapping[str, Any]) -> str:
    """`Closes #N`, the plan's summary, the iteration log, tests and cost, a hidden marker."""
    lines = [f"Closes #{number}", ""]
    plan = str(summary.get("plan") or "").strip()
    if plan:
        lines += ["### Plan", "", *_quoted(plan.splitlines()[:12]), ""]
    lines += ["### Iterations", "", "| # | phase | edits | tests |", "| --- | --- | --- | --- |"]
    for row in list(summary.get("iterations") or [])[:MAX_LOG_ROWS]:
        edits = ", ".join(f"`{e}`" for e in row.get("edits", [])[:4]) or "none"
        if row.get("refusals"):
            edits += f" (refused: {', '.join(row['refusals'][:3])})"
        lines.append(f"| {row['number']} | {row['phase']} | {edits} | {row['tests']} |")
    changes = [c for row in summary.get("iterations") or [] for c in row.get("test_changes", [])]
    if changes:
        lines += ["", "### ⚠️ Changed test expectations (declared by the implementer)", "",
                  "The harness measured these tests changing what they expect; the "
                  "implementer declared each on purpose. Check each reason against the ticket:",
                  ""]  # fmt: skip
        lines += [f"- `{_plain(c['test'])}`: {_plain(c['why'])}" for c in changes[:MAX_LOG_ROWS]]
    commands = [c for row in summary.get("iterations") or [] for c in row.get("commands", [])]
    if commands:
        lines += ["", f"**Steps:** {summary.get('steps', 0)} model turn(s), "
                  f"{len(commands)} command(s) run in the sandbox:", ""]  # fmt: skip
        lines += [f"- `{_plain(c['command'])}`: {_ended(c)}" for c in commands[:MAX_LOG_ROWS]]
    measured = [str(line) for line in summary.get("measured") or []]
    if measured:
        lines += ["", "### What was measured", "", *[f"- {line}" for line in measured]]
    unsandboxed = [str(n) for n in summary.get("notes") or [] if str(n).startswith("sandbox: ")]
    if unsandboxed:
        lines += [
            "",
            "### Sandbox",
            "",
            *[f"> **Warning:** {n.removeprefix('sandbox: ')}" for n in unsandboxed],
        ]
    lines += [
        "",
        f"**Tests:** {summary.get('tests')} (baseline at the base: {summary.get('baseline')}).",
        f"**Cost:** {usd(int(summary.get('cost_micro_usd') or 0))} in "
        f"{summary.get('model_calls', 0)} model call(s), counted against "
        f"{summary.get('ticket_key')}.",
        "",
        "The guards and the review panel check this pull request's head; a person merges it.",
        marker(f"pr.issue-{number}"),
    ]
    return "\n".join(lines) + "\n"


def _ended(command: Mapping[str, Any]) -> str:
    code = command.get("exit_code")
    return f"exit {code}" if code is not None else _plain(command.get("summary", "stopped"))


def _plain(text: object) -> str:
    """Untrusted text on one line, without the characters that would end a code span."""
    return " ".join(str(text).replace("`", "'").split())[:300]


def _quoted(lines: Iterable[str]) -> list[str]:
    return [f"> {line}" if line.strip() else ">" for line in lines]


def find_or_open_pull(
    github: GitHub[Any],
    repo: str,
    *,
    branch: str,
    base: str,
    title: str,
    body: str,
    known: list[OpenPull] | None,
) -> int:
    """The open pull request from `branch` (found in `known` or asked), else a new one."""
    owner, name = repo.split("/", 1)
    if known is None:
        listed = github.rest.pulls.list(
            owner, name, state="open", head=f"{owner}:{branch}", per_page=10
        ).parsed_data
        known = [
            OpenPull(int(p.number), str(p.head.ref), str(p.head.sha), True, "") for p in listed
        ]
    for pull in known:
        if pull.head_ref == branch and pull.same_repo:
            return pull.number
    made = github.rest.pulls.create(
        owner, name, title=title, head=branch, base=base, body=body
    ).parsed_data
    return int(made.number)


def set_state_label(
    github: GitHub[Any], repo: str, number: int, label: str | None, current: Iterable[str]
) -> None:
    """The ticket's state label is `label` (or none): add it, remove the other state labels it
    carries (`current`: its labels as last seen)."""
    owner, name = repo.split("/", 1)
    have = set(current)
    if label is not None and label not in have:
        github.rest.issues.add_labels(owner, name, number, labels=[label])
    for other in STATE_LABELS:
        if other != label and other in have:
            try:
                github.rest.issues.remove_label(owner, name, number, other)
            except RequestFailed as exc:
                if exc.response.status_code != 404:
                    raise
