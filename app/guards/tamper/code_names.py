"""Names in source code, read as text: what a line defines, whether a line still binds a name,
and which project names a piece of test code uses.

Used by the exemptions (`exemptions`) to tell a test removed with the code it tested from a test
removed while that code stays. Everything errs the same way: when a line might define or bind
a name, it is taken to (the name is still there), and generic names are never a test's
subject. Python test code is read with `ast` (never executed); other languages by tokens.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import posixpath
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from app.guards.tamper.lang import reader_for
from app.guards.tamper.lang.javascript import JAVASCRIPT
from app.guards.tamper.lang.python import PYTHON, parse
from app.guards.tamper.lang.ruby import RUBY
from app.guards.tamper.test_files import is_test_path
from app.guards.trees import CODE_SUFFIXES


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NAME = r"[A-Za-z_$][\w$]*"
_MODIFIERS = (
    r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|final"
    r"|abstract|async|override|open|unsafe|extern|declare)\s+)*"
)
# A line that defines a name, in most languages: the name in group "n".
_DEFINITIONS = tuple(
    re.compile(pattern)
    for pattern in (
        rf"^\s*{_MODIFIERS}(?:def|class|func|function\*?|fn|type|struct|enum|trait|interface"
        rf"|module|object|impl)\s+(?:\([^)]*\)\s*)?(?:self\.)?(?P<n>{_NAME})",
        # Module-level assignments: Python constants, Go/JS top-level variables.
        rf"^(?:export\s+)?(?:(?:const|let|var)\s+)?(?P<n>{_NAME})\s*(?::[^=]*)?=(?![=>])",
        # JavaScript: `res.location = function ...`, `location: function ...`.
        rf"^\s*[\w$.]+\.(?P<n>{_NAME})\s*=\s*(?:async\s+)?function\b",
        rf"^\s*(?P<n>{_NAME})\s*:\s*(?:async\s+)?function\b",
        # Instance attributes: `self.x = ...`, `this.x = ...`.
        rf"^\s*(?:self|this|cls)\.(?P<n>{_NAME})\s*(?::[^=]*)?=(?!=)",
    )
)
# JavaScript class methods: `  name(args) {`.
_JS_METHOD = re.compile(rf"^\s+(?:(?:static|async|get|set)\s+)*(?P<n>{_NAME})\s*\([^)]*\)\s*\{{")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$")
_TOKEN = re.compile(rf"(?<![\w$]){_NAME}")
# A string literal of Python, JavaScript or Go, quotes included.
STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`")
_COMMENT = re.compile(r"//.*$|/\*.*?\*/|#.*$")
_JS_LOCAL = re.compile(rf"\b(?:var|let|const)\s+(?P<n>{_NAME})|(?P<g>{_NAME})\s*:=")
# Ruby parameters: a method's (`def name(a, b = 1, *rest, key:, &block)`, parentheses or not)
# and a block's (`do |a, (b, c)|`, `{ |a; local| ... }`).
_RUBY_PARAMETERS = re.compile(
    r"^[ \t]*def[ \t]+(?:self\.)?\w+[?!=]?[ \t]*(?:\((?P<p>[^)]*)\)|(?P<q>[^;\n]*))"
    r"|(?:\bdo|\{)[ \t]*\|(?P<b>[^|]*)\|",
    re.MULTILINE,
)
_RUBY_PARAMETER = re.compile(r"^[*&]{0,2}(?P<n>[a-z_]\w*)\s*(?:[=:]|$)")
# Ruby symbols, `:views` and the key of `views: value`: values that name something, as a string
# does, not code that runs (`::Const` is a scope, not a symbol).
_RUBY_SYMBOL = re.compile(
    r"(?<![:\w$]):(?P<s>[A-Za-z_]\w*[?!]?)|(?<![:\w$?])(?P<k>[A-Za-z_]\w*[?!]?):(?=[ \t])"
)
# Names that are never a test's subject: too common to say which code a test is about.
_GENERIC = _words(
    """
    get set put post patch head delete remove add append insert pop push clear copy update
    reset run main init setup teardown setUp tearDown start stop open close read write load
    loads dump dumps parse format call apply build create make new check validate test tests
    process handle execute exec render send receive request response client server app config
    options option data value values items keys key name path url info error errors result
    results default wrapper helper callback handler func self cls this that args kwargs
    log logger debug warn warning install uninstall emit next done expect assert should must
    ok fail error equal equals string number object array list dict true false none null nil
    undefined text json html body headers header status code message type kind id index count
    size length file files dir mode flags flag context ctx env environ state store cache
    session user users item node root tree map filter reduce sort join split strip lower upper
    encode decode serialize deserialize convert transform prepare finish cleanup close_all
    exists match matches find search replace sleep wait sync async await then resolve reject
    describe it context before after beforeEach afterEach
    """
)
_BUILTINS = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_OTHER_KEYWORDS = _words(
    """
    var let const function return if else for while do switch case break continue new typeof
    instanceof void this super class extends import export from default try catch finally
    throw yield await async package func go defer chan select struct interface type range
    map make len cap append nil true false fn impl pub mut use mod crate match loop where enum
    trait public private protected static final void int long float double boolean char byte
    string bool require module exports console process window document Object Array String
    Number Boolean Promise Error TypeError Math JSON Date RegExp Symbol Map Set undefined
    """
)
# Roots of attribute chains that are not the project (`os.path.join`, `mock.patch.object`).
_EXTERNAL_ROOTS = frozenset(sys.stdlib_module_names) | frozenset({"pytest", "mock"})
_MIN_NAME = 4


# Python modules larger than this are not parsed (a bound on the work): what needs the parse
# then finds nothing, which only makes the rules stricter.
_MAX_MODULE_CHARS = 400_000


def python_module(text: str | None) -> ast.Module | None:
    """A Python file's syntax tree (read past syntax newer than this Python: `python.parse`);
    None for no file, one too large, or one that does not parse."""
    if text is None or len(text) > _MAX_MODULE_CHARS:
        return None
    try:
        return parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def binding_count(module: ast.Module, name: str) -> int:
    """How many times the module binds `name`, at any depth; a star import may bind anything."""
    count = 0
    for node in ast.walk(module):
        if isinstance(node, ast.alias):
            if node.name == "*":
                return 2
            count += (node.asname or node.name.split(".")[0]) == name
        elif isinstance(node, ast.Name):
            count += node.id == name and not isinstance(node.ctx, ast.Load)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            count += node.name == name
        elif isinstance(node, ast.arg):
            count += node.arg == name
        elif isinstance(node, ast.Global | ast.Nonlocal):
            count += name in node.names
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
            count += node.name == name
        elif isinstance(node, ast.MatchMapping):
            count += node.rest == name
    return count


def is_code(path: str | None) -> bool:
    return path is not None and path.endswith(CODE_SUFFIXES)


# Documentation and changelogs: what they say about a name neither runs nor provides it ("Remove
# `legacy_parse`" in a changelog is evidence it went). Every other file that is not code the
# rules read (data, configuration, templates, scripts, Cython, Lua, ...) may well use it.
_PROSE_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc")
_PROSE_NAMES = _words(
    "readme changes changelog history news authors contributors license licence copying notice"
)


# Data, configuration, archives and media: they may name a function (an entry point, a file
# list, a dependency), so a name they hold is still there, but they define no code a test runs.
_DATA_SUFFIXES = tuple(
    "." + suffix
    for suffix in _words(
        """
        json toml yaml yml cfg ini lock xml csv tsv zip gz tgz bz2 xz tar whl egg jar png jpg
        jpeg gif ico svg pdf woff woff2 ttf otf eot
        """
    )
)


def is_prose(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return name.endswith(_PROSE_SUFFIXES) or name in _PROSE_NAMES


def is_data(path: str) -> bool:
    return path.lower().endswith(_DATA_SUFFIXES)


def is_source(path: str | None) -> bool:
    """A file of code that is not a test or test material."""
    return is_code(path) and not is_test_path(path or "")


def is_distinctive(name: str) -> bool:
    """A name specific enough to stand for the code a test is about: not a builtin, keyword or
    generic word (`get`, `run`, `main`), not a dunder, at least four characters."""
    if len(name) < _MIN_NAME or (name.startswith("__") and name.endswith("__")):
        return False
    bare = name.strip("_")
    return not (
        name in _BUILTINS
        or name in _OTHER_KEYWORDS
        or bare in _GENERIC
        or bare.lower() in _GENERIC
        or len(bare) < _MIN_NAME
    )


def is_reserved(name: str) -> bool:
    """A builtin, a keyword or a dunder: never a file's own subject, however it is named."""
    return name in _BUILTINS or name in _OTHER_KEYWORDS or name.startswith("__")


