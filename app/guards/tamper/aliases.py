"""Test functions under another name, read as the plain function they are: Ruby tests defined
through a wrapper of the suite's own that runs its block (`deprecated "title" do`, see
`ruby_wrappers`), and, below, JavaScript test functions under a name of the file's own that
skips only off Linux: `const testOrSkipOnWindows = process.platform === 'win32' ? test.skip :
test;`, then `testOrSkipOnWindows('name', () => {...})`.

On Linux, where ourobot's sandbox and nearly every CI run the suite, such a name is the test
function itself, so a test defined through it is a test that runs, exactly as `test(...)` is;
a skip on Windows or macOS only is not tampering (see `conditions.skip_conditions`). Without
this, a test moved under the alias was not recognised at all and read as removed.

Only what is proven is rewritten: an alias declared once in the file (never assigned again)
as a condition choosing between one test function (`it`, `test`, `describe`, ...) and its
`.skip`, where the condition picks the plain function on Linux (parsed as in
`skip_conditions`, never evaluated). An alias whose condition may hold on Linux (an
environment variable, a flag, anything not understood), one imported from another file, or
one declared twice, is left as it is: a test moved under it is still reported as removed.

Which aliases a side of a file has is read from that side's whole file when the trees are at
hand, else from the lines the change shows of it. The change's lines and the whole files are
rewritten alike (`test(` for `testOrSkipOnWindows(` at the start of a line), so every part of
the rule reads the same text.

The same choice written in place, `(cond ? it.skip : it)('name', ...)` (koa's socket-error
test, skipped on Node 18), is read alike: as the plain `it(` when the condition picks it on
Linux, else as the conditional skip it is, `it.skipIf(cond)(` (`it.skipIf(!(cond))(` when the
skip is the second choice), which `definitions` reads as a test that runs and
`rule` as a skip marker whose condition may hold. Before, such a line was
no test at all: turning `it('name', ...)` into it was reported as the test removed (even on a
Windows-only condition), and deleting it was not reported.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from app.guards.changes import ChangeSet, FileChange, Line
from app.guards.tamper import ruby_wrappers
from app.guards.tamper.code_names import STRING
from app.guards.tamper.conditions.named_markers import named_markers, rewrite_marker
from app.guards.tamper.conditions.skip_conditions import condition_false_on_linux
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.test_files import is_test_path
from app.guards.trees import Hit, Side, TreeView

_JS = re.compile(r"\.[cm]?[jt]sx?$")
_FUNCTION = r"(?:it|test|describe|context|specify|suite)"
_DECLARATION = re.compile(
    r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<alias>[A-Za-z_$][\w$]*)\s*=\s*"
    rf"(?P<cond>[^?=][^?]*?)\s*\?\s*(?P<yes>{_FUNCTION}(?:\.skip)?)\s*:\s*"
    rf"(?P<no>{_FUNCTION}(?:\.skip)?)\s*;?\s*$"
)
_ASSIGNED = r"(?<![\w$.])(?:{name})\s*=(?!=)"
# A line that may call an alias as a test: `name(` then a quoted name, or the end of the line.
_CALL = re.compile(r"^\s*(?P<n>[A-Za-z_$][\w$]*)\s*\(\s*(?:['\"`]|$)")
_FUNCTIONS = frozenset({"it", "test", "describe", "context", "specify", "suite"})
# Ways a JavaScript file binds the name `process` itself: declared, assigned, destructured
# into, or a parameter of a function or arrow.
_PROCESS_BINDINGS = (
    re.compile(r"\b(?:const|let|var|class|function)\s+process\b"),
    re.compile(r"(?<![\w$.])process\s*=(?![=>])"),
    re.compile(r"(?<![\w$.])process\s*=>"),
    re.compile(r"\(([^()]*[,\s(])?process\b[^()]*\)\s*=>"),
    re.compile(r"\bfunction\b[^(]*\(([^()]*[,\s(])?process\b"),
    re.compile(r"[\[{][^=\]}]*(?<![\w$.])process\b[^=]*[\]}]\s*=(?![=>])"),
)
_COMMENT = re.compile(r"//.*$|/\*.*?\*/")
# The choice written in place, called at the start of a line: `(cond ? it.skip : it)(`.
_INLINE = re.compile(
    rf"^(?P<lead>\s*)\(\s*(?P<cond>[^?]+?)\s*\?\s*(?P<yes>{_FUNCTION}(?:\.skip)?)\s*:\s*"
    rf"(?P<no>{_FUNCTION}(?:\.skip)?)\s*\)\s*\("
)


def linux_aliases(lines: Iterable[str]) -> dict[str, str]:
    """The aliases `lines` (one whole side of a file) declare that are a plain test function on
    Linux, each with that function."""
    texts = list(lines)
    found: dict[str, str] = {}
    declared: dict[str, int] = {}
    for text in texts:
        match = _DECLARATION.match(text)
        if match is None or match["alias"] in _FUNCTIONS:
            continue
        alias = match["alias"]
        declared[alias] = declared.get(alias, 0) + 1
        plain = _plain_on_linux(match["cond"], match["yes"], match["no"])
        if plain is not None:
            found[alias] = plain
    if not platform_trusted(texts):
        return {}
    for alias in list(found):
        assigned = re.compile(_ASSIGNED.format(name=re.escape(alias)))
        once = declared[alias] == 1 and sum(1 for t in texts if assigned.search(t)) == 1
        if not once or not _only_declared_and_called(texts, alias):
            del found[alias]
    return found


def platform_trusted(texts: Sequence[str]) -> bool:
    """Whether `process` in these lines can only be Node's: nothing in the code (comments and
    strings aside) declares, assigns, destructures into or takes a parameter of that name
    (`const process = {platform: 'win32'}` would make any condition on it say what the file
    wants). Passing it along (`jest.spyOn(process, 'exit')`) binds nothing."""
    return not any(binding.search(_code(text)) for text in texts for binding in _PROCESS_BINDINGS)


def _code(text: str) -> str:
    """A line without its strings and comments."""
    return _COMMENT.sub("", STRING.sub('""', text))


def _only_declared_and_called(texts: Sequence[str], alias: str) -> bool:
    """Whether the alias appears in the code (comments and strings aside) only in its
    declaration and as a test call at the start of a line: any other use (destructured into,
    passed, shadowed by a parameter) may make it something else where it is called."""
    word = re.compile(rf"(?<![\w$.]){re.escape(alias)}(?![\w$])")
    for text in texts:
        code = _code(text)
        if not word.search(code):
            continue
        declaration = _DECLARATION.match(text)
        if declaration is not None and declaration["alias"] == alias:
            continue
        call = _CALL.match(text)
        if call is None or call["n"] != alias or len(word.findall(code)) != 1:
            return False
    return True


def _plain_on_linux(condition: str, yes: str, no: str) -> str | None:
    """The test function `condition ? yes : no` is on Linux, when that is the plain function of
    the two (one of them the other's `.skip`); None when it is not, or cannot be told."""
    plain, skip = sorted((yes, no), key=len)
    if skip != f"{plain}.skip":
        return None
    on_linux = no if condition_false_on_linux(condition) else None
    if on_linux is None and condition_false_on_linux(f"!({condition})"):
        on_linux = yes
    return plain if on_linux == plain else None


def rewrite(text: str, aliases: Mapping[str, str], *, trusted: bool = True) -> str:
    """`text` with a call of an alias at the start of the line spelled as its function, and
    an inline choice between a test function and its `.skip` spelled as what it is on Linux
    (a conditional test, never the plain function, unless the file's `process` is Node's)."""
    inline = _INLINE.match(text)
    if inline is not None:
        return _rewrite_inline(text, inline, trusted=trusted)
    match = _CALL.match(text)
    if match is None or match["n"] not in aliases:
        return text
    start, end = match.span("n")
    return text[:start] + aliases[match["n"]] + text[end:]


def _rewrite_inline(text: str, match: re.Match[str], *, trusted: bool) -> str:
    """`(cond ? it.skip : it)(` as `it(` when Linux runs the plain function, else as
    `it.skipIf(cond)(`, or `it.skipIf(!(cond))(` for `(cond ? it : it.skip)(`; left as it
    is when the two choices are not one function and its `.skip`."""
    condition, yes, no = match["cond"], match["yes"], match["no"]
    plain, skip = sorted((yes, no), key=len)
    if skip != f"{plain}.skip":
        return text
    if trusted and _plain_on_linux(condition, yes, no) is not None:
        spelled = f"{plain}("
    else:
        skipped_when = condition if yes == skip else f"!({condition})"
        if not trusted:
            # `process` is not Node's here: the condition may say anything, so it may hold.
            skipped_when = f"({skipped_when}) || untrusted_process"
        spelled = f"{plain}.skipIf({skipped_when})("
    return match["lead"] + spelled + text[match.end() :]


def _python_test(path: str) -> bool:
    return is_module(path) and is_test_path(path)


def _candidate(path: str | None) -> bool:
    return path is not None and bool(_JS.search(path)) and is_test_path(path)


def _calls(lines: Sequence[Line]) -> bool:
    """Whether any line calls, as a test would be defined, a name that is no test function,
    or an inline choice of one."""
    return any(
        ((m := _CALL.match(line.text)) and m["n"] not in _FUNCTIONS) or _INLINE.match(line.text)
        for line in lines
    )


class AliasedTrees:
    """A `TreeView` whose JavaScript test files read with their Linux aliases rewritten."""

    def __init__(self, trees: TreeView) -> None:
        self._trees = trees
        self._rewritten: dict[tuple[Side, str], str | None] = {}
        self._wrappers: dict[tuple[Side, str], bool] = {}

    def lines(self, side: Side, path: str) -> list[str] | None:
        """The file's own lines, as the tree has them (not rewritten)."""
        text = self._trees.text(side, path)
        return text.split("\n") if text is not None else None

    def text(self, side: Side, path: str) -> str | None:
        # Every reader of the file asks again: rewrite it once.
        if (side, path) not in self._rewritten:
            self._rewritten[side, path] = self._rewrite(side, path)
        return self._rewritten[side, path]

    def _rewrite(self, side: Side, path: str) -> str | None:
        text = self._trees.text(side, path)
        if text is not None and ruby_wrappers.is_ruby_test(path):
            lines = text.split("\n")
            wrappers = self.wrappers(side, ruby_wrappers.wrapper_calls(lines))
            if wrappers:
                return "\n".join(ruby_wrappers.rewrite(line, wrappers) for line in lines)
            return text
        if text is not None and _python_test(path):
            markers = named_markers(text.split("\n"))
            if markers:
                return "\n".join(rewrite_marker(line, markers) for line in text.split("\n"))
            return text
        if text is None or not _candidate(path):
            return text
        lines = text.split("\n")
        aliases = linux_aliases(lines)
        if not aliases and not any(_INLINE.match(line) for line in lines):
            return text
        trusted = platform_trusted(lines)
        return "\n".join(rewrite(line, aliases, trusted=trusted) for line in lines)

    def wrappers(self, side: Side, names: set[str]) -> set[str]:
        """Which of `names` are Ruby test wrappers on `side` (`ruby_wrappers`)."""
        wanted = {name for name in names if (side, name) not in self._wrappers}
        if wanted:
            proven = ruby_wrappers.test_wrappers(self._trees, side, wanted)
            self._wrappers.update({(side, name): name in proven for name in wanted})
        return {name for name in names if self._wrappers[side, name]}

    def search(self, side: Side, words: Collection[str]) -> list[Hit]:
        return self._trees.search(side, words)

    def mentions(self, side: Side, words: Collection[str]) -> list[Hit]:
        return self._trees.mentions(side, words)

    def listing(self, side: Side, directory: str) -> list[str]:
        return self._trees.listing(side, directory)

    def present(self, side: Side, paths: Collection[str]) -> set[str]:
        return self._trees.present(side, paths)

    def yaml_lines(self, side: Side, word: str) -> list[Hit]:
        return self._trees.yaml_lines(side, word)

    def origins(self, path: str, numbers: Collection[int]) -> dict[int, str] | None:
        return self._trees.origins(path, numbers)

    def commit(self, sha: str) -> ChangeSet | None:
        return self._trees.commit(sha)


def with_linux_aliases(
    files: Sequence[FileChange], trees: TreeView | None
) -> tuple[tuple[FileChange, ...], TreeView | None]:
    """The change's files, and its trees, with every JavaScript test file's Linux aliases
    rewritten as their test functions, and every Ruby test file's proven test wrappers as
    `it` (see the module's docstring)."""
    aliased = AliasedTrees(trees) if trees is not None else None
    rewritten: list[FileChange] = []
    for change in files:
        sides: tuple[tuple[Side, str | None, tuple[Line, ...]], ...] = (
            ("base", change.old_path, change.removed),
            ("head", change.new_path, change.added),
        )
        lines: dict[Side, tuple[Line, ...]] = {}
        for side, path, block in sides:
            if aliased is not None and ruby_wrappers.is_ruby_test(path):
                calls = ruby_wrappers.wrapper_calls([line.text for line in block])
                wrappers = aliased.wrappers(side, calls) if calls else set()
                if wrappers:
                    lines[side] = tuple(
                        dataclasses.replace(line, text=ruby_wrappers.rewrite(line.text, wrappers))
                        for line in block
                    )
                continue
            if path is not None and _python_test(path):
                whole = aliased.lines(side, path) if aliased is not None else None
                markers = named_markers(whole or [line.text for line in block])
                if markers:
                    lines[side] = tuple(
                        dataclasses.replace(line, text=rewrite_marker(line.text, markers))
                        for line in block
                    )
                continue
            if path is None or not _candidate(path) or not _calls(block):
                continue
            whole = aliased.lines(side, path) if aliased is not None else None
            texts = whole if whole is not None else [line.text for line in block]
            aliases = linux_aliases(texts)
            trusted = platform_trusted(texts)
            if aliases or any(_INLINE.match(line.text) for line in block):
                lines[side] = tuple(
                    dataclasses.replace(line, text=rewrite(line.text, aliases, trusted=trusted))
                    for line in block
                )
        if lines:
            change = dataclasses.replace(
                change,
                removed=lines.get("base", change.removed),
                added=lines.get("head", change.added),
            )
        rewritten.append(change)
    return tuple(rewritten), aliased
