"""A pull request's review rounds: which round this is, the obligations it must answer, what
the fix touched, and what the panel has cost the pull request so far.

Read from the stored publications of the pull request (`review_results`), so a round needs no
state of its own: the newest panel verdict on an earlier head carries the obligations still
open and its round number.

`open_obligations(store, repo=..., number=..., head_sha=...)` is what a fix round asks for:
the obligations a rejecting review left open, with their ids, for the implementer's prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.controls.pricing import usd
from app.errors import UserError
from app.jobs.review_publish import SPEND_HEADING, Publication, StoredResult, pull_results
from app.repo_config import RepoConfig
from app.store import Store
from reviewers.diff import FileDiff
from reviewers.git_source import Change, read_change, run_git
from reviewers.obligations import Obligation, RoundRules, Touched


def open_obligations(
    store: Store, *, repo: str, number: int, head_sha: str | None = None
) -> tuple[Obligation, ...]:
    """The open obligations of the newest panel verdict on the pull request (on `head_sha`,
    when given: the head a fix round starts from), each with its stable id."""
    for stored in reversed(pull_results(store, repo=repo, number=number)):
        pub = stored.publication
        if pub.round and (head_sha is None or pub.head_sha == head_sha):
            return pub.open_obligations()
    return ()


def last_round(history: Sequence[StoredResult], head_sha: str) -> Publication | None:
    """The newest panel verdict (asked or reused) on another head of the pull request."""
    for stored in reversed(history):
        pub = stored.publication
        if pub.round and pub.head_sha != head_sha:
            return pub
    return None


def round_rules(
    mirror: Path, change: Change, config: RepoConfig, history: Sequence[StoredResult]
) -> RoundRules:
    """This round's rules: one more than the last round, its open obligations, what changed
    since the head it reviewed, and which paths exist at this head."""
    paths = _paths_at(mirror, change)
    known = lambda path: path in paths  # noqa: E731 - a predicate over this head's paths
    last = last_round(history, change.head_sha)
    if last is None:
        return RoundRules(1, config.review.converge_after, (), None, known)
    return RoundRules(
        last.round + 1,
        config.review.converge_after,
        last.open_obligations(),
        _touched(mirror, last.head_sha, change.head_sha),
        known,
    )


def _paths_at(mirror: Path, change: Change) -> frozenset[str]:
    _, listing = run_git(
        mirror, ["ls-tree", "-r", "-z", "--name-only", "--end-of-options", change.head_sha]
    )
    return frozenset([*filter(None, listing.split("\0")), *(d.path for d in change.files)])


def _touched(mirror: Path, before: str, after: str) -> Touched | None:
    """The lines added since `before`; None when that head is gone from the mirror (then no
    finding can be told to be about untouched code: fail closed, it keeps blocking)."""
    try:
        files = read_change(mirror, before, after).files
    except UserError:
        return None
    return Touched({diff.path: added_lines(diff) for diff in files})


def added_lines(diff: FileDiff) -> frozenset[int]:
    """The new file's line numbers this diff adds."""
    found: list[int] = []
    for hunk in diff.hunks:
        number = hunk.new_start
        for line in hunk.lines:
            if line.startswith("+"):
                found.append(number)
            if line[:1] in (" ", "+"):
                number += 1
    return frozenset(found)


def spend_section(history: Sequence[StoredResult], this: Publication) -> str:
    """What the panel cost this head and the pull request so far, and what was saved."""
    pubs = [stored.publication for stored in history if stored.key != this.run_key] + [this]
    total = sum(pub.cost_micro_usd for pub in pubs)
    rounds = sum(1 for pub in pubs if pub.kind == "panel" and pub.round)
    reused = [pub for pub in pubs if pub.kind == "reused"]
    skipped = [pub for pub in pubs if pub.kind == "guards-failed"]
    lines = [
        "",
        SPEND_HEADING,
        "",
        f"- This head: {usd(this.cost_micro_usd)} in {this.requests} model request(s).",
        f"- This pull request so far: {usd(total)} in "
        f"{sum(pub.requests for pub in pubs)} model request(s) over {rounds} panel round(s).",
        f"- Saved by reusing verdicts for identical inputs: "
        f"{usd(sum(pub.saved_micro_usd for pub in reused))} on {len(reused)} head(s).",
        f"- Saved by running the guards first: {len(skipped)} head(s) not sent to the panel "
        f"({sum(pub.requests_saved for pub in skipped)} model request(s) not made).",
    ]
    return "\n".join(lines)
