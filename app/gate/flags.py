"""The conditions that are one fact each: `hold`, `halt`, `draft`, `mergeable`, `up-to-date`.

`up-to-date` is what makes the tree that lands the tree that was tested: `sha=` on the merge
call pins the head, not the base, so H must already contain the base branch's current head
(`behind_by == 0`). GitHub's "not computed yet" (null) is an unknown, and unknown is not yes,
for `mergeable` as for `behind_by`.
"""

from __future__ import annotations

from app.gate.state import Field
from app.gate.verdict import Verdict

HOLD_LABEL = "ourobot:hold"


def hold(root: Field) -> Verdict:
    labels = root.get("pr").get("labels").names()
    if any(label.casefold() == HOLD_LABEL for label in labels):
        return Verdict.missing(f"the {HOLD_LABEL} label is set (/ourobot unhold removes it)")
    return Verdict.met(f"no {HOLD_LABEL} label")


def halt(root: Field) -> Verdict:
    if root.get("halted").boolean():
        return Verdict.missing("ourobot is halted: nothing merges until an operator resumes it")
    return Verdict.met("ourobot is not halted")


def draft(root: Field) -> Verdict:
    if root.get("pr").get("draft").boolean():
        return Verdict.missing("the pull request is a draft")
    return Verdict.met("not a draft")


def mergeable(root: Field) -> Verdict:
    value = root.get("pr").get("mergeable")
    if value.is_null():
        return Verdict.missing("GitHub has not computed whether it merges cleanly yet")
    if not value.boolean():
        return Verdict.missing("GitHub reports it does not merge cleanly into the base")
    return Verdict.met("merges cleanly into the base")


def up_to_date(root: Field) -> Verdict:
    if not root.get("config").get("merge").get("require_up_to_date").boolean():
        return Verdict.met("merge.require_up_to_date is false")
    behind = root.get("pr").get("behind_by")
    if behind.is_null():
        return Verdict.missing(
            "unknown whether the head contains the base branch's head (behind_by is null)"
        )
    count = behind.integer(minimum=0)
    if count:
        plural = "s" if count != 1 else ""
        return Verdict.missing(
            f"the head is {count} commit{plural} behind the base branch: the merged tree "
            "would be one nobody tested"
        )
    return Verdict.met("the head contains the base branch's head (behind_by 0)")
