"""Python's test files, as pytest and unittest read them: `def test_x(` and `class TestX`
definitions, `assert` and `pytest.raises` checks, skip decorators and `pytest.skip()`, blocks
ended by indentation, and one test per case of a literal `parametrize` list.

Parametrize lists are read with `ast`, never evaluated.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.changes import Line
from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, Marker, Run, either
from app.guards.tamper.lang.text import decorator_start, indent, next_in_run

# The end of a header: `):`, `) -> None:`, or a class's `:`, maybe with code after it.
_SIGNATURE_END = re.compile(r"(\)\s*(->[^:]*)?|^\s*class\s+\w+\s*):")
_MAX_SIGNATURE_LINES = 40
_MAX_DECORATOR_CHARS = 20_000


@dataclass(frozen=True)
class _Python(Language):
    """Blocks end before the next line indented no deeper than the header (a `)` closing a
    long signature continues it); a definition stands for one test per literal case."""

    def body_start(self, lines: Sequence[Line], index: int) -> int | None:
        """The position after a header that may span lines (`def test_x(\\n a,\\n) ->
        None:`); None when its end is not in the run."""
        position = index
        for _ in range(_MAX_SIGNATURE_LINES):
            if _SIGNATURE_END.search(lines[position].text):
                return position + 1
            position += 1
            if not next_in_run(lines, position):
                return None
        return None

    def closes(self, stripped: str) -> bool:
        return False

    def block_end(self, lines: Sequence[str], position: int) -> int:
        header = indent(lines[position])
        for index in range(position + 1, len(lines)):
            stripped = lines[index].strip()
            if not stripped or indent(lines[index]) > header:
                continue
            if stripped[0] in ")]":
                continue
            return index
        return len(lines)

    def cases(self, run: Run, index: int) -> int:
        """The product of the lengths of the literal lists in the `parametrize` decorators
        right above the header (1 when there are none, or when a list is not a literal the
        change shows)."""
        lines = run.lines
        header = indent(lines[index].text)
        start = decorator_start(lines, index)
        decorators: list[list[str]] = []
        for line in lines[start:index]:
            if indent(line.text) == header and line.text.strip().startswith("@"):
                decorators.append([])
            if decorators:
                decorators[-1].append(line.text)
        total = 1
        for decorator in decorators:
            if "parametrize" in decorator[0]:
                total *= _parametrized_cases("\n".join(decorator))
        return total


def _parametrized_cases(text: str) -> int:
    if len(text) > _MAX_DECORATOR_CHARS:
        return 1
    try:
        tree = ast.parse(textwrap.dedent(text).strip().removeprefix("@"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 1
    call = tree.body
    if not isinstance(call, ast.Call):
        return 1
    values: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg == "argvalues":
            values = keyword.value
    if isinstance(values, ast.List | ast.Tuple | ast.Set):
        return max(len(values.elts), 1)
    return 1


PYTHON = _Python(
    name="python",
    suffixes=(".py", ".pyi"),
    comment="#",
    headers=(
        re.compile(r"^\s*(?:async\s+)?def\s+(?P<n>test\w*)\s*\("),
        re.compile(r"^\s*class\s+(?P<n>Test\w*)\s*[(:]"),
    ),
    assertions=either(*CHECKS, r"\bpytest\.(?:raises|warns)\b"),
    markers=(
        Marker("module", re.compile(r"^\s*pytestmark\s*=.*\b(skip|skipif|xfail)\b")),
        Marker(
            "decorator",
            re.compile(
                r"@pytest\.mark\.(skip|skipif|xfail)\b|@(unittest\.)?(skip|skipIf|skipUnless)\b"
                r"|@(unittest\.)?expectedFailure\b"
                # No cases: pytest skips the test (or xfails it: `empty_parameter_set_mark`).
                r"|@pytest\.mark\.parametrize\(\s*[^,()]+,\s*(?:\[\s*\]|\(\s*\))"
            ),
        ),
        Marker(
            "body",
            re.compile(
                r"\bpytest\.(skip|xfail|importorskip)\s*\(|\.skipTest\s*\("
                r"|raise\s+(unittest\.)?SkipTest\b"
            ),
        ),
    ),
    skipping_decorator=re.compile(
        r"^@pytest\.mark\.skip\b(?!if)|^@(unittest\.)?skip\b(?!If|Unless)"
    ),
    syntax=Syntax(comment=("#",), spanning=('"""', "'''"), quotes=('"', "'")),
)


