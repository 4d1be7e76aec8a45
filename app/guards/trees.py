"""The two whole trees behind a change, for rules that need more evidence than the diff shows.

A `ChangeSet` computed from a repository (`--repo`, the Action, the check run, an implementer's
worktree) is a `TreeChangeSet`: it carries a `TreeView` that can read any file of the base or
head tree and search them. A unified diff (`--diff`) has no trees; rules that need them then
judge from the diff alone, and where it cannot prove something, they assume the stricter case.

The view is read lazily, only by the rules that need it and only for the few changes where the diff
alone already shows the evidence is worth looking for (see `app.guards.tamper.exemptions.evidence`).

A view that cannot read a tree raises (`GitTrees` raises `GitFailed`): a file git cannot read
is not an absent file, and a search that could not look everywhere found nothing. The engine
reports the rule that asked as failed, with the reason.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, Protocol

from app.guards.changes import ChangeSet

Side = Literal["base", "head"]
# The files `TreeView.search` looks in: source code the rules can read, not data or documentation.
# Code in other languages lives on elsewhere in the tree: `TreeView.mentions` looks there.
CODE_SUFFIXES = tuple(
    "." + suffix
    for suffix in (
        "py",
        "pyi",
        "go",
        "js",
        "cjs",
        "mjs",
        "jsx",
        "ts",
        "tsx",
        "mts",
        "cts",
        "rb",
        "rs",
        "java",
        "kt",
        "scala",
        "cs",
        "swift",
        "php",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "ex",
        "exs",
    )
)


@dataclass(frozen=True)
class Hit:
    """One line of a tree that holds a searched word."""

    path: str
    number: int
    text: str


class TreeView(Protocol):
    def search(self, side: Side, words: Collection[str]) -> list[Hit]:
        """Lines of code files (`CODE_SUFFIXES`) of `side` that hold any of `words` as a whole
        word (fixed strings)."""
        ...

    def mentions(self, side: Side, words: Collection[str]) -> list[Hit]:
        """The same, in every other file of `side`: documentation, data, configuration,
        scripts and code in languages the rules do not read."""
        ...

    def text(self, side: Side, path: str) -> str | None:
        """A file's text on `side`; None when the tree has no file at `path` (or a folder or
        submodule there)."""
        ...

    def listing(self, side: Side, directory: str) -> list[str]:
        """The paths of every file under `directory` on `side` (recursively)."""
        ...

    def present(self, side: Side, paths: Collection[str]) -> set[str]:
        """Which of `paths` are files on `side` (one look, however many paths)."""
        ...

    def yaml_lines(self, side: Side, word: str) -> list[Hit]:
        """Lines of the YAML files of `side` that hold `word` as a whole word."""
        ...

    def origins(self, path: str, numbers: Collection[int]) -> dict[int, str] | None:
        """The commit that last changed each of these lines (1-based) of `path` at the base,
        as `git blame` tells; "" for a line that goes back past the start of a shallow clone
        (its commit is not the one that wrote it). None when the base is a tree with no
        history (an implementer's worktree)."""
        ...

    def commit(self, sha: str) -> ChangeSet | None:
        """What commit `sha` changed against its parent, with its two trees; None for a root
        or merge commit, a parent the clone does not have, or a change too large to read."""
        ...


@dataclass(frozen=True)
class TreeChangeSet(ChangeSet):
    """A `ChangeSet` whose base and head trees can be read."""

    trees: TreeView | None = None


def trees_of(changes: ChangeSet) -> TreeView | None:
    return changes.trees if isinstance(changes, TreeChangeSet) else None