def defined_names(text: str, path: str) -> list[str]:
    """The names `text` (one line of `path`) defines."""
    found = [match["n"] for pattern in _DEFINITIONS if (match := pattern.search(text))]
    if reader_for(path) is JAVASCRIPT and (match := _JS_METHOD.search(text)):
        found.append(match["n"])
    return found


def binds(text: str, name: str, path: str) -> bool:
    """Whether a line still provides `name`: defines, imports, assigns or uses it other than
    as an attribute of something else (`ssl.SSLContext` does not provide `SSLContext`). Words
    in strings and comments count too: wrongly seeing a name as still there only makes the
    rule stricter."""
    if name in defined_names(text, path):
        return True
    for match in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text):
        before = text[: match.start()].rstrip()
        if not before.endswith((".", "->", "::")):
            return True
        if re.match(r"\s*(?::[^=]*)?=(?![=>])", text[match.end() :]):
            return True  # `obj.name = ...` gives objects the attribute
    return False


@dataclass(frozen=True)
class References:
    """The project names a piece of test code uses."""

    # Called, read as an attribute, or used as a value: what the test exercises.
    exercised: frozenset[str]
    # Named in a string that is an identifier or a dotted path (`monkeypatch.setattr(m,
    # "name", ...)`, `mock.patch("pkg.mod.name")`): usually code the test replaces.
    named: frozenset[str]
    # Parameters of the definitions read (pytest fixtures a test asks for, by name).
    parameters: frozenset[str] = frozenset()