def is_module(path: str) -> bool:
    """A module Python imports and pytest collects tests, hooks and fixtures from: a `.py`
    file. A stub (`.pyi`) is read as Python, and never runs."""
    return path.endswith(".py")


# Lines of a module rewritten before its reading gives up (a bound on the work).
_MAX_REPAIRS = 50
_TYPE_PARAMS = re.compile(
    r"^(\s*(?:async\s+)?(?:def|class)\s+\w+)\s*\[[^\]]*(?:\[[^\]]*\][^\]]*)*\]"
)
_DEFINITION = re.compile(r"^(\s*)(async\s+def|def|class)\s+(\w+)")
_TYPE_ALIAS = re.compile(r"^(\s*)type\s+(\w+)\b")
_COMPOUND = re.compile(
    r"^(\s*)(if|elif|while|for|with|async\s+for|async\s+with|except)\b.*:\s*(#.*)?$"
)
# Stands for a statement this Python cannot read: it may bind any name (`import *`).
_UNREADABLE = "from __unreadable__ import *"


def parse(text: str) -> ast.Module:
    """A module's syntax tree as this Python reads it or, when it uses syntax newer than
    this Python knows (PEP 695's `def f[T]`, `type X = ...`, PEP 701's f-strings, PEP 758's
    `except A, B:`), as it reads once each statement it cannot is rewritten: type parameters
    dropped (a header it still cannot read keeps its name), a type alias made a plain
    binding, any other statement made an `import *` (it
    may bind any name, so what it might hide counts as hidden), a compound statement's
    header one on an unknown condition. Raises SyntaxError when that does not help either."""
    try:
        return ast.parse(text)
    except SyntaxError as error:
        first = error
    lines = text.split("\n")
    replaced: set[int] = set()
    for _ in range(_MAX_REPAIRS):
        index = (first.lineno or 0) - 1
        if not 0 <= index < len(lines):
            raise first
        if index in replaced:
            # A rewritten line still in the way: part of a statement that starts above.
            above = next((i for i in range(index - 1, -1, -1) if i not in replaced), None)
            if above is None:
                raise first
            lines[index] = ""
            index = above
        lines[index] = _readable(lines[index])
        replaced.add(index)
        try:
            return ast.parse("\n".join(lines))
        except SyntaxError as error:
            first = error
    raise first


def _readable(line: str) -> str:
    """A line this Python reads, standing for one it cannot (see `parse`)."""
    lead = line[: len(line) - len(line.lstrip())]
    params = _TYPE_PARAMS.match(line)
    if params is not None:
        return params.group(1) + line[params.end() :]
    definition = _DEFINITION.match(line)
    if definition is not None and line.rstrip().endswith(":"):
        # A header it cannot read keeps its name: the test it defines is still seen.
        kind, name = definition.group(2), definition.group(3)
        return f"{lead}{kind} {name}(*args, **kwargs):" if "def" in kind else f"{lead}class {name}:"
    alias = _TYPE_ALIAS.match(line)
    if alias is not None:
        return f"{lead}{alias.group(2)} = None"
    compound = _COMPOUND.match(line)
    if compound is not None:
        keyword = compound.group(2)
        if keyword == "except":
            return f"{lead}except BaseException:"
        if keyword.endswith("for"):
            return f"{lead}{keyword} __unreadable__ in __unreadable__:"
        if keyword.endswith("with"):
            return f"{lead}{keyword} __unreadable__:"
        return f"{lead}{keyword} __unreadable__:"
    return f"{lead}{_UNREADABLE}" if line.strip() else line
