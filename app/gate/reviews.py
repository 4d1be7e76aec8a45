"""The conditions read from reviews: `approval`, `changes-requested` and `owner-approval`.

Each reviewer's latest APPROVED, CHANGES_REQUESTED or DISMISSED review (highest id) is the one
that counts; COMMENTED and PENDING reviews change nothing. An approval counts only on the head
SHA itself (`commit_id == H`): one given before the last push approved a tree that is no longer
the one that would land. A reviewer counts as a person only when GitHub says `User` and the
login carries no `[bot]` suffix; permission is the reviewer's on the repository, as GitHub
reports it.

A reviewer whose latest review cannot be read makes an answer unknown only where it could
change it: it cannot take away someone else's approval, but it could be a missing approval or
a change request nobody can rule out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.gate.latest import Keyed
from app.gate.state import Field, Malformed
from app.gate.verdict import Verdict, short

REVIEW_STATES = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED", "COMMENTED", "PENDING")
COUNTING_STATES = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
PERMISSIONS = ("none", "read", "triage", "write", "maintain", "admin")
WRITE_OR_ABOVE = ("write", "maintain", "admin")
ADMIN = ("admin",)
MODES = ("light", "advanced", "pro")


def _counts(entry: Field) -> bool:
    return entry.get("state").choice(REVIEW_STATES) in COUNTING_STATES


def _changes_nothing(entry: Field) -> bool:
    try:
        return not _counts(entry)
    except Malformed:
        return False


@dataclass
class Reviews:
    keyed: Keyed

    @classmethod
    def read(cls, root: Field) -> Reviews:
        keyed = Keyed("review")
        for entry in root.get("reviews").items():
            if not _changes_nothing(entry):
                keyed.add(entry, "user", fold=True)
        return cls(keyed)

    def latest(self) -> Iterator[tuple[str, Field | Malformed]]:
        """Each reviewer's login and latest counting review (or why it cannot be known)."""
        for key in self.keyed.groups:
            login = self.keyed.labels[key]
            try:
                found = self.keyed.latest(key, _counts, mind_unkeyed=False)
            except Malformed as exc:
                yield login, exc
                continue
            if found is not None:
                yield login, found

    def stray(self) -> Malformed | None:
        return self.keyed.stray(_counts)


# ----- three-valued tests over one review ---------------------------------------------------------
Test = Callable[[], str | None]
"""None when the review passes the test, else why not; raises Malformed when it cannot tell."""


def _judge(tests: list[Test]) -> str | None:
    """A definite "no" from any test wins over a broken field in another: a review that is
    not an approval of H is not one, whatever else about it is unreadable."""
    broken: Malformed | None = None
    for test in tests:
        try:
            refusal = test()
        except Malformed as exc:
            broken = broken or exc
            continue
        if refusal is not None:
            return refusal
    if broken is not None:
        raise broken
    return None


def _is_person(review: Field, login: str) -> str | None:
    kind = review.get("user_type").text()
    if kind != "User" or login.endswith("[bot]"):
        return f"{login} is not a person ({kind})"
    return None


def _approval_tests(
    review: Field, login: str, head: str, author: Field, allowed: tuple[str, ...]
) -> list[Test]:
    def approved() -> str | None:
        state = review.get("state").choice(REVIEW_STATES)
        return None if state == "APPROVED" else f"{login}'s latest review is {state}"

    def on_head() -> str | None:
        commit = review.get("commit_id")
        if not commit.is_null() and commit.sha() == head:
            return None
        where = "a commit that no longer exists" if commit.value is None else short(commit.sha())
        return f"{login} approved {where}, not the head {short(head)}"

    def not_author() -> str | None:
        if login.casefold() == author.text().casefold():
            return f"{login} is the author"
        return None

    def permitted() -> str | None:
        level = review.get("permission").choice(PERMISSIONS)
        return None if level in allowed else f"{login} has {level} access"

    return [approved, on_head, lambda: _is_person(review, login), not_author, permitted]


def approval_by(root: Field, allowed: tuple[str, ...], who: str) -> Verdict:
    """Met when some reviewer with one of the `allowed` permissions, a person and not the
    author, has an APPROVED latest review on H."""
    head = root.get("pr").get("head_sha").sha()
    author = root.get("pr").get("author")
    reviews = Reviews.read(root)
    unknown: list[str] = []
    notes: list[str] = []
    for login, latest in reviews.latest():
        if isinstance(latest, Malformed):
            unknown.append(str(latest))
            continue
        try:
            refusal = _judge(_approval_tests(latest, login, head, author, allowed))
        except Malformed as exc:
            unknown.append(str(exc))
            continue
        if refusal is None:
            level = latest.get("permission").value
            ident = latest.get("id").value
            return Verdict.met(f"{login} ({level}) approved {short(head)} in review {ident}")
        notes.append(refusal)
    if (stray := reviews.stray()) is not None:
        unknown.append(str(stray))
    if unknown:
        return Verdict.missing("; ".join(unknown))
    reason = f"no approval of {short(head)} by {who}"
    return Verdict.missing(reason + (": " + "; ".join(notes) if notes else ""))


WRITER = "a person with write access who is not the author"


def approval(root: Field) -> Verdict:
    required = root.get("config").get("merge").get("require_human_approval").boolean()
    if not required:
        return Verdict.met("merge.require_human_approval is false")
    return approval_by(root, WRITE_OR_ABOVE, WRITER)


def changes_requested(root: Field) -> Verdict:
    reviews = Reviews.read(root)
    unknown: list[str] = []
    blockers: list[str] = []
    for login, latest in reviews.latest():
        try:
            if isinstance(latest, Malformed):
                raise latest
            if latest.get("state").choice(REVIEW_STATES) != "CHANGES_REQUESTED":
                continue
            level = latest.get("permission").choice(PERMISSIONS)
        except Malformed as exc:
            unknown.append(str(exc))
            continue
        if level in WRITE_OR_ABOVE:
            ident = latest.get("id").value
            blockers.append(f"{login} ({level}) requested changes in review {ident}")
    if (stray := reviews.stray()) is not None:
        unknown.append(str(stray))
    if blockers or unknown:
        return Verdict.missing("; ".join(blockers + unknown))
    return Verdict.met("no writer's latest review requests changes")


def owner_approval(root: Field) -> Verdict:
    mode = root.get("config").get("mode").choice(MODES)
    if mode != "pro":
        return Verdict.met(f"not needed in {mode} mode")
    if not root.get("pr").get("touches_protected").boolean():
        return Verdict.met("pro mode; no protected path changed")
    verdict = approval_by(root, ADMIN, "an admin who is not the author")
    if verdict.is_met:
        return verdict
    return Verdict.missing(f"pro mode and a protected path changed: {verdict.reason}")
