"""An agent's shell command, run in the cage on its worktree, and what it is told back.

The command runs through the cage's one entry with the worktree as its directory (shown at
`/workspace`, the one writable project path), no network, no secret (the repository's secret
files are empty inside), a read-only view of the repository for git (so `git status`,
`git diff`, `git log` and `git show` work and nothing can change the harness's repository), a
timeout (`budgets.command_timeout_s`) and bounded output. Afterwards ourobot puts back anything the
command changed of the worktree's `.git` file or the git directory (only possible without the
sandbox) and says so.

What the model hears: the exit code, or the limit that stopped the command, and the output —
its start and its end when long — fenced as untrusted text with every known secret redacted.
git inside reads a view of the repository (`app.workspace.git_view`), never its object store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.loop.context import fence_output
from app.workspace.cage.entry import Cage, CageJob, CageRun
from app.workspace.cage.limits import apparent_size
from app.workspace.cage.mounts import PROJECT_ROOT
from app.workspace.tree_files import remove_empty_beneath
from app.workspace.worktree import Workspace


@dataclass(frozen=True)
class CommandRecord:
    """One command an agent ran, for the progress line, the ledger and the pull request."""

    command: str
    exit_code: int | None
    summary: str
    elapsed_s: float

    def as_json(self) -> dict[str, object]:
        first = self.command.strip().splitlines()[0] if self.command.strip() else ""
        return {"command": first[:200], "exit_code": self.exit_code, "summary": self.summary}

    def short(self) -> str:
        first = self.command.strip().splitlines()[0] if self.command.strip() else ""
        return f"$ {first[:100]} -> {self.summary}"


def worktree_size(workspace: Workspace) -> int:
    """The worktree's size as the cage's disk limit counts it (its `.git` left out)."""
    return apparent_size([workspace.path], [workspace.path / ".git"])[0]


def run_command(
    cage: Cage,
    workspace: Workspace,
    command: str,
    *,
    timeout_s: float,
    is_secret: Callable[[str], bool],
    cancel: Callable[[], bool] | None = None,
    overlays: tuple[tuple[Path, str], ...] = (),
    grown_from: int | None = None,
) -> tuple[CageRun, list[str]]:
    """Run `command` on the worktree; the run and what had to be put back afterwards.
    `grown_from`: the worktree's size its growth is measured from (`CageJob.grown_from`)."""
    masked = tuple(p for p in [*workspace.tracked(), *workspace.untracked()] if is_secret(p))
    view = workspace.git_view(is_secret)
    env = {"GIT_PAGER": "cat", "PAGER": "cat"}
    if view is not None:
        # git inside reads the view, never the real repository; it never takes a lock.
        tree = PROJECT_ROOT if cage.isolation == "bwrap" else str(workspace.path)
        env |= {"GIT_DIR": str(view), "GIT_WORK_TREE": tree, "GIT_OPTIONAL_LOCKS": "0"}
    before = workspace.git_state()
    # The sandbox makes a mount point in the worktree for what setup prepared: taken away after.
    stubs = [rel for _, rel in overlays if not os.path.lexists(workspace.path / rel)]
    run = cage.run(
        CageJob(
            command,
            workspace.path,
            timeout_s=timeout_s,
            what="the command",
            masked=masked,
            git_dirs=(view,) if view is not None else (),
            env=env,
            cancel=cancel,
            overlays=overlays,
            grown_from=grown_from,
        )
    )
    for relative in stubs:
        # Never through a link: the command may have swapped a folder on the way for one.
        remove_empty_beneath(workspace.path, relative)
    restored = []
    if workspace.restore_gitfile():
        restored.append(".git")
    restored += [f".git ({name})" for name in workspace.restore_git_state(before)]
    return run, restored


def observation(run: CageRun, restored: Sequence[str], secrets: Sequence[str]) -> str:
    """What the model is told about its command."""
    if run.exit_code is not None:
        head = f"The command exited with code {run.exit_code}."
    else:
        head = f"The command was {run.summary()}."
    parts = [head]
    if restored:
        parts.append(
            f"It changed {', '.join(restored)}, which it may only read: ourobot put it back."
        )
    if not run.output_tail:
        parts.append("It printed nothing.")
        return "\n\n".join(parts)
    if run.output_head:
        parts.append("The start of its output:\n" + fence_output(run.output_head, secrets))
        parts.append("The end of its output:\n" + fence_output(run.output_tail, secrets))
    else:
        parts.append("Its output:\n" + fence_output(run.output_tail, secrets))
    return "\n\n".join(parts)


def record(command: str, run: CageRun) -> CommandRecord:
    return CommandRecord(command, run.exit_code, run.summary(), run.elapsed_s)
