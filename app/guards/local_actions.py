"""Local actions a protected workflow runs: part of that workflow, wherever they live.

A workflow step `uses: ./tools/deploy` runs the action defined in `tools/deploy/action.yml`
(and, for a composite action, the scripts beside it) with the workflow's permissions and
secrets. Protecting `.github/workflows/**` while `tools/deploy/` is free to change would leave
the workflow's behaviour open to any change, so the folder of every local action a protected
workflow uses, directly or through another local action, is protected with it.

With the repository's trees (`--repo`, the Action, the check run) the workflows and actions
of both sides are read whole; from a bare diff only the `uses:` lines the diff shows are known.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.guards.changes import ChangeSet
from app.guards.paths import canonical_path
from app.guards.trees import Side, TreeView, trees_of

_USES = re.compile(r"""^\s*(?:-\s*)?uses\s*:\s*["']?\./([^"'\s@#]*)""")
_ACTION_FILES = ("action.yml", "action.yaml")
# Local actions that use local actions: deeper than this is not followed, and not needed.
_MAX_DEPTH = 8


@dataclass(frozen=True)
class LocalAction:
    folder: str  # "" for the repository root's action
    workflow: str  # the protected workflow that reaches it


def local_actions(
    changes: ChangeSet, is_protected: Callable[[str], bool], paths: Iterable[str]
) -> dict[str, LocalAction]:
    """The folders of local actions that protected workflows use, on either side, as far as
    they can hold one of `paths` (the changed paths no pattern protects)."""
    found: dict[str, LocalAction] = {}
    trees = trees_of(changes)
    if trees is not None and not _action_folders_around(trees, paths):
        return found  # no changed path is inside a folder that holds an action
    for side, lines in _uses_lines(changes):
        by_file: dict[str, list[str]] = {}
        for path, text in lines:
            by_file.setdefault(path, []).append(text)
        _follow(by_file, is_protected, found, side)
    return found


def _follow(
    by_file: dict[str, list[str]],
    is_protected: Callable[[str], bool],
    found: dict[str, LocalAction],
    side: Side,
) -> None:
    pending = [(path, path) for path in by_file if is_protected(path) and _is_workflow_file(path)]
    for _ in range(_MAX_DEPTH):
        reached: list[tuple[str, str]] = []
        for path, workflow in pending:
            for folder in _used_folders(by_file.get(path, ())):
                if folder in found:
                    continue
                found[folder] = LocalAction(folder, workflow)
                reached += [(_join(folder, name), workflow) for name in _ACTION_FILES]
        if not reached:
            return
        pending = reached


def _action_folders_around(trees: TreeView, paths: Iterable[str]) -> bool:
    """Whether any folder above one of `paths` holds an action file on either side (the root
    counts only for the action file itself)."""
    candidates: set[str] = set()
    for path in paths:
        parts = path.split("/")
        for end in range(1, len(parts)):
            folder = "/".join(parts[:end])
            candidates.update(_join(folder, name) for name in _ACTION_FILES)
        if path in _ACTION_FILES:
            candidates.add(path)
    sides: tuple[Side, Side] = ("base", "head")
    return bool(candidates) and any(trees.present(side, candidates) for side in sides)


def _is_workflow_file(path: str) -> bool:
    return path.endswith((".yml", ".yaml"))


def _used_folders(lines: Iterable[str]) -> list[str]:
    folders = []
    for text in lines:
        match = _USES.match(text)
        if match is not None:
            folders.append(match.group(1).strip("/").removeprefix("./"))
    return folders


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _uses_lines(changes: ChangeSet) -> list[tuple[Side, list[tuple[str, str]]]]:
    trees = trees_of(changes)
    if trees is not None:
        sides: tuple[Side, Side] = ("base", "head")
        return [
            (side, [(hit.path, hit.text) for hit in trees.yaml_lines(side, "uses")])
            for side in sides
        ]
    shown = [
        (change.path, line.text)
        for change in changes.files
        for line in (*change.added, *change.context, *change.removed)
        if "uses" in line.text
    ]
    return [("head", shown)]


def action_of(path: str, actions: dict[str, LocalAction]) -> LocalAction | None:
    """The local action `path` belongs to: inside its folder (the root action: its file),
    compared as a case-insensitive checkout would."""
    canonical = canonical_path(path)
    for folder, action in actions.items():
        home = canonical_path(folder)
        if home == "":
            if canonical in _ACTION_FILES:
                return action
        elif canonical == home or canonical.startswith(home + "/"):
            return action
    return None
