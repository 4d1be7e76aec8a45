"""Events that can change the merge gate's answer -> a gate evaluation of the pull requests
they touch. Pure: the job reads everything else from GitHub.

- `pull_request` (a new head, ready or back to draft, a label, a new base, reopened, closed):
  that pull request; `pull_request_review` submitted, edited or dismissed: that one too.
- `check_run` / `check_suite` completed: the pull requests GitHub lists on it. ourobot's own
  `ourobot/gate` runs and ourobot's own suite are skipped (their news is the gate's own; its
  guards and review runs arrive as check runs of their own), so the gate never feeds itself.
- `status`: the open pull requests whose head is that commit, found by its branches.
- `push` to a branch: every open pull request based on it (their `up-to-date` changed).
- `merge_group.checks_requested`: the guards and the review run on the group's commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from app.gate.checks import GATE_CHECK
from app.handlers.router import Event, Router
from app.jobs.registry import Job
from app.settings import Settings
from app.workspace.git import is_object_id

PULL_ACTIONS = (
    "opened",
    "synchronize",
    "reopened",
    "ready_for_review",
    "converted_to_draft",
    "labeled",
    "unlabeled",
    "edited",
    "closed",
)
REVIEW_ACTIONS = ("submitted", "edited", "dismissed")
QUEUE_REF_PREFIX = "refs/heads/gh-readonly-queue/"


def register(router: Router, settings: Settings) -> None:
    for action in PULL_ACTIONS:
        router.add("pull_request", action, on_pull_request)
    for action in REVIEW_ACTIONS:
        router.add("pull_request_review", action, on_pull_request)
    router.add("check_run", "completed", partial(on_check_run, settings=settings))
    router.add("check_suite", "completed", partial(on_check_suite, settings=settings))
    router.add("status", "*", on_status)
    router.add("push", "*", on_push)
    router.add("merge_group", "checks_requested", on_merge_group)


def _evaluate(event: Event, numbers: list[int]) -> list[Job]:
    repo = event.repo_full_name
    if repo is None:
        return []
    where = {"installation_id": event.installation_id, "repo": repo}
    return [Job("gate_evaluate", {**where, "number": n}) for n in dict.fromkeys(numbers)]


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def on_pull_request(event: Event) -> list[Job]:
    pull = event.payload.get("pull_request")
    number = _number(pull.get("number")) if isinstance(pull, Mapping) else None
    return _evaluate(event, [number]) if number is not None else []


def _listed_pulls(item: Any) -> list[int]:
    pulls = item.get("pull_requests") if isinstance(item, Mapping) else None
    if not isinstance(pulls, list):
        return []
    found = (_number(p.get("number")) for p in pulls if isinstance(p, Mapping))
    return [n for n in found if n is not None]


def _app_id(item: Mapping[str, Any]) -> int | None:
    app = item.get("app")
    return _number(app.get("id")) if isinstance(app, Mapping) else None


def on_check_run(event: Event, *, settings: Settings) -> list[Job]:
    run = event.payload.get("check_run")
    if not isinstance(run, Mapping) or run.get("name") == GATE_CHECK:
        return []
    return _evaluate(event, _listed_pulls(run))


def on_check_suite(event: Event, *, settings: Settings) -> list[Job]:
    suite = event.payload.get("check_suite")
    if not isinstance(suite, Mapping):
        return []
    if settings.app_id is not None and _app_id(suite) == settings.app_id:
        return []
    return _evaluate(event, _listed_pulls(suite))


def on_status(event: Event) -> list[Job]:
    sha, repo = event.payload.get("sha"), event.repo_full_name
    branches = event.payload.get("branches")
    if not isinstance(sha, str) or not is_object_id(sha) or repo is None:
        return []
    listed = branches if isinstance(branches, list) else []
    names = [b["name"] for b in listed if isinstance(b, Mapping) and isinstance(b.get("name"), str)]
    if not names:
        return []
    return [Job("gate_for_commit", {"installation_id": event.installation_id, "repo": repo,
                                    "sha": sha, "branches": names})]  # fmt: skip


def on_push(event: Event) -> list[Job]:
    ref, repo = event.payload.get("ref"), event.repo_full_name
    if not isinstance(ref, str) or not ref.startswith("refs/heads/") or repo is None:
        return []
    if event.payload.get("deleted") is True or ref.startswith(QUEUE_REF_PREFIX):
        return []
    base = ref.removeprefix("refs/heads/")
    return [Job("gate_base_moved", {"installation_id": event.installation_id, "repo": repo,
                                    "base_ref": base})]  # fmt: skip


def on_merge_group(event: Event) -> list[Job]:
    group = event.payload.get("merge_group")
    repo = event.repo_full_name
    if not isinstance(group, Mapping) or repo is None:
        return []
    values = {key: group.get(key) for key in ("head_sha", "head_ref", "base_sha", "base_ref")}
    if not all(isinstance(v, str) and v for v in values.values()):
        return []
    if not is_object_id(str(values["head_sha"])) or not is_object_id(str(values["base_sha"])):
        return []
    return [Job("merge_group_checks", {"installation_id": event.installation_id, "repo": repo,
                                       **{k: str(v) for k, v in values.items()}})]  # fmt: skip
