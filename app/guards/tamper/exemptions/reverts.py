"""Removed tests that go with the commit that added them: a change undoing an earlier one.

A revert (made by `git revert` or by hand, whatever its message says) takes back an earlier
commit's change to the code, a fix or a feature, and with it the tests that commit added: they
tested what is no longer there. Judged by their names alone, such tests look removed while the
code they exercise stays (the function a fix was made in is still there), which is what
`test-tamper` reports. The history tells them apart, so this holds only where ourobot reads the
repository with its history (`--repo`, the Action, the check run); an implementer's worktree and
a bare `--diff` get none of it.

A wholly deleted test is set aside when every line of it (decorators, header, body) was
written by one commit, X, as `git blame` at the base tells (X is in the base's history, so it
was reviewed and merged before; a test edited since, or reaching past the start of a shallow
clone, does not qualify), and the change takes back X's change to source code (not tests, not
documentation). Its header line and decorators may have been rewritten since by later commits
(starlette's typing commit added `-> None` to the `def` of a test its revert takes back) when
every line of its body is X's and X created it: X added a header defining a test of that name
to that file, the only test of that name there at the base. A test older than X whose body X
rewrote is not X's: taking X back brings its old body back, it does not delete it; nor is a
test whose cases a later commit's line gives (a `parametrize` list it extended: that case
tests the later commit's code). The conditions on X's change:
1. X changed code: among the source lines X wrote that still stand at the base, or took out
   and the change brings back, one is telling (8 characters or more, a letter or digit) and
   code: not a comment (`#`, `//`, `/*`, `*`), not strings alone (a docstring's lines, told
   by tokenizing the whole Python file; a string statement), not a literal given to a
   version-like name (`__version__ = "1.0.1"`);
2. X's own lines go: in every source file X touched, the file is where X left it at the base,
   every non-blank line `git blame` at the base gives to X is among the lines the change
   deletes from it (as the diff aligns them or as an equally valid diff would:
   `diffs.alignments`), and a file X did not create still exists after the
   change; deleting identical lines elsewhere in its place takes nothing back;
3. X's removed lines come back: each line X left fewer times in a file, the change leaves in
   it as many times more (net counts, lines compared as they are, indentation included,
   trailing spaces not);
4. not moved: fewer than half of the telling lines X added (net) are added anywhere in the
   change (`diffs.mostly_added`): X's code written again elsewhere is a move.

So a test written with a fix goes when the fix goes. What it cannot excuse: a test whose code
stays as it was when the test was written (nothing of X's is taken back, or only part), a test
added on its own (X changed no code), or a test whose body was edited since X. The evidence
is git's: history the change cannot write, compared exactly.

Whether the test exercises the very lines X changed is not asked: tests reach a fix through
behaviour (an HTTP request to an app whose query parser was fixed), which names cannot show.
So a commit that added many tests with a small change to the code frees all of them when that
change is taken back: the change is then a revert of reviewed history, in plain sight, which
the review panel and the human approval see. Nor can text tell a fix taken back from one put
back in another spelling, or rewritten in other words into another file: a known gap, which
the review panel and the human approval are there for.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from app.guards.changes import ChangeSet, FileChange, Line, is_telling
from app.guards.tamper.code_names import is_source
from app.guards.tamper.definitions import definition_name_at
from app.guards.tamper.diffs import alignments, mostly_added
from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.lang.text import decorator_start, indent
from app.guards.trees import TreeView

_COMMENT_STARTS = ("#", "//", "/*", "*")
# A line that is only a string literal (Python: a docstring's line, a string statement).
_STRING_ONLY = re.compile(
    r"""[rRbBuUfF]{0,2}(?:"{3}(?:(?!"{3}).)*(?:"{3})?|'{3}(?:(?!'{3}).)*(?:'{3})?"""
    r"""|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|[^"'=(]*(?:"{3}|'{3})"""
)
# A literal assigned to a version-like name: `__version__ = "1.0.1"`, `VERSION = (1, 0)`.
_VERSION = re.compile(
    r"""(?:export\s+)?(?:(?:const|let|var)\s+)?[\w.]*version\w*\s*(?::\s*\w+\s*)?:?=\s*"""
    r"""(?:"[^"]*"|'[^']*'|[\d.]+|\([\d,\s]*\))\s*[;,]?""",
    re.IGNORECASE,
)
# A decorator or header that gives a test its cases or inputs.
_GIVES_CASES = re.compile(
    r"\bparametrize\b|\bpytest\.param\b|(?<![\w.])(?:given|example)\s*\(|\.each\b"
)
# Tokens that are not code: what a line holding only these says is prose or layout.
_PROSE_TOKENS = frozenset(
    {tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT}
    | {tokenize.DEDENT, tokenize.ENDMARKER}
    | {
        getattr(tokenize, name)
        for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
        if hasattr(tokenize, name)
    }
)


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
            commit = self._writer(path, header, numbers, origins)
            if commit and self.undoes(commit):
                freed.add(header)
        return freed

    def _writer(
        self, path: str, header: int, numbers: Collection[int], origins: Mapping[int, str]
    ) -> str | None:
        """The one commit that wrote a test: every line of it, or every line of its body when
        later commits touched only its header and decorators (type hints, a marker) of a test
        that commit created. None when no one commit did."""
        commits = {origins.get(number) for number in numbers}
        if len(commits) == 1:
            return commits.pop() or None
        body = {origins.get(number) for number in numbers if number > header}
        top = {origins.get(number) for number in numbers if number <= header}
        if len(body) != 1 or not all(top):
            return None  # a body line edited since, or a header past a shallow clone's start
        (commit,) = body
        later = {number for number in numbers if number <= header and origins[number] != commit}
        if not commit or self._gives_cases(path, header, later):
            return None
        return commit if self._created(commit, path, header) else None

    def _gives_cases(self, path: str, header: int, later: Collection[int]) -> bool:
        """Whether a line another commit wrote in the test's header or decorators is in one
        that gives the test its cases (`parametrize`, a `pytest.param`, hypothesis's `given`
        or `example`, `test.each`): a case added there tests that commit's code, not the
        taken-back one's. Retyping (`-> None`) or another mark is not."""
        text = self._trees.text("base", path)
        if text is None:
            return True
        lines = [Line(n, t, n) for n, t in enumerate(text.splitlines(), 1)]
        if not 0 < header <= len(lines):
            return True
        position = header - 1
        depth = indent(lines[position].text)
        # The header alone, then each decorator (read upwards, from its last line to its `@`).
        groups: list[list[Line]] = [[lines[position]], []]
        for line in reversed(lines[decorator_start(lines, position) : position]):
            groups[-1].append(line)
            if indent(line.text) == depth and line.text.lstrip().startswith("@"):
                groups.append([])
        return any(
            any(line.number in later for line in group)
            and _GIVES_CASES.search("\n".join(line.text for line in group)) is not None
            for group in groups
        )

    def _created(self, commit: str, path: str, header: int) -> bool:
        """Whether `commit` added to `path` a header defining the test whose header is line
        `header` at the base, the only test of that name there. A test whose header is older
        than the commit was there before it, with a body the commit rewrote: a take-back
        brings that body back, it does not delete the test."""
        text = self._trees.text("base", path)
        earlier = self._trees.commit(commit)
        if text is None or earlier is None:
            return False
        lines = [Line(n, t, n) for n, t in enumerate(text.splitlines(), 1)]
        if not 0 < header <= len(lines):
            return False
        reader = reader_for(path)
        name = definition_name_at(lines, header - 1, reader)
        names = [definition_name_at(lines, i, reader) for i in range(len(lines))]
        if name is None or names.count(name) != 1:
            return False  # another test of that name: which header the commit wrote is unclear
        change = next((c for c in earlier.files if c.new_path == path), None)
        added = change.added if change is not None else []
        return any(definition_name_at(added, i, reader) == name for i in range(len(added)))

    def undoes(self, commit: str) -> bool:
        """Whether this change takes back all of `commit`'s change to source code."""
        if commit not in self._undone:
            earlier = self._trees.commit(commit)
            self._undone[commit] = earlier is not None and self._takes_back(commit, earlier)
        return self._undone[commit]

    def _takes_back(self, commit: str, earlier: ChangeSet) -> bool:
        sources = [c for c in earlier.files if is_source(c.new_path or c.old_path)]
        standing: list[dict[int, str]] = []
        code = False
        for change in sources:
            found = self._standing(commit, change)
            if found is None:
                return False  # the file is not where the commit left it, or has no history
            lines, prose = found
            standing.append(lines)
            path = change.new_path or ""
            code = code or any(n not in prose and _is_code(text, path) for n, text in lines.items())
        changed = [_net(c) for c in sources]
        for change, net in zip(sources, changed, strict=True):
            code = code or self._brings_back_code(change, net)
        if not code:
            return False  # no code changed (tests, docs, comments, a version), or next to none
        # A line X re-indented (lost at one indent, gained at another) comes back with a
        # take-back: not evidence of a move.
        lost = {text.strip() for net in changed for text, count in net.items() if count < 0}
        gained = [
            text
            for net in changed
            for text, count in net.items()
            if count > 0 and text.strip() not in lost
        ]
        if any(map(is_telling, gained)) and mostly_added(gained, self._added_lines()):
            return False  # what the commit wrote is written again: moved, not taken back
        return all(
            self._deletes(change, lines) and self._brings_back(change, net)
            for change, lines, net in zip(sources, standing, changed, strict=True)
        )

    def _standing(self, commit: str, earlier: FileChange) -> tuple[dict[int, str], set[int]] | None:
        """The non-blank lines of the file the earlier commit left that are still its lines at
        the base (`git blame` of the whole file), by number, and which of the file's lines
        hold no code (`_prose_lines`); None when the base has no file there (moved or deleted
        since) or no history."""
        if earlier.new_path is None:
            return {}, set()
        text = self._trees.text("base", earlier.new_path)
        if text is None:
            return None
        lines = text.splitlines()
        origins = self._trees.origins(earlier.new_path, range(1, len(lines) + 1))
        if origins is None:
            return None
        standing = {
            number: lines[number - 1]
            for number, origin in origins.items()
            if origin == commit and lines[number - 1].strip()
        }
        return standing, _prose_lines(earlier.new_path, text)

    def _deletes(self, earlier: FileChange, standing: Mapping[int, str]) -> bool:
        """Whether the change deletes every line the earlier commit wrote that still stands at
        the base, in the diff's alignment or an equally valid one, and leaves the file it
        found if the earlier commit did (a take-back restores the file, it does not delete
        it)."""
        mine = next((c for c in self._files if c.old_path == earlier.new_path), None)
        if mine is None:
            return not standing
        if earlier.old_path is not None and mine.new_path is None:
            return False
        if not standing:
            return True
        text = self._trees.text("base", earlier.new_path or "") or ""
        removed = {line.number for line in mine.removed}
        slid = set().union(*alignments(text.splitlines(), removed))
        return set(standing) <= slid

    def _brings_back(self, earlier: FileChange, net: Counter[str]) -> bool:
        """Whether the change brings back each line the earlier commit took out of the file,
        as often (net counts do not depend on how either diff was aligned)."""
        mine = self._mine_at(earlier)
        back = _net(mine) if mine is not None else Counter()
        return all(back[text] >= -count for text, count in net.items() if count < 0)

    def _brings_back_code(self, earlier: FileChange, net: Counter[str]) -> bool:
        """Whether a line the earlier commit took out of the file, and the change brings back,
        is code where it comes back (a docstring's inner line is told as such only in the
        whole file)."""
        lost = {text for text, count in net.items() if count < 0}
        mine = self._mine_at(earlier)
        if not lost or mine is None or mine.new_path is None:
            return False
        text = self._trees.text("head", mine.new_path) or ""
        prose = _prose_lines(mine.new_path, text)
        return any(
            line.number not in prose and _is_code(line.text, mine.new_path)
            for line in mine.added
            if line.text.rstrip() in lost
        )

    def _added_lines(self) -> set[str]:
        return {line.text.strip() for change in self._files for line in change.added}

    def _mine_at(self, earlier: FileChange) -> FileChange | None:
        """The change's change to the file the earlier commit left (or took away)."""
        for change in self._files:
            if earlier.new_path is not None and change.old_path == earlier.new_path:
                return change
            if earlier.old_path is not None and change.new_path == earlier.old_path:
                return change
        return None


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


def _is_code(text: str, path: str) -> bool:
    """Whether a line says something and is code: not a comment, not a line of a string
    alone (a docstring's), not a literal given to a version-like name."""
    stripped = text.strip()
    if not is_telling(stripped) or stripped.startswith(_COMMENT_STARTS):
        return False
    if reader_for(path) is PYTHON and _STRING_ONLY.fullmatch(stripped):
        return False
    return not _VERSION.fullmatch(stripped)


def _prose_lines(path: str, text: str) -> set[int]:
    """The lines of a Python file that hold no code, only strings and comments (a
    docstring's inner lines among them); none for other languages, or a file Python cannot
    tokenize."""
    if reader_for(path) is not PYTHON:
        return set()
    code: set[int] = set()
    rows: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            covered = range(token.start[0], token.end[0] + 1)
            rows.update(covered)
            if token.type not in _PROSE_TOKENS:
                code.update(covered)
    except (tokenize.TokenError, SyntaxError):
        return set()
    return rows - code
