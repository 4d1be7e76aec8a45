"""`ourobot action gate`: the merge gate inside GitHub Actions, from the same job functions.

The event names the pull requests (a `pull_request` or `pull_request_review` event names one;
`check_run` and `check_suite` list theirs). Each is evaluated as the App would: the
`ourobot/gate` check run on its head, every condition with its reason. It merges only when the
workflow says so (`merge: true`, i.e. `OUROBOT_GATE_MERGE=true`); otherwise it reports.

"ourobot's own App" is whichever App the token posts as (for `GITHUB_TOKEN`, GitHub Actions):
any workflow of the repository posts as that App too, so in the Action `guards` and `review`
can only be as trustworthy as the repository's workflows. The App has its own identity.

Outputs: `decision` (`merge`, `wait` or `none`), `merged` (the merged SHA, or empty). The step
fails only when it cannot evaluate: the verdict itself is the `ourobot/gate` check run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.action.files import append_to
from app.errors import UserError
from app.gate.report import gate_output
from app.jobs.gate_check import Evaluation, evaluate_serialized
from app.jobs.registry import load_job_modules

EXIT_OK = 0


def pull_numbers(event: str, payload: Mapping[str, Any]) -> list[int]:
    """The pull requests an event is about."""
    pull = payload.get("pull_request")
    if event in ("pull_request", "pull_request_review", "pull_request_target"):
        number = pull.get("number") if isinstance(pull, Mapping) else None
        return [number] if isinstance(number, int) and not isinstance(number, bool) else []
    if event in ("check_run", "check_suite"):
        item = payload.get(event)
        listed = item.get("pull_requests") if isinstance(item, Mapping) else None
        found = [p.get("number") for p in listed or [] if isinstance(p, Mapping)]
        return [n for n in dict.fromkeys(found) if isinstance(n, int) and not isinstance(n, bool)]
    raise UserError(
        f"ourobot action gate runs on pull_request, pull_request_review, check_run or "
        f"check_suite events, not {event!r}"
    )


def run_gate_action(env: Mapping[str, str]) -> int:
    from app.action.command import build_context, read_event

    event, payload = read_event(env)
    repository = payload.get("repository")
    repo = repository.get("full_name") if isinstance(repository, Mapping) else None
    if not isinstance(repo, str) or "/" not in repo:
        raise UserError("the event payload names no repository")
    numbers = pull_numbers(event, payload)
    merge = env.get("OUROBOT_GATE_MERGE", "false").strip().lower() == "true"
    ctx = build_context(env, gate_merge=merge)
    load_job_modules(ctx.settings)
    decisions, merged, summary = [], [], []
    try:
        for number in numbers:
            result = evaluate_serialized(ctx, None, repo, number)
            if result is None:
                continue
            decisions.append(_decision(result))
            if result.merge is not None and result.merge.status == "merged":
                merged.append(result.merge.merged_sha or "")
            summary.append(_summary(number, result))
            print(f"ourobot gate: #{number}: {_decision(result)} ({result.step})")
    finally:
        ctx.store.close()
    decision = "none" if not decisions else ("merge" if all(d == "merge" for d in decisions)
                                             else "wait")  # fmt: skip
    append_to(env.get("GITHUB_OUTPUT"), f"decision={decision}\nmerged={','.join(merged)}\n")
    append_to(
        env.get("GITHUB_STEP_SUMMARY"),
        "\n\n".join(summary) or "## ourobot/gate\n\nNo pull request in this event.\n",
    )
    return EXIT_OK


def _decision(result: Evaluation) -> str:
    if result.decision is None:
        return "wait"
    return result.decision.verdict


def _summary(number: int, result: Evaluation) -> str:
    if result.decision is None:
        return f"## ourobot/gate #{number}\n\nNot evaluated: {result.skipped}.\n"
    out = gate_output(result.decision, number=number, notes=tuple(result.notes))
    return f"## ourobot/gate #{number}: {out.title}\n\n{out.summary}\n"
