"""Whether a conditional skip still lets the test run on Linux, where ourobot's sandbox (and
nearly every CI) runs the suite: `skipif(sys.platform == "win32")` does, `skipif(True)`,
`skipif(sys.platform.startswith("linux"))` and `skipif(SOME_FLAG)` do not. And whether a skip
applies on every Python the project supports (`skipif(sys.version_info >= (3, 10))` in a
project that requires Python 3.10), so the test it marks ran nowhere.

Where the suite runs is taken to be Linux on x86_64 (ourobot's sandbox, and the usual CI
runner), with the standard CPython build, on a Python the project declares: from the oldest
it supports (`requires-python`) to the newest its trove classifiers name
(`conditions.classifiers`), both read at the base (the head only ever raising the newest).

Understood: platform conditions (`sys.platform`, `os.name`, `platform.system()`,
`platform.python_implementation()`, `sys.implementation.name`, `platform.machine()`, Go's
`runtime.GOOS`, `runtime.GOARCH` and `runtime.Compiler` (gc, where the suite runs), Node's
`process.platform`) compared with string literals; the interpreter build
(a free-threaded build, `sysconfig.get_config_var("Py_GIL_DISABLED")`, `not
sys._is_gil_enabled()` or its `getattr(sys, "_is_gil_enabled", lambda: True)()` spelling, is not
the standard CPython the suite runs on); `sys.version_info` (or a slice of it) compared with a
tuple of integers, against the oldest Python the project supports when that is known and,
where the suite runs, the newest it declares (a slice of it only from the start, keeping major
and minor); a project's own platform or version flag (`WIN`, `PY_3_10_PLUS`,
`conditions.flags`) as what it stands for; all combined with `and`/`or`/`not` and
`bool(...)`; each only where the test module's `sys`, `platform`, `os`, `sysconfig`, `pytest`
and `unittest` are the real modules, unpatched (`conditions.flags`). pytest's `skipif` and
`xfail` skip when any of their positional conditions holds. Any other condition (an installed
package, an environment variable, a flag that cannot be read) may hold wherever the suite
runs, so it is not "elsewhere only". The text is parsed with `ast`, never evaluated.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache

from app.guards.changes import FileChange, Line
from app.guards.tamper.conditions.flags import Names
from app.guards.tamper.conditions.projects import PROJECT_FILES
from app.guards.tamper.lang.text import indent
from app.guards.trees import TreeView

Version = tuple[int, int]
# The oldest Python the project supports (or the newest it declares), looked up only when a
# condition asks (it may take a read of the base tree).
Floor = Callable[[], Version | None]

_SUBJECTS = frozenset(
    {
        "sys.platform",
        "os.name",
        "platform.system()",
        "platform.python_implementation()",
        "sys.implementation.name",
        "platform.machine()",
        "runtime.GOOS",
        "runtime.GOARCH",
        "runtime.Compiler",
        "process.platform",
    }
)
# The value each subject takes on Linux on x86_64 with CPython, exactly as it is spelled
# there: each subject has its own (`os.name` is "posix", never "linux"; `platform.system()` is
# "Linux", `sys.platform` "linux"), compared case-sensitively, as the condition itself
# compares.
_LINUX_VALUE = {
    "sys.platform": "linux",
    "os.name": "posix",
    "platform.system()": "Linux",
    "platform.python_implementation()": "CPython",
    "sys.implementation.name": "cpython",
    "platform.machine()": "x86_64",
    "runtime.GOOS": "linux",
    "runtime.GOARCH": "amd64",
    "runtime.Compiler": "gc",
    "process.platform": "linux",
}
# Values those subjects take on other systems (any case).
_ELSEWHERE = frozenset(
    {
        "win32",
        "win",
        "windows",
        "nt",
        "cygwin",
        "msys",
        "darwin",
        "macos",
        "ios",
        "android",
        "java",
        "jython",
        "ironpython",
        "pypy",
        "emscripten",
        "wasi",
        "js",
        "wasm",
        "freebsd",
        "openbsd",
        "netbsd",
        "dragonfly",
        "aix",
        "sunos5",
        "solaris",
        "illumos",
        "plan9",
    }
)
# Values `platform.machine()` takes on other machines (any case): Windows' "AMD64" and the
# BSDs' "amd64" are x86_64 too, but never spelled so on Linux.
_OTHER_MACHINES = frozenset(
    {
        "amd64",
        "aarch64",
        "arm64",
        "armv6l",
        "armv7l",
        "armv8l",
        "i386",
        "i486",
        "i586",
        "i686",
        "x86",
        "ppc",
        "ppc64",
        "ppc64le",
        "s390x",
        "riscv64",
        "loongarch64",
        "mips",
        "mips64",
        "sparc64",
    }
)
# Go's names for other architectures, and its other compilers (TinyGo calls itself "tinygo").
_OTHER_GOARCHES = frozenset(
    {"386", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le", "ppc64",
     "ppc64le", "riscv64", "s390x", "wasm"}
)  # fmt: skip
_OTHER_COMPILERS = frozenset({"gccgo", "tinygo"})
_OTHERS = {
    "platform.machine()": _OTHER_MACHINES,
    "runtime.GOARCH": _OTHER_GOARCHES,
    "runtime.Compiler": _OTHER_COMPILERS,
}
# `requires-python = ">=3.10"` (pyproject.toml), `python_requires = >=3.10` (setup.cfg/setup.py).
_REQUIRES_PYTHON = re.compile(
    r"""^\s*(?:requires-python|python_requires)\s*=\s*["']?\s*>=\s*(\d+)\.(\d+)\b"""
)
_VERSION_SUBJECT = "sys.version_info"
_MAX_CHARS = 4000
_MAX_LINES = 20
# `if cond:`, `elif cond:`, Go's `if cond {`, JavaScript's `} else if (cond) {`.
_IF = re.compile(r"^\s*(?:\}\s*)?(?:else\s+if|elif|if)\b(?P<cond>.+?)[:{]\s*$")
# Python's one-line form: `if cond: pytest.skip(...)`.
_INLINE_IF = re.compile(r"^\s*if\b(?P<cond>.+?):\s*\S")
# JavaScript's one-line form opens with `if (`: `if (process.platform === 'win32') this.skip();`.
_BRACED_IF = re.compile(r"^\s*(?:\}\s*else\s+)?if\s*\(")


