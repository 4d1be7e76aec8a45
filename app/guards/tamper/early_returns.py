"""A `return` that ends a test where it stands: added at the top level of the body of a
test that existed, with code of the body after it, the rest of the test never runs and the
test passes whatever the code does. It is a skip with no marker, and reported as one; so is
a return under an `if` directly in the test's body (`if os.environ.get("CI"): return`), a skip
on that condition, unless the condition is false where the suite runs (`if sys.platform ==
"win32": return`, read as a skip's condition is) or the block fails the test first
(`t.Errorf(...); return`, `pytest.fail`, `raise`).

Read on the new side of a test file: the whole file where ourobot reads the repository, the
added and context lines a diff shows otherwise (a return added at the top of a test is shown
with the test's header in its context). Only a return directly in the test's body, or under an
`if` directly in it, counts: one in a loop, a nested `if`, a nested function, a callback or a
Go subtest's closure ends that block, not the test, and one after which the body has no code
ends nothing. Whatever it returns: pytest passes a test that returns a value (with a
warning), and JavaScript's `return promise` as the test's last statement ends nothing, while
one with code after it leaves that code unrun.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from app.guards.changes import FileChange, Line, restated
from app.guards.tamper.conditions.skip_conditions import condition_false_on_linux
from app.guards.tamper.definitions import definition_name_at
from app.guards.tamper.lang import Reader, plain_comment, reader_for
from app.guards.tamper.lang.ruby import RUBY
from app.guards.tamper.lang.text import indent

# A return statement: with code of the body after it, whatever it returns, the rest never runs
# (pytest passes a test that returns a value, with a warning; a promise returned first is all
# a JavaScript runner waits for).
_RETURN = re.compile(r"^\s*return\b")
# RSpec's blocks end early with `next` (`return` there raises), `next if cond` included.
_RUBY_NEXT = re.compile(r"^\s*next\b")
# The one-line forms: Python's `if cond: return`, JavaScript's `if (cond) return;`.
_INLINE_RETURN = re.compile(
    r"^\s*if\b(?P<py>.+?):\s*return\b.*$|^\s*if\s*\((?P<js>.*)\)\s*return\b.*$"
)
# A one-line conditional skip: `if cond: pytest.skip(...)`, `if (cond) this.skip()`.
_INLINE_SKIP = re.compile(r"^\s*if\b(?P<py>.+?):\s*\S.*$|^\s*if\s*\((?P<js>.*)\)\s*[\w$.]+\(.*$")
# An `if` that opens a block: `if cond:`, `if cond {`, `if (cond) {`.
_IF_OPENER = re.compile(r"^\s*if\b(?P<cond>.+?)\s*[:{]\s*$")
# A condition that is a call of a predicate of the file, or its negation: `skipReportCaller(t)`.
_PREDICATE_CALL = re.compile(r"^(?P<not>!|not\s+)?\s*(?P<name>[A-Za-z_]\w*)\s*\([^()]*\)$")
# A line that closes a block rather than running code: `}`, `})`, Ruby's `end`, or goes on
# with its statement: `else`, `elif`, `} else {`.
_CLOSING = re.compile(r"^\s*(?:[})\]]|end\b|else\b|elif\b)")
# A line that fails the test, or hands the failure on, before the return: it ends nothing
# that would have passed.
_FAILS = re.compile(r"\b(?:raise|throw)\b|\bpytest\.fail\b")


def early_returns(
    change: FileChange,
    shown: Sequence[Line] | None,
    existed: Collection[str],
    base: Sequence[Line] | None = None,
) -> list[int]:
    """The numbers of the added lines that end a test that existed early. `shown` is the new
    side, whole or as much of it as the diff shows (added and context lines, in order);
    `existed` the names of tests that were there under another header line; `base` the old
    side whole, when the repository is read."""
    reader = reader_for(change.path)
    ruby = reader is RUBY
    candidates = [line for line in change.added if _is_return(line.text, ruby=ruby)]
    if not candidates or change.status in ("added", "copied"):
        return []
    lines = list(shown) if shown else list(change.added)
    where = {line.number: position for position, line in enumerate(lines)}
    added = {line.number for line in change.added}
    found: list[int] = []
    for line in candidates:
        position = where.get(line.number)
        if position is None or lines[position].text != line.text:
            continue
        header = _ends_test_early(lines, position, change.path)
        if header is None:
            continue
        name = definition_name_at(lines, header, reader) or ""
        if lines[header].number not in added or name in existed:
            found.append(line.number)
    return _net(found, lines, change, base, reader)


def _net(
    found: list[int],
    lines: Sequence[Line],
    change: FileChange,
    base: Sequence[Line] | None,
    reader: Reader,
) -> list[int]:
    """The new early returns no removed one replaces. A return restated (re-indented, given a
    `;`) or reworded replaces one that was there, as a skip reworded does (sinatra's `next if
    server.puma? or server.rainbows?` made `next if server.puma?`); with the base file whole,
    only one in the same test (a return taken off one test pays for none put on another), and
    without it, any in the file. One that returned only off Linux pays for nothing."""
    ruby = reader is RUBY
    gone: Counter[str | None] = Counter()
    where = {line.number: position for position, line in enumerate(base or ())}
    for line in change.removed:
        if not _is_return(line.text, ruby=ruby) or _off_linux(line.text):
            continue
        position = where.get(line.number)
        test = (
            _test_of(base, position, reader) if base is not None and position is not None else None
        )
        gone[test] += 1
    numbers = {line.number: position for position, line in enumerate(lines)}
    new: list[int] = []
    for number in found:
        test = _test_of(lines, numbers[number], reader) if base is not None else None
        if gone[test] > 0:
            gone[test] -= 1
        else:
            new.append(number)
    return new


def _test_of(lines: Sequence[Line], position: int, reader: Reader) -> str | None:
    """The name of the test whose header is the nearest less-indented line above, if any."""
    at = _enclosing(lines, position)
    while at is not None:
        name = definition_name_at(lines, at, reader)
        if name is not None:
            return name
        at = _enclosing(lines, at)
    return None


def _is_return(text: str, *, ruby: bool) -> bool:
    return bool(
        _RETURN.match(text) or _INLINE_RETURN.match(text) or (ruby and _RUBY_NEXT.match(text))
    )


def _off_linux(text: str) -> bool:
    """A one-line return on a condition false on Linux (`if sys.platform == "win32": return`)."""
    inline = _INLINE_RETURN.match(text)
    return inline is not None and condition_false_on_linux(inline["py"] or inline["js"])


def _ends_test_early(lines: Sequence[Line], position: int, path: str) -> int | None:
    """The index of the header of the test a return at `lines[position]` ends early: one
    directly in the test's body, or under an `if` directly in it whose condition may hold on
    Linux and whose block fails nothing before it; with code of the body after it."""
    reader = reader_for(path)
    inline = _INLINE_RETURN.match(lines[position].text)
    checked: list[Line] = []
    if inline is not None:
        condition, opener = inline["py"] or inline["js"], position
    else:
        enclosing = _enclosing(lines, position)
        if enclosing is None:
            return None
        if definition_name_at(lines, enclosing, reader) is not None:
            return enclosing if _code_after(lines, position, path) else None
        match = _IF_OPENER.match(lines[enclosing].text)  # an `if`, never an `elif`/`else`
        if match is None:
            return None
        condition, opener = match["cond"], enclosing
        checked = list(lines[opener + 1 : position])
    header = _enclosing(lines, opener)
    if header is None or definition_name_at(lines, header, reader) is None:
        return None
    if any(reader.checks(line.text) or _FAILS.search(line.text) for line in checked):
        return None
    if condition_false_on_linux(_meaning(condition.strip(), lines)):
        return None  # returns only where the suite does not run, like a platform skip
    return header if _code_after(lines, position, path, indent(lines[opener].text)) else None


def _meaning(condition: str, lines: Sequence[Line]) -> str:
    """A condition that calls a predicate of the same file, read as what the predicate tests:
    logrus's `if skipReportCaller(t) { return }` over a Go `func skipReportCaller(t
    *testing.T) bool` whose only `return true` is under `if runtime.Compiler == "tinygo" {`
    and which else returns false; a Python `def on_windows(): return sys.platform ==
    "win32"`. Anything else is the condition as written."""
    call = _PREDICATE_CALL.match(condition)
    if call is None:
        return condition
    tested = _predicate(call["name"], lines)
    if tested is None:
        return condition
    return f"not ({tested})" if call["not"] else f"({tested})"


def _predicate(name: str, lines: Sequence[Line]) -> str | None:
    """What a predicate function of the file tests, when its body says it plainly: Go's
    `if COND { ...; return true }` then `return false` (no other return, no other `if`),
    Python's one `return COND`. Defined once in the file; else None."""
    headers = [i for i, line in enumerate(lines) if _defines_predicate(line.text, name)]
    if len(headers) != 1:
        return None
    start = headers[0]
    code: list[tuple[int, str]] = []  # (indentation, text) of the body's lines of code
    for line in lines[start + 1 :]:
        if line.text.strip() and indent(line.text) <= indent(lines[start].text):
            break
        text = line.text.strip()
        if text and not text.startswith(("//", "#", '"')):
            code.append((indent(line.text), text))
    texts = [text for _, text in code]
    if lines[start].text.lstrip().startswith("def "):
        single = len(texts) == 1 and texts[0].startswith("return ")
        return texts[0].removeprefix("return ") if single else None
    guards = [i for i, text in enumerate(texts) if text.startswith("if ")]
    returns = [text for text in texts if text.startswith("return")]
    if len(guards) != 1 or returns != ["return true", "return false"]:
        return None
    guard, inside = guards[0], texts.index("return true")
    opener = _IF_OPENER.match(texts[guard])
    # `return true` inside the `if` (deeper, nothing closing it first), `return false` last.
    closes = any(text.startswith("}") for text in texts[guard + 1 : inside])
    nested = guard < inside and code[inside][0] > code[guard][0] and not closes
    if opener is None or not nested or texts[-1] != "return false":
        return None
    return opener["cond"]


def _defines_predicate(text: str, name: str) -> bool:
    """Whether the line opens a Go `func name(...) bool {` or a Python `def name(...):`."""
    word = re.escape(name)
    go = re.match(rf"^func\s+{word}\s*\([^)]*\)\s*bool\s*\{{\s*$", text)
    python = re.match(rf"^def\s+{word}\s*\([^)]*\)\s*(?:->\s*bool\s*)?:\s*$", text)
    return bool(go or python)


def _enclosing(lines: Sequence[Line], position: int) -> int | None:
    """The index of the first line above `lines[position]`, in the same run, indented less."""
    depth = indent(lines[position].text)
    for index in range(position - 1, -1, -1):
        if lines[index].number != lines[index + 1].number - 1:
            return None
        text = lines[index].text
        if text.strip() and indent(text) < depth:
            return index
    return None


def _code_after(lines: Sequence[Line], position: int, path: str, depth: int | None = None) -> bool:
    """Whether the body goes on after `lines[position]`: past the rest of the block the return
    is in (lines deeper than `depth`, closing braces, `else` branches), the next line of the
    same run that says something is indented at least `depth` (the return's own, by default).
    A closing `}` or a dedent below it ends the body."""
    depth = indent(lines[position].text) if depth is None else depth
    for index in range(position + 1, len(lines)):
        if lines[index].number != lines[index - 1].number + 1:
            return False
        text = lines[index].text
        if not text.strip() or plain_comment(text, path):
            continue
        if indent(text) > depth or (indent(text) == depth and _CLOSING.match(text)):
            continue
        return indent(text) >= depth and not _CLOSING.match(text)
    return False


def gated_returns(lines: Sequence[Line]) -> set[str]:
    """The conditions of returns among `lines` (restated): `if (cond) return`, `if cond:
    return`, or an `if` line followed by a `return` line."""
    found: set[str] = set()
    for index, line in enumerate(lines):
        inline = _INLINE_RETURN.match(line.text)
        if inline is not None:
            found.add(_bare_condition(inline["py"] or inline["js"]))
            continue
        opener = _IF_OPENER.match(line.text)
        following = lines[index + 1] if index + 1 < len(lines) else None
        if opener is not None and following is not None and _RETURN.match(following.text):
            found.add(_bare_condition(opener["cond"]))
    return found


def skip_gate(lines: Sequence[Line], position: int) -> str | None:
    """The condition (restated) of the `if` a skip at `lines[position]` is directly under:
    on its own line (`if (cond) this.skip()`) or the line that opens its block."""
    if not 0 <= position < len(lines):
        return None
    inline = _INLINE_SKIP.match(lines[position].text)
    if inline is not None:
        return _bare_condition(inline["py"] or inline["js"])
    enclosing = _enclosing(lines, position)
    opener = _IF_OPENER.match(lines[enclosing].text) if enclosing is not None else None
    return _bare_condition(opener["cond"]) if opener is not None else None


def _bare_condition(text: str) -> str:
    """A condition without the parentheses that wrap all of it (`(a && b)` is `a && b`),
    restated."""
    text = restated(text)
    while text.startswith("(") and text.endswith(")") and _wraps(text):
        text = text[1:-1].strip()
    return text


def _wraps(text: str) -> bool:
    """Whether the opening parenthesis closes at the very end."""
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return position == len(text) - 1
    return False
