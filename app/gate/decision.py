"""The merge decision: every condition over one snapshot of a pull request, each met or missing
with its reason. Merge only when all are met.

A pure function over plain data (the state format of docs/gate.md): the App, the Action and
`ourobot gate check` call the same one. A condition that cannot read a field it needs fails
with the field's path; nothing here can turn "could not tell" into "met".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.gate import checks, flags, reviews
from app.gate.state import Field, Malformed
from app.gate.verdict import Verdict

Evaluate = Callable[[Field], Verdict]
Step = Literal["merge", "update-branch", "wait"]

# The order is the contract's order; reports list conditions this way.
CONDITIONS: tuple[tuple[str, Evaluate], ...] = (
    ("ci", checks.ci),
    ("guards", lambda root: checks.ourobot_check(root, checks.GUARDS_CHECK)),
    ("review", lambda root: checks.ourobot_check(root, checks.REVIEW_CHECK)),
    ("approval", reviews.approval),
    ("changes-requested", reviews.changes_requested),
    ("owner-approval", reviews.owner_approval),
    ("hold", flags.hold),
    ("halt", flags.halt),
    ("draft", flags.draft),
    ("mergeable", flags.mergeable),
    ("up-to-date", flags.up_to_date),
)
CONDITION_NAMES: tuple[str, ...] = tuple(name for name, _ in CONDITIONS)


@dataclass(frozen=True)
class Condition:
    name: str
    met: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"condition": self.name, "met": self.met, "reason": self.reason}


@dataclass(frozen=True)
class Decision:
    conditions: tuple[Condition, ...]
    head_sha: str | None  # None when the state names no readable head

    @property
    def merge(self) -> bool:
        return all(condition.met for condition in self.conditions)

    @property
    def verdict(self) -> Literal["merge", "wait"]:
        return "merge" if self.merge else "wait"

    @property
    def missing(self) -> tuple[Condition, ...]:
        return tuple(condition for condition in self.conditions if not condition.met)

    def condition(self, name: str) -> Condition:
        return next(c for c in self.conditions if c.name == name)

    def only_missing(self, *names: str) -> bool:
        """True when something is missing and it is exactly (a subset of) `names`."""
        return bool(self.missing) and all(c.name in names for c in self.missing)

    def to_dict(self) -> dict[str, Any]:
        """The `--json` document: exactly `decision` and `missing`."""
        return {
            "decision": self.verdict,
            "missing": [{"condition": c.name, "reason": c.reason} for c in self.missing],
        }

    def evidence(self) -> list[dict[str, Any]]:
        """Every condition with its reason: what a ledger row records."""
        return [condition.to_dict() for condition in self.conditions]


def decide(state: Mapping[str, Any]) -> Decision:
    root = Field.root(state)
    results = []
    for name, evaluate in CONDITIONS:
        try:
            verdict = evaluate(root)
        except Malformed as exc:
            verdict = Verdict.missing(str(exc))
        results.append(Condition(name, verdict.is_met, verdict.reason))
    try:
        head: str | None = root.get("pr").get("head_sha").sha()
    except Malformed:
        head = None
    return Decision(tuple(results), head)


def next_step(decision: Decision, *, ourobot_pr: bool, merge_requested: bool) -> Step:
    """What to do with a decision: merge when everything holds and the pull request is
    ourobot's or a writer asked for it; update ourobot's own branch when up-to-date is the only
    thing missing (a person's branch is theirs to update); otherwise wait."""
    if decision.merge:
        return "merge" if ourobot_pr or merge_requested else "wait"
    if ourobot_pr and decision.only_missing("up-to-date"):
        return "update-branch"
    return "wait"