@dataclass(frozen=True)
class _Assumptions:
    """What is taken as known when judging a condition: Linux on x86_64 with the standard
    CPython build (where the suite runs), the oldest Python the project supports, the newest
    it declares (where the suite runs: only with `linux`), and what the module's platform
    flags stand for (`WIN`, `conditions.flags`)."""

    linux: bool
    floor: Floor | None
    names: Names | None = None
    newest: Floor | None = None


def decorator_skips_elsewhere_only(
    lines: Sequence[Line],
    index: int,
    floor: Floor | None = None,
    names: Names | None = None,
    *,
    newest: Floor | None = None,
) -> bool:
    """A skip decorator or marker assignment starting at `lines[index]` (`@pytest.mark.skipif
    (...)`, `@unittest.skipIf(...)`, `@unittest.skipUnless(...)`, `pytestmark = ...`), read up
    to where its parentheses close in the same run of lines, that never skips on Linux (on any
    Python from `floor` to `newest`, when given; a bare name read as what `names` says it
    stands for)."""
    linux = _Assumptions(linux=True, floor=floor, names=names, newest=newest)
    return _decorator_skips(lines, index, linux) is False


def decorator_skips_everywhere(
    lines: Sequence[Line], index: int, floor: Floor, names: Names | None = None
) -> bool:
    """A `skipif`/`skipIf`/`skipUnless` decorator at `lines[index]` whose condition skips on
    every platform and every Python from `floor` on (an `xfail` still runs the test); a bare
    name read as what `names` says it stands for (a version flag, `PY_3_10_PLUS`)."""
    assumptions = _Assumptions(linux=False, floor=floor, names=names)
    return _decorator_skips(lines, index, assumptions, xfail=False) is True


def marker_skips_everywhere(marker: ast.expr, floor: Floor, names: Names | None = None) -> bool:
    """`decorator_skips_everywhere` for a decorator or marker already parsed (an entry of a
    function's or class's `decorator_list`, the value of `pytestmark`)."""
    assumptions = _Assumptions(linux=False, floor=floor, names=names)
    return _call_skips(marker, assumptions, xfail=False) is True


