"""`/ourobot override <guards|review> <reason>`: what may be overridden and what the override
says. A person with maintain permission or more accepts a true-but-acceptable finding on the
current head only: ourobot re-posts that check as success on H, naming them and their reason.
It is a new run by ourobot's own App on that one commit, so a push (a new head) starts without
it, and the ledger keeps who accepted what.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.gate.checks import GUARDS_CHECK, REVIEW_CHECK
from app.guards.result import markdown_cell

OVERRIDABLE = {"guards": GUARDS_CHECK, "review": REVIEW_CHECK}
MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class Override:
    target: Literal["guards", "review"]
    reason: str

    @property
    def check_name(self) -> str:
        return OVERRIDABLE[self.target]


class OverrideRefused(ValueError):
    """The command is not an override ourobot can apply; the message says why, for the reply."""


def parse_override(args: tuple[str, ...] | list[str]) -> Override:
    if not args:
        raise OverrideRefused("say which check: `/ourobot override guards <reason>` or `review`")
    target: Literal["guards", "review"]
    if args[0].lower() == "guards":
        target = "guards"
    elif args[0].lower() == "review":
        target = "review"
    else:
        raise OverrideRefused(
            f"only `guards` or `review` can be overridden, not `{markdown_cell(args[0])}`"
        )
    reason = " ".join(args[1:]).strip()
    if not reason:
        raise OverrideRefused(
            f"an override needs a reason: `/ourobot override {target} <why it is acceptable>`"
        )
    return Override(target, reason[:MAX_REASON_CHARS])


def override_summary(override: Override, *, login: str, head_sha: str, number: int) -> str:
    """The re-posted check's summary: who, why, on which commit, and that a push clears it."""
    return "\n".join(
        [
            f"**Overridden** by @{markdown_cell(login)} on pull request #{number}, for head "
            f"commit `{head_sha}` only.",
            "",
            f"Reason: {markdown_cell(override.reason)}",
            "",
            f"The {override.check_name} verdict on this commit stays in its earlier run. A push "
            "makes a new head, and the check runs again there without this override.",
        ]
    )
