"""The review panel: reviewers in parallel, each bounded in time, and the quorum decision.

Pass = at least `quorum` APPROVE verdicts and no REJECT. Any REJECT fails with its findings.
A timeout, an error or an unparseable answer is *incomplete*; fewer approvals than the quorum
is a failure for incomplete evidence, never a success. With `review.context: max` a scope
reviewer is asked once the quorum has passed: the panel passes only if it approves too (a
scope REJECT fails "rejected", no usable scope verdict fails "incomplete"). `decide` is a plain
function over plain data; `run_panel` adds threads and a deadline around it, and imports no
model SDK.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from reviewers.context import ReviewPrompt
from reviewers.model_client import ModelClient
from reviewers.obligations import RoundRules, assess, next_obligations, rests_on_advisory
from reviewers.result import Conclusion, ModelVerdict, PanelResult, Reason, ScopeReview
from reviewers.reviewer import DEFAULT_MAX_TOKENS, BeforeCall, review
from reviewers.verdict import VerdictKind

# Told of each verdict as it arrives (and of each timeout at the deadline), from the thread that
# runs the panel: a review may take minutes, and the person waiting should see it move.
OnVerdict = Callable[[ModelVerdict], None]


@dataclass(frozen=True)
class Decision:
    conclusion: Conclusion
    reason: Reason
    detail: str


def decide(
    verdicts: Sequence[VerdictKind],
    quorum: int,
    *,
    budget_stopped: int = 0,
    scope_complete: bool = True,
) -> Decision:
    """The panel's conclusion from its members' verdicts.

    `budget_stopped` counts members whose call the spend cap refused; `scope_complete` is
    False when a required scope review could not be done.
    """
    if quorum < 1:
        raise ValueError("a quorum below 1 would pass a change nobody approved")
    approvals = sum(1 for verdict in verdicts if verdict == "approve")
    rejections = sum(1 for verdict in verdicts if verdict == "reject")
    missing = len(verdicts) - approvals - rejections
    if rejections:
        return Decision(
            "failure", "rejected", f"{rejections} of {len(verdicts)} reviewers rejected the change."
        )
    if approvals >= quorum and scope_complete:
        return Decision(
            "success", "approved", f"{approvals} of {len(verdicts)} reviewers approved."
        )
    if budget_stopped:
        return Decision(
            "failure",
            "budget",
            f"Budget exhausted: {budget_stopped} reviewer call(s) were refused by the spend cap.",
        )
    if approvals >= quorum:
        return Decision(
            "failure", "incomplete", "Incomplete evidence: the required scope review is missing."
        )
    return Decision(
        "failure",
        "incomplete",
        f"Incomplete evidence: {approvals} approval(s), the quorum is {quorum} "
        f"({missing} reviewer(s) without a usable verdict).",
    )


@dataclass(frozen=True)
class PanelMember:
    model: str  # as the config names it, e.g. "openai:gpt-5"
    client: ModelClient


@dataclass(frozen=True)
class ScopeRequest:
    """The scope reviewer for `review.context: max`: who answers, on which prompt."""

    member: PanelMember
    prompt: ReviewPrompt


def scope_review_for(context: str) -> ScopeReview:
    """The scope-review row for `review.context` before any scope reviewer answered. `max`
    without a `ScopeRequest` given to `run_panel` stays unavailable and the panel fails
    closed rather than pretending the review happened."""
    if context == "low":
        return ScopeReview("skipped", "review.context is low")
    return ScopeReview(
        "unavailable", "review.context is max but no scope reviewer was given to the panel"
    )


def decide_scope(panel: Decision, scope: ScopeReview) -> Decision:
    """The panel's decision once the scope reviewer has answered (or not)."""
    if panel.conclusion != "success" or scope.status in ("skipped", "approve"):
        return panel
    if scope.status == "reject":
        return Decision("failure", "rejected", "The scope reviewer rejected the change.")
    if scope.verdict is not None and scope.verdict.error_kind == "budget":
        return Decision(
            "failure", "budget", "Budget exhausted: the scope review was refused by the spend cap."
        )
    return Decision(
        "failure",
        "incomplete",
        f"Incomplete evidence: the required scope review is missing ({scope.reason}).",
    )