def _decorator_skips(
    lines: Sequence[Line], index: int, assumptions: _Assumptions, *, xfail: bool = True
) -> bool | None:
    """Whether the decorator at `lines[index]` skips under `assumptions`; None when unknown."""
    text = _balanced(lines, index)
    if text is None:
        return None
    text = textwrap.dedent(text).strip().removeprefix("@")
    if re.match(r"^pytestmark\s*=", text):
        text = text.split("=", 1)[1].strip()
    call = _parse(text)
    return None if call is None else _call_skips(call, assumptions, xfail=xfail)


def _call_skips(call: ast.expr, assumptions: _Assumptions, *, xfail: bool) -> bool | None:
    """Whether a marker call (`pytest.mark.skipif(cond)`, `unittest.skipUnless(cond)`) skips
    under `assumptions`; None when unknown or not a conditional skip."""
    if not isinstance(call, ast.Call):
        return None
    name = dotted_name(call.func) or ""
    condition = _condition(call, name)
    if condition is None or not _standard(name, assumptions):
        return None  # a `pytest` of the module's own may skip whatever the condition says
    truth = _truth(condition, assumptions)
    if name.endswith(("skipif", "skipIf")) or (xfail and name.endswith("xfail")):
        return truth
    if name.endswith("skipUnless"):
        return None if truth is None else not truth
    return None


def supported_python(files: Sequence[FileChange], trees: TreeView | None) -> Floor:
    """The oldest Python the project supported before the change (`requires-python` in the
    base's pyproject.toml, or `python_requires` in setup.cfg/setup.py): the removed lines of a
    change to those files show it, else the base tree does. The base's, not the head's: a
    change cannot declare its own way out of old Pythons. Read when first asked."""

    @cache
    def floor() -> Version | None:
        for name in PROJECT_FILES:
            for change in files:
                if change.old_path == name:
                    found = _floor_in(line.text for line in change.removed)
                    if found is not None:
                        return found
            text = trees.text("base", name) if trees is not None else None
            found = _floor_in(text.splitlines()) if text is not None else None
            if found is not None:
                return found
        return None

    return floor


def _floor_in(lines: Iterable[str]) -> Version | None:
    for text in lines:
        match = _REQUIRES_PYTHON.match(text)
        if match is not None:
            return int(match.group(1)), int(match.group(2))
    return None


def body_skip_elsewhere_only(
    lines: Sequence[Line],
    index: int,
    names: Names | None = None,
    *,
    floor: Floor | None = None,
    newest: Floor | None = None,
) -> bool:
    """A skip statement in a body (`pytest.skip(...)`, `t.Skip(...)`) that sits under an
    `if <platform condition>` line shown in the same run of lines, e.g. `if sys.platform ==
    "win32": pytest.skip(...)` or Go's `if runtime.GOOS == "windows" { t.Skip() }`, or under
    a version condition false on every Python from `floor` to `newest`."""
    pythons = {"floor": floor, "newest": newest}
    inline = _INLINE_IF.match(lines[index].text)
    if inline is not None:
        return condition_false_on_linux(inline.group("cond"), names, **pythons)
    braced = _braced_inline_condition(lines[index].text)
    if braced is not None:
        return condition_false_on_linux(braced, names, **pythons)
    skip_indent = indent(lines[index].text)
    position = index
    while position > 0 and lines[position - 1].number == lines[position].number - 1:
        position -= 1
        text = lines[position].text
        if not text.strip() or indent(text) >= skip_indent:
            continue
        match = _IF.match(text)
        if match is None:
            return False
        return condition_false_on_linux(match.group("cond"), names, **pythons)
    return False


