"""The deterministic guards: policy over a diff that holds when every model is wrong or hostile.

Rule ids (stable, DESIGN §3): deletions, protected-path, unsafe-path, symlink, submodule, secret,
size, binary, test-tamper. Entry points: `check_repo` (two revisions; config from the base),
`check_diff` (a unified diff), `check_iteration` (an implementer's worktree before commit) and
`evaluate` (any `ChangeSet`). All return a `GuardResult` that the CLI, the Action and the check
run render. No git plumbing leaks out; no model is ever called.
"""

from app.guards.changes import ChangeSet, FileChange, Line
from app.guards.engine import check_diff, check_iteration, check_repo, config_at, evaluate
from app.guards.result import RULE_IDS, GuardResult, Violation

__all__ = [
    "RULE_IDS",
    "ChangeSet",
    "FileChange",
    "GuardResult",
    "Line",
    "Violation",
    "check_diff",
    "check_iteration",
    "check_repo",
    "config_at",
    "evaluate",
]
