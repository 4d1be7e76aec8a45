"""What stands between a parsed reply and a commit: every check the harness makes of one
iteration's edits, in order, the first that refuses ending it.

1. unreadable blocks (`malformed`);
2. every edit validated, then applied (`app.loop.apply`);
3. the test surface: files that configure or drive the test run may change only when the
   ticket carries `implementer.test_surface_label` (`test-tamper`);
4. the guards' iteration check over what `git add -A` would commit, against the last commit:
   `max_deletions_per_iteration`, protected paths, unsafe paths and symlinks, secrets,
   binaries, sizes, test tampering, with test artifacts stripped first. The tree judged is the
   snapshot the caller commits (`Landing.snapshot`), staged in quarantine: what was judged is
   exactly what lands, and a refused file never reaches the repository's object store.

Nothing here commits; the caller resets the worktree when anything was refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.guards import check_iteration
from app.guards.test_surface import SurfacePatterns
from app.loop.apply import Flag, PathPolicy, Refusal, apply_edits
from app.loop.edits import ParsedReply
from app.loop.suite_files import directories_with_tests, surface_reason
from app.loop.ticket import Ticket
from app.repo_config import RepoConfig
from app.workspace.staging import OversizedFile, Snapshot
from app.workspace.worktree import Workspace


@dataclass
class Landing:
    refusals: list[Refusal] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    snapshot: Snapshot | None = None  # set when nothing was refused: the tree to commit


def land_edits(
    workspace: Workspace, config: RepoConfig, ticket: Ticket, parsed: ParsedReply
) -> Landing:
    """Apply `parsed` to the worktree if every check passes; the refusals otherwise."""
    problems = [Refusal("malformed", p.path, p.reason) for p in parsed.problems]
    if problems:
        return Landing(problems)
    applied = apply_edits(PathPolicy(workspace.path, config), parsed.edits, workspace.ignored)
    landing = Landing(applied.refusals, applied.flags, applied.paths)
    if landing.refusals:
        return landing
    landing.refusals = surface_refusals(workspace, config, ticket, applied.paths)
    if landing.refusals:
        return landing
    landing.refusals, landing.snapshot = judge_worktree(workspace, config)
    return landing


def judge_worktree(
    workspace: Workspace,
    config: RepoConfig,
    declared: frozenset[str] = frozenset(),
    waive: Callable[[list[Refusal]], list[Refusal]] | None = None,
) -> tuple[list[Refusal], Snapshot | None]:
    """The guards' iteration check over the worktree as it stands: (refusals, None), or
    ([], the snapshot to commit). `declared`: test files whose change the model declared;
    `waive`: the refusals that stand of those found (the rest are disclosed, not refused)."""
    try:
        snapshot = workspace.snapshot(config.guards.max_diff_bytes)
    except OversizedFile as exc:
        return [Refusal("size", exc.path, str(exc).split(": ", 1)[1])], None
    result = check_iteration(
        workspace.path, "HEAD", config, config_source="base",
        git_env=workspace.env(quarantine=snapshot.quarantine), tree=snapshot.tree,
        declared=declared,
    )  # fmt: skip
    refusals = [Refusal(v.rule, v.path, v.message) for v in result.violations]
    if waive is not None:
        refusals = waive(refusals)
    if refusals:
        snapshot.discard()
        return refusals, None
    return [], snapshot


def surface_refusals(
    workspace: Workspace, config: RepoConfig, ticket: Ticket, paths: Sequence[str]
) -> list[Refusal]:
    label = config.implementer.test_surface_label
    if ticket.has_label(label):
        return []
    tracked = workspace.tracked(workspace.base_sha)
    test_dirs = set(directories_with_tests(tracked))

    def read(rev: str, path: str) -> str | None:
        if rev == "base":
            data = workspace.read_at(workspace.base_sha, path)
        else:
            file = workspace.path / path
            data = file.read_bytes() if file.is_file() and not file.is_symlink() else None
        return None if data is None else data.decode("utf-8", "replace")

    surface = SurfacePatterns(config.guards.effective_test_infrastructure())
    refusals = []
    for path in paths:
        reason = surface_reason(
            path, test_command=config.test_command, test_dirs=test_dirs, read=read, patterns=surface
        )
        if reason is not None:
            why = f"{reason}: changing how the suite runs needs the ticket label {label!r}"
            refusals.append(Refusal("test-tamper", path, why))
    return refusals