def _braced_inline_condition(text: str) -> str | None:
    """The condition of a JavaScript one-line `if (cond) this.skip();`: the text inside the
    parentheses that open after `if`, to the one that closes them, when a statement follows on
    the same line (not a block's `{`)."""
    match = _BRACED_IF.match(text)
    if match is None:
        return None
    depth = 0
    for position in range(match.end() - 1, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            rest = text[position + 1 :].strip()
            inside = text[match.end() : position]
            return inside if rest and not rest.startswith("{") else None
    return None


def condition_false_on_linux(
    text: str,
    names: Names | None = None,
    *,
    floor: Floor | None = None,
    newest: Floor | None = None,
) -> bool:
    """Whether a condition (Python's spelling, or Go's and JavaScript's `===`, `&&`, `!`) is
    false on Linux with the standard CPython build (on every Python from `floor` to `newest`,
    when given): `process.platform === 'win32'` is. `names` says what the project's own bare
    names stand for (`conditions.flags`)."""
    expression = _parse(_from_c_like(text))
    linux = _Assumptions(linux=True, floor=floor, names=names, newest=newest)
    return expression is not None and _truth(expression, linux) is False


def truth_on_linux(
    node: ast.expr, floor: Floor | None, names: Names | None = None, newest: Floor | None = None
) -> bool | None:
    """Whether a Python condition holds on Linux with the standard CPython build, on every
    Python from `floor` to `newest`: True, False, or None when that cannot be shown."""
    return _truth(node, _Assumptions(linux=True, floor=floor, names=names, newest=newest))


def _balanced(lines: Sequence[Line], index: int) -> str | None:
    parts: list[str] = []
    depth = 0
    for offset in range(_MAX_LINES):
        position = index + offset
        if position >= len(lines) or (
            offset and lines[position].number != lines[position - 1].number + 1
        ):
            return None
        text = lines[position].text
        parts.append(text)
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0:
            joined = "\n".join(parts)
            return joined if len(joined) <= _MAX_CHARS else None
    return None


def _parse(text: str) -> ast.expr | None:
    if len(text) > _MAX_CHARS:
        return None
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _from_c_like(text: str) -> str:
    """Go/JavaScript comparison operators in Python's spelling (enough for the subjects we
    understand)."""
    for old, new in (("===", "=="), ("!==", "!="), ("&&", " and "), ("||", " or ")):
        text = text.replace(old, new)
    return re.sub(r"!(?!=)", " not ", text)


def _condition(call: ast.Call, name: str) -> ast.expr | None:
    """The condition a marker skips on. pytest's `skipif` and `xfail` take any number of
    positional conditions and skip when one holds (`skipif(a, b)` is `a or b`), or one
    `condition=`; unittest's `skipIf`/`skipUnless` take one, then the reason."""
    for keyword in call.keywords:
        if keyword.arg == "condition":
            return keyword.value
    pytest = name.endswith(("skipif", "xfail"))
    conditions = [_written(argument) for argument in (call.args if pytest else call.args[:1])]
    if not conditions or None in conditions:
        return None
    values = [condition for condition in conditions if condition is not None]
    return values[0] if len(values) == 1 else ast.BoolOp(op=ast.Or(), values=values)


def _written(argument: ast.expr) -> ast.expr | None:
    """A condition as written, or parsed from pytest's string form (`skipif("sys.platform ==
    'x'")`); None when a string does not parse."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return _parse(argument.value)
    return argument


def dotted_name(node: ast.expr) -> str | None:
    """`pytest.mark.skipif` for that chain of attributes, `platform.system()` for a call with
    no arguments; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted_name(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        inner = dotted_name(node.func)
        return f"{inner}()" if inner else None
    return None


def _truth(node: ast.expr, assumptions: _Assumptions) -> bool | None:
    """True or False when the condition's value is certain under `assumptions`, else None."""
    literal = _literal(node)
    if literal is not None:
        return bool(literal[0])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, assumptions)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        truths = [_truth(value, assumptions) for value in node.values]
        if isinstance(node.op, ast.And):
            return False if False in truths else (True if all(truths) else None)
        return True if True in truths else (False if all(t is False for t in truths) else None)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        constants = _literal(node.left), _literal(node.comparators[0])
        if None not in constants and isinstance(node.ops[0], ast.Eq | ast.NotEq):
            same = constants[0] == constants[1]
            return same if isinstance(node.ops[0], ast.Eq) else not same
        versions = _version_comparison(node, assumptions)
        if versions is not None or not assumptions.linux:
            return versions
        return _comparison(node.left, node.ops[0], node.comparators[0], assumptions)
    arguments = _call_arguments(node, "bool")
    if arguments is not None and len(arguments) == 1:
        return _truth(arguments[0], assumptions)
    if isinstance(node, ast.Name) and assumptions.names is not None:
        # A platform or version flag (`WIN`, `PY_3_10_PLUS`), read as what it stands for
        # under the same assumptions; one step, no further names.
        meaning = assumptions.names(node.id)
        return None if meaning is None else _truth(meaning, replace(assumptions, names=None))
    if not assumptions.linux:
        return None
    build = _build_truth(node, assumptions)
    return build if build is not None else _startswith_truth(node, assumptions)


# JavaScript's and Go's literals, read in the Python spelling a condition is parsed in.
_FOREIGN_LITERALS: dict[str, object] = {
    "true": True,
    "false": False,
    "null": None,
    "undefined": None,
    "nil": None,
}


def _literal(node: ast.expr) -> tuple[object] | None:
    """The value of a literal (`False`, `0`, `None`, `""`, JavaScript's `false`, `null`,
    `undefined`), in a one-tuple so that a value of None reads apart from no literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float | str):
        return (node.value,)
    if isinstance(node, ast.Constant) and node.value is None:
        return (None,)
    if isinstance(node, ast.Name) and node.id in _FOREIGN_LITERALS:
        return (_FOREIGN_LITERALS[node.id],)
    return None


def _call_arguments(node: ast.expr, name: str) -> list[ast.expr] | None:
    """The positional arguments of a call to `name` (no keywords), else None."""
    if isinstance(node, ast.Call) and not node.keywords and dotted_name(node.func) == name:
        return node.args
    return None


def _build_truth(node: ast.expr, assumptions: _Assumptions) -> bool | None:
    """The interpreter build: the standard CPython has the GIL (a free-threaded build does
    not)."""
    config = _call_arguments(node, "sysconfig.get_config_var")
    if config is not None and len(config) == 1 and _strings(config[0]) == ["Py_GIL_DISABLED"]:
        return False if _standard("sysconfig.get_config_var", assumptions) else None
    if _call_arguments(node, "sys._is_gil_enabled") == [] or _gil_getter(node):
        return True if _standard("sys._is_gil_enabled", assumptions) else None
    return None


def _gil_getter(node: ast.expr) -> bool:
    """`getattr(sys, "_is_gil_enabled", lambda: True)()`: `sys._is_gil_enabled()` where
    Python has it (3.13+), True on the standard build; the default's True where it does not."""
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return False
    getter = _call_arguments(node.func, "getattr")
    if getter is None or len(getter) != 3:
        return False
    owner, attribute, default = getter
    return (
        dotted_name(owner) == "sys"
        and _strings(attribute) == ["_is_gil_enabled"]
        and isinstance(default, ast.Lambda)
        and not default.args.args
        and not default.args.vararg
        and not default.args.kwarg
        and not default.args.kwonlyargs
        and not default.args.posonlyargs
        and isinstance(default.body, ast.Constant)
        and default.body.value is True
    )


def _startswith_truth(node: ast.expr, assumptions: _Assumptions) -> bool | None:
    startswith = _startswith(node)
    if startswith is not None:
        subject, prefixes = dotted_name(startswith[0]), _strings(startswith[1])
        if subject in _SUBJECTS and prefixes is not None and _standard(subject, assumptions):
            return _matches(subject, prefixes, prefix=True)
    return None


def _standard(subject: str, assumptions: _Assumptions) -> bool:
    """Whether the module a subject or marker is read from (`sys` of `sys.platform`, `pytest`
    of `pytest.mark.skipif`) is the standard one where the condition is written: not one of
    the test module's own making, nor one it patches (`conditions.flags`). A condition read
    without its module is taken as written."""
    names = assumptions.names
    return names is None or names.standard(subject)


def _version_comparison(node: ast.Compare, assumptions: _Assumptions) -> bool | None:
    """`sys.version_info OP (3, 10)` (or `sys.version_info[:2]`) for every Python from the
    floor on (up to the newest declared, where the suite runs): certain only when all of them
    agree. Versions are compared as (major, minor), which never claims more certainty than
    the full version tuple would give."""
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if isinstance(left, ast.Subscript):
        left = left.value if _keeps_major_and_minor(left.slice) else left
    if isinstance(left, ast.Name) and assumptions.names is not None:
        # `from sys import version_info`: the name as what the module binds it to.
        left = assumptions.names(left.id) or left
    if dotted_name(left) != _VERSION_SUBJECT or not _standard(_VERSION_SUBJECT, assumptions):
        return None
    bound = _int_tuple(right)
    if bound is None or not isinstance(op, ast.GtE | ast.Gt | ast.Lt | ast.LtE):
        return None
    floor = assumptions.floor() if assumptions.floor is not None else None
    # On the floor's own Python, `>= (3, 10)` holds and `< (3, 10)` does not; a bound with a
    # micro version (`(3, 10, 2)`) splits 3.10 itself, so only Pythons past it are certain.
    exact = len(bound) <= 2
    bound = (*bound, 0, 0)[:2]
    at = exact and isinstance(op, ast.GtE | ast.Lt)
    if floor is not None and (floor > bound or (at and floor == bound)):
        return isinstance(op, ast.GtE | ast.Gt)
    # Below the bound's minor version, `>=`/`>` never holds and `<`/`<=` always does (on that
    # minor version itself, `<= (3, 13)` is false from 3.13.0 on, `> (3, 13)` true: not read).
    newest = _newest(assumptions, floor)
    if newest is not None and newest < bound:
        return isinstance(op, ast.Lt | ast.LtE)
    return None


def _newest(assumptions: _Assumptions, floor: Version | None) -> Version | None:
    """The newest Python the project declares, where the suite runs; None when unknown, or
    older than the floor (the two disagree, so neither bounds the other)."""
    if not assumptions.linux or assumptions.newest is None:
        return None
    newest = assumptions.newest()
    return None if newest is None or (floor is not None and newest < floor) else newest


def _keeps_major_and_minor(index: ast.expr) -> bool:
    """Whether `sys.version_info[index]` is a slice from the start that keeps at least major
    and minor (`[:2]`, `[:3]`, `[:]`): `sys.version_info[:1] >= (3, 10)` never holds."""
    if not isinstance(index, ast.Slice) or index.step is not None:
        return False
    start, stop = index.lower, index.upper
    from_start = start is None or (
        isinstance(start, ast.Constant) and type(start.value) is int and start.value == 0
    )
    whole = stop is None or (
        isinstance(stop, ast.Constant) and type(stop.value) is int and stop.value >= 2
    )
    return from_start and whole


def _int_tuple(node: ast.expr) -> tuple[int, ...] | None:
    if not isinstance(node, ast.Tuple) or not 1 <= len(node.elts) <= 3:
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
    numbers = [value for value in values if type(value) is int]
    return tuple(numbers) if len(numbers) == len(node.elts) else None


def _startswith(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """`subject.startswith(prefix)` as (subject, prefix)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "startswith"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.func.value, node.args[0]
    return None


def _comparison(
    left: ast.expr, op: ast.cmpop, right: ast.expr, assumptions: _Assumptions
) -> bool | None:
    subject, values = dotted_name(left), _strings(right)
    if subject not in _SUBJECTS:
        subject, values = dotted_name(right), _strings(left)
        if subject not in _SUBJECTS or not isinstance(op, ast.Eq | ast.NotEq):
            return None
    if values is None or subject is None or not _standard(subject, assumptions):
        return None
    if isinstance(op, ast.Eq | ast.In) and (len(values) == 1 or isinstance(op, ast.In)):
        return _matches(subject, values)
    if isinstance(op, ast.NotEq | ast.NotIn) and (len(values) == 1 or isinstance(op, ast.NotIn)):
        inner = _matches(subject, values)
        return None if inner is None else not inner
    return None


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        values = [_strings(element) for element in node.elts]
        if all(value is not None and len(value) == 1 for value in values):
            return [value[0] for value in values if value is not None]
    return None


def _matches(subject: str, values: list[str], *, prefix: bool = False) -> bool | None:
    """Whether `subject` equals (or starts with) one of `values` on Linux/CPython: True,
    False, or None when a value is not one we know. The subject's own Linux value, exactly
    as spelled (`sys.platform != "Linux"` and `os.name != "linux"` hold on Linux)."""
    linux = _LINUX_VALUE[subject]
    others = _OTHERS.get(subject, _ELSEWHERE)
    known: list[bool] = []
    for raw in values:
        value = raw.lower()
        if prefix:
            on_linux = linux.startswith(raw)
            elsewhere = any(other.startswith(value) for other in others)
        else:
            on_linux, elsewhere = raw == linux, value in others
        if not (on_linux or elsewhere):
            return None
        known.append(on_linux)
    return any(known)
