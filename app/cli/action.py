"""`ourobot action <command>`: the entry point `action.yml` runs inside GitHub Actions.

Everything comes from the Actions runtime: the event payload (`GITHUB_EVENT_PATH`), the
checkout (`GITHUB_WORKSPACE`), the token (`GITHUB_TOKEN`, from the action's input) and the files
GitHub reads back (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`). Text from the event and the PR is
data: it reaches the log only through escaped workflow commands and the summary only through
escaped Markdown.

`gate`: the merge gate on the event's pull requests (`app.action.gate`).

`implement`: one cycle for the triggering issue, to a pull request (`app.action.implement`).

`guards`: evaluate the pull request's base..head with the guards (config from the base),
whatever `guards.apply_to` says (that is the App's choice of PRs; a workflow chooses its own),
write the step summary and the outputs `conclusion` (success/failure) and `violations`, print
one `::error` annotation per violation, exit 1 on violations.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.action.files import append_to
from app.errors import UserError
from app.guards import GuardResult, check_repo, config_at
from app.guards.paths import display
from app.guards.repo import Git, has_commit, isolated_git
from app.workspace.git import is_object_id, token_env

EXIT_OK = 0
EXIT_VIOLATIONS = 1


def run(args: argparse.Namespace) -> int:
    try:
        return COMMANDS[args.command](os.environ)
    except UserError as exc:
        # Also as an annotation, so the failure is visible on the PR, not only in the log.
        print(f"::error title=ourobot::{escape_data(str(exc))}")
        raise


@dataclass(frozen=True)
class PullRequest:
    number: int | None
    base_sha: str
    head_sha: str
    head_ref: str


def read_pull_request(env: Mapping[str, str]) -> PullRequest:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        raise UserError("GITHUB_EVENT_PATH is not set: run this inside GitHub Actions")
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the event payload {path}: {exc}") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pull, dict):
        name = env.get("GITHUB_EVENT_NAME", "unknown")
        raise UserError(f"ourobot action guards needs a pull_request event, got {name!r}")
    base_sha = _sha(pull, "base")
    head_sha = _sha(pull, "head")
    head = pull.get("head") or {}
    number = pull.get("number")
    return PullRequest(
        number=number if isinstance(number, int) else None,
        base_sha=base_sha,
        head_sha=head_sha,
        head_ref=str(head.get("ref") or ""),
    )


def _sha(pull: dict[str, Any], side: str) -> str:
    part = pull.get(side)
    sha = part.get("sha") if isinstance(part, dict) else None
    if not isinstance(sha, str) or not is_object_id(sha):
        raise UserError(f"the event's pull_request.{side}.sha is missing or not a commit id")
    return sha


def run_guards(env: Mapping[str, str]) -> int:
    pull = read_pull_request(env)
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    ensure_commits(workspace, (pull.base_sha, pull.head_sha), env)
    # The workflow chose this PR (its `on:` and `if:`), so it is judged: `guards.apply_to` says
    # which PRs the App checks unasked, and skipping here made a required check pass on every
    # human PR while checking nothing.
    config, source = config_at(workspace, pull.base_sha)
    result = check_repo(workspace, pull.base_sha, pull.head_sha, config, config_source=source)
    publish(env, result)
    for line in workflow_annotations(result):
        print(line)
    count = len(result.violations)
    print(f"ourobot guards: {result.conclusion} ({count} violations) on {pull.head_sha}")
    return EXIT_OK if result.conclusion == "success" else EXIT_VIOLATIONS


def ensure_commits(repo: Path, shas: tuple[str, ...], env: Mapping[str, str]) -> None:
    """Fetch the PR's commits when the checkout lacks them (a shallow checkout), with the token
    sent as an HTTP header for this one command: never in a URL, a config file or the log."""
    with isolated_git(repo) as git:
        missing = [sha for sha in shas if not has_commit(git, sha)]
        if not missing:
            return
        fetch_env = _auth_env(git, env)
        # Without --depth: the merge base of base and head must be reachable too.
        proc = git.run("fetch", "--no-tags", "--quiet", "origin", *missing, env=fetch_env)
        still = [sha for sha in missing if not has_commit(git, sha)]
    if still:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else "not found"
        raise UserError(
            f"commit {still[0]} is not in the checkout and could not be fetched ({reason}); "
            "check out with fetch-depth: 0"
        )


def _auth_env(git: Git, env: Mapping[str, str]) -> dict[str, str]:
    token = env.get("GITHUB_TOKEN", "")
    server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    key = f"http.{server}/.extraheader"
    if not token or git.run("config", "--get-all", key).stdout.strip():
        return {}  # no token, or actions/checkout already persisted one (two would clash)
    return token_env(token, key=key)


def publish(env: Mapping[str, str], result: GuardResult) -> None:
    append_to(
        env.get("GITHUB_OUTPUT"),
        f"conclusion={result.conclusion}\nviolations={len(result.violations)}\n",
    )
    append_to(env.get("GITHUB_STEP_SUMMARY"), result.summary_markdown())


def workflow_annotations(result: GuardResult) -> list[str]:
    """`::error file=...,line=...,title=...::message` lines, escaped per GitHub's rules."""
    lines = []
    for violation in result.violations:
        props = [f"title={escape_property(violation.rule)}"]
        if violation.path:
            props.insert(0, f"file={escape_property(display(violation.path, 1000))}")
            if violation.line:
                props.insert(1, f"line={violation.line}")
        lines.append(f"::error {','.join(props)}::{escape_data(violation.message)}")
    return lines


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def run_command(env: Mapping[str, str]) -> int:
    from app.action.command import run_command as route_and_run

    return route_and_run(env)


def run_review(env: Mapping[str, str]) -> int:
    from app.action.review import run_review_action  # the model SDKs load only when used

    return run_review_action(env)


def run_gate(env: Mapping[str, str]) -> int:
    from app.action.gate import run_gate_action

    return run_gate_action(env)


def run_implement(env: Mapping[str, str]) -> int:
    from app.action.implement import run_implement_action  # the loop loads only when used

    return run_implement_action(env)


COMMANDS = {
    "implement": run_implement,
    "guards": run_guards,
    "command": run_command,
    "review": run_review,
    "gate": run_gate,
}