def references(lines: Sequence[str], path: str) -> References:
    """The distinctive names a test's lines (decorators, header, body) use."""
    text = textwrap.dedent("\n".join(lines))
    found = _python_references(text) if reader_for(path) is PYTHON else None
    if found is None:
        found = (*_token_references(text, path), set())
    exercised, named, parameters = found
    return References(
        frozenset(filter(is_distinctive, exercised)),
        frozenset(filter(is_distinctive, named)),
        frozenset(parameters),
    )


def _python_references(text: str) -> tuple[set[str], set[str], set[str]] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    local = _python_locals(tree)
    roots = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    exercised: set[str] = set()
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in roots and node.id not in local:
            exercised.add(node.id)
        elif isinstance(node, ast.Attribute) and _chain_root(node) not in _EXTERNAL_ROOTS:
            exercised.add(node.attr)
        elif isinstance(node, ast.Constant) and _is_identifier(node.value):
            named.add(str(node.value).rsplit(".", 1)[-1])
        elif isinstance(node, ast.ImportFrom) and _own_module(node):
            # `from pkg.remote import initconfig` inside a test: what it binds is local, what
            # it imports is the project's code the test runs.
            exercised.update(alias.name for alias in node.names if alias.name != "*")
    parameters = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    return exercised, named, parameters


def _own_module(node: ast.ImportFrom) -> bool:
    """An import from a module that is no standard library's or test tool's."""
    return node.level > 0 or (node.module or "").split(".", 1)[0] not in _EXTERNAL_ROOTS


def _is_identifier(value: object) -> bool:
    return isinstance(value, str) and bool(_IDENTIFIER.match(value))


def _python_locals(tree: ast.AST) -> set[str]:
    """Names the code binds itself: parameters, assignment and loop targets, imports, nested
    definitions (a test's own helpers and fixtures are not the project's code)."""
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            local.add(node.id)
        elif isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.alias):
            local.add((node.asname or node.name).split(".", 1)[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            local.add(node.name)
    return local


def _chain_root(node: ast.Attribute) -> str | None:
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute | ast.Call | ast.Subscript):
        value = value.func if isinstance(value, ast.Call) else value.value
    return value.id if isinstance(value, ast.Name) else None


def _token_references(text: str, path: str) -> tuple[set[str], set[str]]:
    named: set[str] = set()
    for literal in STRING.findall(text):
        body = literal[1:-1]
        if _IDENTIFIER.match(body):
            named.add(body.rsplit(".", 1)[-1])
    code = "\n".join(_COMMENT.sub("", STRING.sub('""', line)) for line in text.splitlines())
    local = {match["n"] or match["g"] for match in _JS_LOCAL.finditer(code)}
    ruby = reader_for(path) is RUBY
    if ruby:
        code = _RUBY_SYMBOL.sub(lambda match: _symbol(match, named), code)
    parameters = _ruby_parameters(code) if ruby else set()
    exercised: set[str] = set()
    for match in _TOKEN.finditer(code):
        name = match.group()
        after = code[match.end() :].lstrip(" \t")
        leaf = code[: match.start()].rstrip().endswith(".")
        root = after.startswith(".") and not after.startswith("..")
        # A Ruby parameter shadows a method of its name but for a call with parentheses.
        shadowed = name in parameters and not leaf and not code.startswith("(", match.end())
        if not shadowed and (leaf or not (name in local or root)):
            exercised.add(name)  # not a local, nor the root of a chain (a namespace)
    return exercised, named


def _symbol(match: re.Match[str], named: set[str]) -> str:
    named.add((match["s"] or match["k"]).rstrip("?!"))
    return ':""' if match["s"] else '"":'


def _ruby_parameters(code: str) -> set[str]:
    """The names Ruby code binds as method or block parameters."""
    found: set[str] = set()
    for match in _RUBY_PARAMETERS.finditer(code):
        listed = match["p"] if match["p"] is not None else match["q"] or match["b"] or ""
        for part in re.split(r"[,;]", listed.replace("(", ",").replace(")", ",")):
            if parameter := _RUBY_PARAMETER.match(part.strip()):
                found.add(parameter["n"])
    return found
