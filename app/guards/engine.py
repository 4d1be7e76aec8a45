"""The guards engine: one evaluation over a `ChangeSet`, and the three ways to get one.

- `check_diff`: a unified diff someone hands us (CLI `--diff`), judged as written.
- `check_repo`: two revisions of a repository; ourobot computes the diff itself and reads the
  config from `.github/ourobot.yml` at the base, never the head (CLI `--repo`, the Action, the
  check run).
- `check_iteration`: an implementer's worktree against the revision it started from, before it
  commits; `deletions` measures what it destroys (`app.guards.destruction`): lines removed
  without replacement, bounded by `max_deletions_per_iteration`, and long files rewritten.

Every entry point returns a `GuardResult`; bad input raises `UserError`/`ConfigError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.guards.changes import ChangeSet
from app.guards.diff import parse_diff
from app.guards.paths import ProtectedPaths
from app.guards.repo import (
    DEFAULT_LOAD_LIMIT,
    GitFailed,
    changes_between,
    isolated_git,
    merge_base,
    read_config_at,
    resolve,
    snapshot_worktree,
)
from app.guards.result import RULE_IDS, GuardResult, Violation
from app.guards.rules import RULES, Policy, rules_off
from app.guards.test_surface import SurfacePatterns
from app.repo_config import RepoConfig

# Beyond this many violations of one rule, the rest are summarised in one more line.
MAX_PER_RULE = 100


def evaluate(
    changes: ChangeSet,
    config: RepoConfig,
    *,
    config_source: str = "defaults",
    iteration: bool = False,
    declared: frozenset[str] = frozenset(),
) -> GuardResult:
    """Apply every rule the config leaves on. Same input, same result: a rule that reads the
    trees of a repository change reads them whole or fails."""
    guards = config.guards
    policy = Policy(
        guards=guards,
        protected=ProtectedPaths(guards.effective_protected_paths(config.mode)),
        max_deleted_lines=guards.max_deletions_per_iteration
        if iteration
        else guards.max_deleted_lines,
        iteration=iteration,
        surface=SurfacePatterns(guards.effective_test_infrastructure())
        if guards.test_infrastructure
        else None,
        test_command=config.test_command,
        declared=declared if iteration else frozenset(),
    )
    off = rules_off(policy)
    if iteration and config.mode == "pro":
        off.add("protected-path")  # pro mode: the implementer may; an admin approves the PR
    evaluated = [rule for rule in RULE_IDS if rule not in off]
    violations: list[Violation] = []
    for rule in evaluated:
        try:
            found = RULES[rule](changes, policy)
        except GitFailed as exc:
            # The trees could not be read, so the rule cannot decide: it fails, and says why.
            found = [Violation(rule, None, None, f"cannot be evaluated: {exc}")]
        violations.extend(_capped(rule, found))
    violations.sort(key=Violation.sort_key)
    return GuardResult(tuple(violations), _stats(changes, config, config_source, evaluated, off))


def _capped(rule: str, found: list[Violation]) -> list[Violation]:
    if len(found) <= MAX_PER_RULE:
        return found
    rest = len(found) - MAX_PER_RULE
    return [*found[:MAX_PER_RULE], Violation(rule, None, None, f"{rest} more not listed")]


def _stats(
    changes: ChangeSet,
    config: RepoConfig,
    config_source: str,
    evaluated: list[str],
    off: set[str],
) -> dict[str, Any]:
    return {
        "source": changes.source,
        "base": changes.base,
        "head": changes.head,
        "merge_base": changes.merge_base,
        "config": config_source,
        "mode": config.mode,
        "files": len(changes.files),
        "added_lines": changes.added_lines,
        "deleted_lines": changes.deleted_lines,
        "diff_bytes": changes.diff_bytes,
        "binary_files": changes.binary_files,
        "evaluable": changes.unevaluable is None,
        "rules": evaluated,
        "rules_off": [rule for rule in RULE_IDS if rule in off],
    }


def check_diff(data: bytes, config: RepoConfig, *, config_source: str = "defaults") -> GuardResult:
    """Judge a unified diff as written. One over `max_diff_bytes` is not parsed at all: it
    cannot be evaluated, which the size rule reports as a failure."""
    limit = config.guards.max_diff_bytes
    if limit is not None and len(data) > limit:
        changes = ChangeSet(files=(), source="diff", diff_bytes=len(data))
    else:
        changes = parse_diff(data)
    return evaluate(changes, config, config_source=config_source)


def check_repo(
    repo: Path,
    base: str,
    head: str,
    config: RepoConfig | None = None,
    *,
    config_source: str | None = None,
    load_limit: int = DEFAULT_LOAD_LIMIT,
) -> GuardResult:
    """Judge the changes `head` makes on top of `base`: the diff from their merge base to `head`
    (GitHub's three-dot compare), so commits that landed on the base branch since the PR
    branched are not mistaken for the PR undoing them. Without `config`, the
    `.github/ourobot.yml` committed at `base` rules (never the head's)."""
    with isolated_git(repo) as git:
        base_sha = resolve(git, base)
        head_sha = resolve(git, head)
        source = config_source or "given"
        if config is None:
            config, source = read_config_at(git, base_sha)
        start = merge_base(git, base_sha, head_sha) or base_sha
        changes = changes_between(git, start, head_sha, load_limit=load_limit)
    changes = replace(changes, base=base_sha, merge_base=start)
    return evaluate(changes, config, config_source=source)


def config_at(repo: Path, rev: str) -> tuple[RepoConfig, str]:
    """The repo config committed at `rev` (the base), and a description of where it came from."""
    with isolated_git(repo) as git:
        return read_config_at(git, resolve(git, rev))


def check_iteration(
    worktree: Path,
    base_rev: str,
    config: RepoConfig,
    *,
    config_source: str = "given",
    load_limit: int = DEFAULT_LOAD_LIMIT,
    git_env: Mapping[str, str] | None = None,
    tree: str | None = None,
    declared: frozenset[str] = frozenset(),
) -> GuardResult:
    """Judge what `git add -A` would commit in `worktree` against `base_rev`, before it is
    committed; the worktree and its index are left untouched. `declared`: test files whose
    change the iteration declared (`Policy.declared`).

    A cycle's worktree passes `git_env` (its repository named explicitly, never found through
    the worktree, whose `.git` code under test may have rewritten) and `tree`, the snapshot it
    already staged in quarantine; without them the worktree is a person's own checkout."""
    with isolated_git(worktree, git_env) as git:
        base_tree = resolve(git, base_rev, "tree")
        head_tree = tree or snapshot_worktree(git, worktree, base_tree)
        changes = changes_between(
            git, base_tree, head_tree, load_limit=load_limit, source="worktree"
        )
    return evaluate(
        changes, config, config_source=config_source, iteration=True, declared=declared
    )