def run_panel(
    members: Sequence[PanelMember],
    prompt: ReviewPrompt,
    *,
    quorum: int,
    timeout_s: float,
    base_sha: str,
    head_sha: str,
    scope: ScopeReview,
    scope_request: ScopeRequest | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    before_call: BeforeCall | None = None,
    on_verdict: OnVerdict | None = None,
    rules: RoundRules | None = None,
) -> PanelResult:
    """Every member reviews `prompt` at once; the result after all answered or `timeout_s`.
    Then, if the quorum passed and `scope_request` is given, the scope reviewer within its
    own `timeout_s` (asked only then: a failed panel needs no scope verdict to fail)."""
    if not members:
        raise ValueError("a panel needs at least one member")
    rules = rules or RoundRules()
    if dict(prompt.asked) != rules.asked():
        raise ValueError("the prompt must list exactly the obligations the round asks about")
    verdicts = tuple(
        settle(verdict, rules)
        for verdict in _ask_all(members, prompt, timeout_s, max_tokens, before_call, on_verdict)
    )
    decision = decide(
        [verdict.verdict for verdict in verdicts],
        quorum,
        budget_stopped=sum(1 for verdict in verdicts if verdict.error_kind == "budget"),
        scope_complete=scope.status != "unavailable" or scope_request is not None,
    )
    if scope_request is not None:
        if decision.conclusion == "success":
            asked = _ask_all(
                [scope_request.member],
                scope_request.prompt,
                timeout_s,
                max_tokens,
                before_call,
                on_verdict,
            )
            scope = ScopeReview.from_verdict(asked[0])
        else:
            scope = ScopeReview("skipped", "not asked: the panel failed without it")
        decision = decide_scope(decision, scope)
    usable = [v for v in verdicts if v.verdict != "incomplete"]
    obligations = next_obligations(
        rules,
        [v.answers if v.verdict != "incomplete" else () for v in verdicts],
        [a for v in usable for a in v.assessed],
        rejected=decision.reason == "rejected",
        head_sha=head_sha,
    )
    return PanelResult(
        conclusion=decision.conclusion,
        reason=decision.reason,
        detail=decision.detail,
        verdicts=verdicts,
        quorum=quorum,
        base_sha=base_sha,
        head_sha=head_sha,
        scope=scope,
        omitted=prompt.selection.omitted,
        diff_summary=prompt.selection.summary(),
        round=rules.round,
        asked=rules.obligations,
        obligations=obligations,
    )


def settle(verdict: ModelVerdict, rules: RoundRules) -> ModelVerdict:
    """`verdict` as this round counts it: each finding assessed, and a REJECT that rests only
    on advisory findings (no location, or new and about untouched code after
    `review.converge_after` rounds) counted as an approval."""
    assessed = tuple(assess(verdict.model, finding, rules) for finding in verdict.findings)
    settled = replace(verdict, assessed=assessed)
    if verdict.verdict == "reject" and rests_on_advisory(assessed, verdict.answers, rules):
        return replace(settled, verdict="approve", said="reject")
    return settled


def _ask_all(
    members: Sequence[PanelMember],
    prompt: ReviewPrompt,
    timeout_s: float,
    max_tokens: int,
    before_call: BeforeCall | None,
    on_verdict: OnVerdict | None = None,
) -> tuple[ModelVerdict, ...]:
    """Each member's verdict on `prompt`, asked in parallel; incomplete past `timeout_s`."""
    arrivals: queue.Queue[tuple[int, ModelVerdict]] = queue.Queue()
    threads = [
        threading.Thread(
            target=_run_member,
            args=(arrivals, index, member, prompt, timeout_s, max_tokens, before_call),
            name=f"reviewer-{member.model}",
            # A reviewer past its deadline is abandoned, not waited for: it must not keep
            # the process (the CLI, a worker task) alive after the panel has decided.
            daemon=True,
        )
        for index, member in enumerate(members)
    ]
    deadline = time.monotonic() + timeout_s
    for thread in threads:
        thread.start()
    slots: list[ModelVerdict | None] = [None] * len(members)
    for _ in members:
        try:
            index, verdict = arrivals.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break  # what arrived by the deadline counts; later answers are not looked at
        slots[index] = verdict
        if on_verdict is not None:
            on_verdict(verdict)
    verdicts = []
    for member, slot in zip(members, slots, strict=True):
        if slot is None:
            slot = ModelVerdict(
                member.model,
                "incomplete",
                problem=f"no verdict within review.timeout_s ({timeout_s:g}s)",
                error_kind="timeout",
                elapsed_s=timeout_s,
            )
            if on_verdict is not None:
                on_verdict(slot)
        verdicts.append(slot)
    return tuple(verdicts)


def _run_member(
    arrivals: queue.Queue[tuple[int, ModelVerdict]],
    index: int,
    member: PanelMember,
    prompt: ReviewPrompt,
    timeout_s: float,
    max_tokens: int,
    before_call: BeforeCall | None,
) -> None:
    # One verdict per thread, put once: the panel's thread reads the queue until the
    # deadline (a late verdict is simply never read).
    verdict = review(
        member.model,
        member.client,
        prompt,
        timeout_s=timeout_s,
        max_tokens=max_tokens,
        before_call=before_call,
    )
    arrivals.put((index, verdict))
