"""Removed tests that go with the commit that added them: a change undoing an earlier one.

A revert (made by `git revert` or by hand, whatever its message says) takes back an earlier
commit's change to the code, a fix or a feature, and with it the tests that commit added: they
tested what is no longer there. Judged by their names alone, such tests look removed while the
code they exercise stays (the function a fix was made in is still there), which is what
`test-tamper` reports. The history tells them apart, so this holds only where ourobot reads the
repository with its history (`--repo`, the Action, the check run); an implementer's worktree and
a bare `--diff` get none of it.

A wholly deleted test is set aside when:
1. every line of it (decorators, header, body) was written by one commit, X, as `git blame` at
   the base tells: X is in the base's history, so it was reviewed and merged before; a test
   edited since, or reaching past the start of a shallow clone, does not qualify;
2. X changed source code (not tests, not documentation), by more than punctuation, and the
   change takes all of that back: in every source file X touched, each line X's commit left in
   the file more times than before, the change leaves in it as many times fewer, and each line
   X left fewer times, the change brings back as often (lines compared as they are,
   indentation included, trailing spaces not; net counts, so neither diff's alignment
   matters).

So a test written with a fix goes when the fix goes. What it cannot excuse: a test whose code
stays as it was when the test was written (nothing of X's is taken back, or only part), a test
added on its own (X changed no code), or a test edited since X. The evidence is git's: history
the change cannot write, compared exactly.

Whether the test exercises the very lines X changed is not asked: tests reach a fix through
behaviour (an HTTP request to an app whose query parser was fixed), which names cannot show.
So a commit that added many tests with a small change to the code frees all of them when that
change is taken back: the change is then a revert of reviewed history, in plain sight, which
the review panel and the human approval see.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from app.guards.changes import ChangeSet, FileChange
from app.guards.code_names import is_source
from app.guards.trees import TreeView

# Shorter lines (`}`, `pass`, `else:`) say too little to count as a change of the code.
_MIN_LINE = 8


class Reverts:
    """Which removed tests a change takes back with the commit that wrote them. Reads the
    history only for tests nothing else accounts for."""

    def __init__(self, files: Sequence[FileChange], trees: TreeView) -> None:
        self._files = files
        self._trees = trees
        self._undone: dict[str, bool] = {}

    def freed(self, path: str, spans: Mapping[int, Collection[int]]) -> set[int]:
        """Of the tests in `path` (at the base), each given as its header line and the lines it
        spans, those written by one commit whose change to the code this change takes back.
        One `git blame` for the file."""
        origins = self._trees.origins(path, [n for numbers in spans.values() for n in numbers])
        if origins is None:
            return set()
        freed: set[int] = set()
        for header, numbers in spans.items():
            commits = {origins.get(number) for number in numbers}
            if len(commits) != 1:
                continue
            (commit,) = commits
            if commit and self.undoes(commit):
                freed.add(header)
        return freed

    def undoes(self, commit: str) -> bool:
        """Whether this change takes back all of `commit`'s change to source code."""
        if commit not in self._undone:
            earlier = self._trees.commit(commit)
            self._undone[commit] = earlier is not None and self._takes_back(earlier)
        return self._undone[commit]

    def _takes_back(self, earlier: ChangeSet) -> bool:
        sources = [c for c in earlier.files if is_source(c.new_path or c.old_path)]
        changed = [_net(c) for c in sources]
        if not any(_telling(text) for net in changed for text, count in net.items() if count):
            return False  # no code changed (a commit of tests or docs alone), or next to none
        return all(self._takes_back_file(c, net) for c, net in zip(sources, changed, strict=True))

    def _takes_back_file(self, earlier: FileChange, net: Counter[str]) -> bool:
        """Whether the change's own net change to the file undoes `net`: it loses each line
        the earlier commit gained, as many times, and regains each line it lost. Net counts do
        not depend on how either diff was aligned."""
        mine = self._net_at(earlier)
        return all(
            mine[text] <= -count if count > 0 else mine[text] >= -count
            for text, count in net.items()
        )

    def _net_at(self, earlier: FileChange) -> Counter[str]:
        """The change's net change to the file the earlier commit left (or took away)."""
        for change in self._files:
            if earlier.new_path is not None and change.old_path == earlier.new_path:
                return _net(change)
            if earlier.old_path is not None and change.new_path == earlier.old_path:
                return _net(change)
        return Counter()


def _net(change: FileChange) -> Counter[str]:
    """How many more times each non-blank line (indentation kept: code re-indented under a
    new block is changed code) is in the file after the change than before: negative for
    lines it lost."""
    net: Counter[str] = Counter()
    for line in change.added:
        if text := line.text.rstrip():
            net[text] += 1
    for line in change.removed:
        if text := line.text.rstrip():
            net[text] -= 1
    return Counter({text: count for text, count in net.items() if count})


def _telling(text: str) -> bool:
    """Whether a line is code that says something (not a brace, a blank or a one-word line):
    a change of punctuation alone is no change of behaviour to take back."""
    stripped = text.strip()
    return len(stripped) >= _MIN_LINE and any(c.isalnum() for c in stripped)
