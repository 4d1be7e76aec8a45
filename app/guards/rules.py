"""The guard rules, one function per rule id (DESIGN §3): a `ChangeSet` and a `Policy` in,
violations out. Plain functions over plain data; no git, no network, no model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.guards.changes import ChangeSet, FileChange
from app.guards.destruction import Loss, losses
from app.guards.local_actions import LocalAction, action_of, local_actions
from app.guards.paths import (
    ProtectedPaths,
    canonical_path,
    display,
    resolve_link,
    unsafe_reason,
)
from app.guards.result import Violation
from app.guards.secrets_scan import Finding, scan_lines, scan_path, scan_strings, token_kind
from app.guards.tamper.rule import find_tampering
from app.guards.test_surface import SurfacePatterns, infrastructure_changes
from app.repo_config import GuardsConfig

# The shrink rule judges files of at least this many lines (DESIGN §3).
SHRINK_MIN_LINES = 40
# The rewrite measure of an iteration judges files of at least this many telling lines (a long
# file in what it says: one of short lines loses its few telling ones in a small edit), and one
# that keeps less than this share of them was rewritten. On the last 300 commits of ten Python
# projects (3,000; `bench/iteration_deletions.py`), 4 keep less than a quarter of such a file
# that they do not shrink past 50% (two docs pages and a changelog rewritten, a pip-compile
# output regenerated); at 50%, 22 would, honest refactors of code among them.
REWRITE_MIN_LINES = 40
REWRITE_KEPT_PERCENT = 25
# The files a refusal of lines removed without replacement names, the most first.
_NAMED_FILES = 5


@dataclass(frozen=True)
class Policy:
    """The limits in force for one evaluation (the PR's, or one implementer iteration's)."""

    guards: GuardsConfig
    protected: ProtectedPaths
    max_deleted_lines: int | None
    # One implementer iteration, before commit: `max_deleted_lines` bounds lines destroyed
    # (removed without replacement, `app.guards.destruction`), and rewrites are refused too.
    iteration: bool = False
    # The test infrastructure's patterns (None: `guards.test_infrastructure` is off) and the
    # command that runs the suite, whose scripts and make targets belong to it.
    surface: SurfacePatterns | None = None
    test_command: str = ""
    # One implementer iteration: test files whose change it declared (a feature's tests removed
    # with it, a changed expectation). What they lose is disclosed to the reviewer, not
    # measured as destruction.
    declared: frozenset[str] = frozenset()


Rule = Callable[[ChangeSet, Policy], list[Violation]]


def deletions(changes: ChangeSet, policy: Policy) -> list[Violation]:
    """A pull request: its deleted lines, and files shrunk. One implementer iteration: what it
    destroys (`app.guards.destruction`): lines removed without replacement, files shrunk, long
    files rewritten (each file reported once: as shrunk, or else as rewritten)."""
    percent = policy.guards.max_file_shrink_percent
    files = [change for change in changes.files if change.path not in policy.declared]
    checked = [] if percent is None else [_shrunk(change, percent) for change in files]
    shrunk = [violation for violation in checked if violation is not None]
    if not policy.iteration:
        return _deleted(changes, policy) + shrunk
    lost = [loss for loss in losses(changes) if loss.change.path not in policy.declared]
    rewritten = [] if percent is None else _rewritten(lost, {v.path or "" for v in shrunk})
    return _unreplaced(lost, policy.max_deleted_lines) + shrunk + rewritten


def _deleted(changes: ChangeSet, policy: Policy) -> list[Violation]:
    """A pull request: every removed line counts."""
    limit = policy.max_deleted_lines
    total = changes.deleted_lines
    if limit is None or total <= limit:
        return []
    return [Violation("deletions", None, None, f"{total} lines deleted, over the limit of {limit}")]


def _shrunk(change: FileChange, percent: int) -> Violation | None:
    shrink = _shrink(change)
    if shrink is None:
        return None
    old, new = shrink
    if (old - new) * 100 <= percent * old:
        return None
    share = (old - new) * 100 // old
    what = (
        f"file of {old} lines deleted"
        if change.status == "deleted"
        else f"file shrinks from {old} to {new} lines ({share}%)"
    )
    line = change.removed[0].anchor if change.removed and change.new_path else None
    return Violation("deletions", change.path, line, f"{what}, over the {percent}% shrink limit")


def _shrink(change: FileChange) -> tuple[int, int] | None:
    old = change.old_line_count
    if old is None or old < SHRINK_MIN_LINES:
        return None
    new = change.new_line_count
    if new is None:
        new = max(old - change.removed_count, 0)
    return old, new


def _unreplaced(lost: list[Loss], limit: int | None) -> list[Violation]:
    """An iteration: the lines it removed without replacement, over `limit`."""
    total = sum(loss.unreplaced for loss in lost)
    if limit is None or total <= limit:
        return []
    named = sorted((loss for loss in lost if loss.unreplaced), key=lambda loss: -loss.unreplaced)
    over = f"over the limit of {limit}"
    if len(named) == 1:
        change = named[0].change
        of = "" if change.old_line_count is None else f" of {change.old_line_count}"
        message = f"{total}{of} lines removed without replacement, {over}"
        return [Violation("deletions", change.path, None, message)]
    shown = [f"{display(loss.change.path, 120)} {loss.unreplaced}" for loss in named[:_NAMED_FILES]]
    if len(named) > _NAMED_FILES:
        shown.append(f"{len(named) - _NAMED_FILES} more files")
    message = f"{total} lines removed without replacement ({', '.join(shown)}), {over}"
    return [Violation("deletions", None, None, message)]


def _rewritten(lost: list[Loss], shrunk: set[str]) -> list[Violation]:
    """An iteration: long files that kept too little of what they said (a file already
    reported for shrinking is not reported again)."""
    found = []
    for loss in lost:
        change, kept = loss.change, loss.kept_percent
        telling = change.old_telling_count or 0
        if kept is None or telling < REWRITE_MIN_LINES or change.new_path is None:
            continue
        if kept < REWRITE_KEPT_PERCENT and change.path not in shrunk:
            message = (
                f"rewritten: {kept}% of its {change.old_line_count} lines kept "
                f"({telling - loss.lost_telling} of the {telling} that say something), "
                f"under the {REWRITE_KEPT_PERCENT}% one iteration must keep of a file"
            )
            found.append(Violation("deletions", change.path, None, message))
    return found


_VERBS = {
    "added": ("adds", "adds"),
    "deleted": ("deletes", "deletes"),
    "modified": ("modifies", "modifies"),
    "renamed": ("renames away from", "renames onto"),
    "copied": ("copies from", "copies onto"),
}


def protected_path(changes: ChangeSet, policy: Policy) -> list[Violation]:
    found: list[Violation] = []
    actions: dict[str, LocalAction] | None = None
    free = [path for change in changes.files for path in change.paths
            if policy.protected.match(path) is None]  # fmt: skip
    for change in changes.files:
        for path in change.paths:
            from_verb, to_verb = _VERBS[change.status]
            verb = from_verb if path == change.old_path else to_verb
            if change.status == "modified" and change.mode_changed and not change.added:
                verb = f"changes the mode ({change.old_mode} -> {change.new_mode}) of"
            match = policy.protected.match(path)
            if match is not None:
                what = f"a protected path (pattern {match.pattern!r})"
            else:
                if actions is None:
                    actions = local_actions(
                        changes, lambda p: policy.protected.match(p) is not None, free
                    )
                action = action_of(path, actions)
                if action is None:
                    continue
                what = (
                    f"the local action ./{display(action.folder, 120)} that the protected "
                    f"workflow {display(action.workflow, 120)} runs (part of that workflow)"
                )
            found.append(Violation("protected-path", path, None, f"{verb} {what}"))
    return found


def unsafe_path(changes: ChangeSet, policy: Policy) -> list[Violation]:
    found: list[Violation] = []
    for change in changes.files:
        for path in change.paths:
            reason = unsafe_reason(path)
            if reason is not None:
                found.append(Violation("unsafe-path", path, None, f"unsafe path: {reason}"))
    return found


def symlink(changes: ChangeSet, policy: Policy) -> list[Violation]:
    found: list[Violation] = []
    for change in changes.files:
        if not change.is_symlink or change.new_path is None:
            continue
        problem = _link_problem(change, changes, policy)
        if problem is not None:
            found.append(Violation("symlink", change.new_path, None, problem))
    return found


def _link_problem(change: FileChange, changes: ChangeSet, policy: Policy) -> str | None:
    target = change.link_target
    if target is None:
        return "symlink whose target the diff does not show: cannot evaluate it"
    resolved = resolve_link(change.new_path or "", target, changes.links)
    shown = display(target, 120)
    if resolved.target is None:
        return f"symlink to {shown!r}: {resolved.problem}"
    canonical = canonical_path(resolved.target)
    if canonical == "":
        return f"symlink to {shown!r} points at the repository root"
    if ".git" in canonical.split("/"):
        return f"symlink to {shown!r} points into .git"
    match = policy.protected.match(resolved.target)
    if match is not None:
        return f"symlink to {shown!r} points into a protected path (pattern {match.pattern!r})"
    return None


def submodule(changes: ChangeSet, policy: Policy) -> list[Violation]:
    found: list[Violation] = []
    for change in changes.files:
        if change.touches_gitlink:
            found.append(
                Violation("submodule", change.path, None, f"submodule (gitlink) {change.status}")
            )
        for path in change.paths:
            if canonical_path(path).rsplit("/", 1)[-1] == ".gitmodules":
                found.append(Violation("submodule", path, None, f".gitmodules {change.status}"))
    return found


def secret(changes: ChangeSet, policy: Policy) -> list[Violation]:
    found: list[Violation] = []
    for change in changes.files:
        if change.new_path is None:
            continue
        named = scan_path(change.new_path) if change.status != "modified" else None
        findings = [named] if named else []
        if change.is_symlink:
            # A link's content is its target: a token written there is written all the same.
            kind = token_kind(change.link_target or "")
            findings += [Finding(None, f"{kind} as a symlink target")] if kind else []
        else:
            findings += scan_lines(change.new_path, change.added) + scan_strings(change.strings)
        for finding in findings:
            # A name that holds the token would repeat it: such a finding names no path.
            path = None if finding.kind.endswith("in the file name") else change.new_path
            found.append(
                Violation(
                    "secret",
                    path,
                    finding.line,
                    f"possible {finding.kind} added (value not shown); if it is real, revoke it",
                )
            )
    return found


def size(changes: ChangeSet, policy: Policy) -> list[Violation]:
    guards = policy.guards
    found: list[Violation] = []
    if changes.unevaluable is not None:
        found.append(Violation("size", None, None, changes.unevaluable))
    checks = (
        (len(changes.files), guards.max_changed_files, "files changed"),
        (changes.added_lines, guards.max_added_lines, "lines added"),
        (changes.diff_bytes, guards.max_diff_bytes, "bytes of diff (too large to evaluate)"),
    )
    for value, limit, what in checks:
        if limit is not None and value > limit:
            found.append(
                Violation("size", None, None, f"{value} {what}, over the limit of {limit}")
            )
    return found


def binary(changes: ChangeSet, policy: Policy) -> list[Violation]:
    if policy.guards.allow_binary:
        return []
    return [
        Violation("binary", change.path, None, f"binary file {change.status} (allow_binary is off)")
        for change in changes.files
        if change.binary and change.status != "deleted"
    ]


def test_tamper(changes: ChangeSet, policy: Policy) -> list[Violation]:
    found = [Violation("test-tamper", t.path, t.line, t.message) for t in find_tampering(changes)]
    if policy.surface is not None:
        found += [
            Violation("test-tamper", c.path, c.line, c.message)
            for c in infrastructure_changes(changes, policy.surface, policy.test_command)
        ]
    return found


RULES: dict[str, Rule] = {
    "deletions": deletions,
    "protected-path": protected_path,
    "unsafe-path": unsafe_path,
    "symlink": symlink,
    "submodule": submodule,
    "secret": secret,
    "size": size,
    "binary": binary,
    "test-tamper": test_tamper,
}


def rules_off(policy: Policy) -> set[str]:
    """Rules the config switches off entirely (the others always run)."""
    guards = policy.guards
    off: set[str] = set()
    if policy.max_deleted_lines is None and guards.max_file_shrink_percent is None:
        off.add("deletions")
    if guards.allow_binary:
        off.add("binary")
    if not guards.secrets:
        off.add("secret")
    if not guards.test_tamper:
        off.add("test-tamper")
    return off
