"""Branch protection as far as merging goes: the required checks a merge waits for and whether
the head must contain the base branch's tip ("strict"), and how `GET /branches/{branch}` shows
them.

A merge into a protected branch is refused with 405 while a required check is not green on the
head (a check run's latest of that name must have completed with success, neutral or skipped,
as GitHub accepts; a status's latest must be success), or, when strict, while the head does not
contain the base branch's tip.
"""

from __future__ import annotations

from app.sandbox.gitops import BareRepo
from app.sandbox.serializers import JSON
from app.sandbox.state import Protection, Repo, SandboxState

PASSING_CONCLUSIONS = ("success", "neutral", "skipped")


def protection_json(state: SandboxState, repo: Repo, branch: str) -> JSON:
    api = f"{state.base_url}/repos/{repo.full_name}/branches/{branch}/protection"
    rule = repo.protections.get(branch)
    contexts = list(rule.contexts) if rule else []
    return {
        "enabled": rule is not None,
        "required_status_checks": {
            "enforcement_level": "non_admins" if rule else "off",
            "contexts": contexts,
            "checks": [{"context": c, "app_id": None} for c in contexts],
            **({"strict": rule.strict, "url": f"{api}/required_status_checks"} if rule else {}),
        },
    }


def merge_refusal(git: BareRepo, repo: Repo, base_ref: str, head_sha: str) -> str | None:
    """Why branch protection refuses to merge `head_sha` into `base_ref` now, or None."""
    rule: Protection | None = repo.protections.get(base_ref)
    if rule is None:
        return None
    for context in rule.contexts:
        if not _check_green(repo, context, head_sha):
            return f'Required status check "{context}" is expected.'
    tip = git.resolve(f"refs/heads/{base_ref}")
    if rule.strict and tip is not None and git.merge_base(tip, head_sha) != tip:
        return "Head branch is not up to date with the base branch."
    return None


def _check_green(repo: Repo, context: str, sha: str) -> bool:
    runs = [r for r in repo.check_runs.values() if r.head_sha == sha and r.name == context]
    statuses = [s for s in repo.statuses if s.sha == sha and s.context == context]
    if not runs and not statuses:
        return False
    if runs:
        latest = max(runs, key=lambda r: r.id)
        if latest.status != "completed" or latest.conclusion not in PASSING_CONCLUSIONS:
            return False
    return not statuses or max(statuses, key=lambda s: s.id).state == "success"
