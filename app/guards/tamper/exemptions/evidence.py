"""What the trees show of the names a change deletes: the evidence the exemptions for tests
removed with their code share (`exemptions.set_aside`).

A test removed with the code it tested removes nothing the suite still needs; telling that
from a test removed while its code stays takes the whole trees, not the diff: a name deleted
in one file may live on in another, under a collision or a re-export. `Evidence` reads, once
per change and only for the candidates the diff shows: which definitions the change deletes
from source code; which removed tests it deletes whole, and the names they (and the helpers
of their own file) use; and whether a name is gone: no line of the head tree provides it, and
it was not renamed or moved.

Everything errs one way: what cannot be shown from the trees is taken to be still there. The
evidence that a subject went is positive: the whole head tree searched, not only its code; a
tree git cannot read raises (`GitFailed`), and the rule fails rather than take it for empty.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property

from app.guards.changes import FileChange, Line, is_telling
from app.guards.tamper.code_names import (
    References,
    binds,
    defined_names,
    is_code,
    is_data,
    is_distinctive,
    is_prose,
    is_source,
    python_module,
    references,
)
from app.guards.tamper.definitions import Definition
from app.guards.tamper.diffs import alignments, mostly_added
from app.guards.tamper.lang import plain_comment, reader_for
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.lang.ruby import RUBY
from app.guards.tamper.lang.text import enclosing, indent
from app.guards.trees import Hit, TreeView

# Text around a used name that must match for a line to count as the same line renamed.
_MIN_CONTEXT = 12
# A class, or a Ruby module (a namespace), with its path: `class Rack::Protection::Base`.
CLASS = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:class|module)\s+(?P<n>[\w$]+(?:::[\w$]+)*)"
)
_GO_RECEIVER = re.compile(r"^func\s*\(\s*\w*\s*\*?\s*(?P<n>\w+)")
_JS_OWNER = re.compile(r"^\s*(?P<n>[\w$]+)(?:\.prototype)?\.[\w$]+\s*=")
_QUALIFIED = re.compile(r"[\w$.]+")
# A definition whose value is only another name (`legacy_parse = parse_config`, `export const
# execaLegacy = execa;`, Ruby's `Alias = Other`): it gives that code a second name.
_ALIAS = re.compile(
    r"(?<![=!<>])=\s*(?P<v>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*;?\s*(?:(?://|#).*)?$"
)
# What a JavaScript `import ... from '...'` statement binds, and from where.
_JS_IMPORT = re.compile(r"""\bimport\s+(?P<what>[^;'"]*?)\s+from\s+['"](?P<m>[^'"]+)['"]""")
# Helpers followed from one removed test (a bound on the work, not a policy).
_MAX_HELPERS = 50
# A decorator that only says whether or where a test runs.
_SKIP = re.compile(r"^@(?:pytest\.mark\.|unittest\.)?(?:skip|skipif|skipIf|skipUnless|xfail)\b")
# A class attribute: `storage_class = _OrderedMultiDict`.
_ATTRIBUTE = re.compile(r"^\s*[A-Za-z_]\w*\s*(?::[^=]+)?=(?!=)")
# `autoload :Logger, "rack/logger"`, alone on its line.
_AUTOLOAD = re.compile(
    r"^\s*autoload\s*\(?\s*:(?P<n>\w+)\s*,\s*(?P<q>['\"])(?P<p>[\w./-]+)(?P=q)\s*\)?\s*$"
)


@dataclass(frozen=True)
class Removed:
    """A definition the change deletes from source code."""

    name: str
    file: int
    line: Line


@dataclass(frozen=True)
class Reading:
    """What counts as a name living on, in one of the two readings of "gone". Rules 2 and 3
    (`SUBJECT`) excuse a test on a distinctive name it uses, and nothing else, so every doubt
    the trees leave keeps the name. Rule 5 (`PAIRED`) reads the names of a source file the
    change deletes with the test file of its stem, however short or common (`JWT`, `Logger`),
    which those doubts would keep almost always; the pairing is its further evidence, and the
    switch below is the doubt it reads as what the line is. In both, a line that does nothing
    with the name provides none (`_inert`: a plain comment, a Ruby autoload of a file the
    change deleted that is nowhere at the head): it runs and defines nothing."""

    # A deleted one-line definition none of whose project code the change deletes lives on
    # (`execaCommand = createExeca(mapCommandAsync)` renamed and reworded: both names stay).
    # Rule 5: the source file went whole, and a one-liner of it built from code that stays
    # (`ErrJWTMissing = echo.NewHTTPError(...)`) went with it.
    kept_lines_live: bool


SUBJECT = Reading(kept_lines_live=True)
PAIRED = Reading(kept_lines_live=False)


class Evidence:
    """The evidence over one change. Reads the trees only when the diff already shows a
    candidate (a deleted test file, or a deleted definition a removed test uses)."""

    def __init__(self, files: Sequence[FileChange], trees: TreeView) -> None:
        self.files = files
        self.trees = trees
        self._gone: dict[tuple[str, Reading], bool] = {}
        self._head_hits: dict[str, list[Hit]] = {}
        self._own_imports_of: dict[str, frozenset[str]] = {}
        self._whole: dict[tuple[int, int], list[str] | None] = {}

    @cached_property
    def deleted(self) -> dict[str, list[Removed]]:
        """Every name the change deletes a definition of, from source code."""
        found: dict[str, list[Removed]] = {}
        for index, change in enumerate(self.files):
            if not is_source(change.old_path):
                continue
            for line in change.removed:
                for name in defined_names(line.text, change.old_path or ""):
                    found.setdefault(name, []).append(Removed(name, index, line))
        return found

    @cached_property
    def removed(self) -> dict[str, list[Removed]]:
        """Distinctive names the change deletes a definition of, from source code."""
        return {name: found for name, found in self.deleted.items() if is_distinctive(name)}

    @cached_property
    def added_lines(self) -> set[str]:
        """Every line the change adds, to any file: code moved into test material, or into a
        file of a language the rules do not read (a `.pyx`, a script), is moved, not gone."""
        return {line.text.strip() for change in self.files for line in change.added}

    def moved(self, lines: Sequence[str]) -> bool:
        return mostly_added(lines, self.added_lines)

    def references(self, index: int, definition: Definition) -> References | None:
        """The names a removed test uses, read from the base tree, with those of the helpers
        (and fixtures) it uses from its own file; None unless the change deletes all of the
        test (a test edited in part is not one removed with its subject)."""
        lines = self.wholly_deleted(index, definition)
        if lines is None:
            return None
        return _with_helpers(lines, definition.line.number - 1, self.files[index].old_path or "")

    def wholly_deleted(self, index: int, definition: Definition) -> list[str] | None:
        """The base file's lines, when the change deletes every line of the test (asked by
        every rule of a removed test: read once)."""
        key = (index, definition.line.number)
        if key not in self._whole:
            self._whole[key] = self._read_wholly_deleted(index, definition)
        return self._whole[key]

    def _read_wholly_deleted(self, index: int, definition: Definition) -> list[str] | None:
        change = self.files[index]
        path = change.old_path or ""
        text = self.trees.text("base", path) if path else None
        if text is None:
            return None
        lines = text.splitlines()
        position = definition.line.number - 1
        if not 0 <= position < len(lines) or lines[position] != definition.line.text:
            return None
        end = reader_for(path).block_end(lines, position)
        block = {n + 1 for n in range(position, end) if lines[n].strip()}
        deleted = {line.number for line in change.removed}
        if not any(block <= alignment for alignment in alignments(lines, deleted)):
            return None
        return lines

    def suite_uses(self, index: int, definition: Definition) -> frozenset[str]:
        """The names the class attributes of the Python test classes around a removed test
        use."""
        path = self.files[index].old_path or ""
        lines = self.wholly_deleted(index, definition) if reads_python(path) else None
        if lines is None:
            return frozenset()
        attributes = [a for s in suites(lines, definition) for a in _suite_attributes(lines, s)]
        return references(attributes, path).exercised if attributes else frozenset()

    def search(self, names: Collection[str]) -> None:
        wanted = [name for name in names if name not in self._head_hits]
        if not wanted:
            return
        for name in wanted:
            self._head_hits[name] = []
        hits = self.trees.search("head", wanted) + self.trees.mentions("head", wanted)
        for hit in hits:
            for name in wanted:
                if re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", hit.text):
                    self._head_hits[name].append(hit)

    def hits(self, name: str) -> list[Hit]:
        """The lines of the head tree that hold the name, once searched (`search`)."""
        return self._head_hits.get(name, [])

    def is_gone(self, name: str, *, reading: Reading) -> bool:
        """No line of the head tree provides the name (`_provides`) and it does not live on,
        renamed or moved (`lives_on`), as `reading` reads them."""
        key = (name, reading)
        if key not in self._gone:
            self.search([name])  # nothing to do where the caller searched it with others
            hits = self._head_hits.get(name, [])
            still = any(self._provides(hit, name, reading=reading) for hit in hits)
            self._gone[key] = not still and not self.lives_on(name, reading=reading)
        return self._gone[key]

    def _provides(self, hit: Hit, name: str, *, reading: Reading) -> bool:
        """Whether a line of the head tree shows `name` still there: a line of source code
        that binds it (a string mentioning it included, or a comment after code on its line;
        not a line that does nothing with it, `_inert`), a test's or prose's definition of it
        (a test's use is no definition; its own helper is one), or any mention in data (an
        entry point) or in other code (which may use or define it)."""
        if is_source(hit.path):
            return not self._inert(hit, name) and binds(hit.text, name, hit.path)
        if is_code(hit.path) or is_prose(hit.path):
            return name in defines(hit)
        return True

    def lives_on(self, name: str, *, reading: Reading) -> bool:
        """Whether a deleted definition of the name lives on under another name or in another
        place: most of its body added back (to any file), or a deleted line of code that used
        it added back with another name of the project's in its place (callers retargeted: a
        built-in or library name there, `Hash` for a deleted `OrderedHash` or node's
        `stripVTControlCharacters` for commander's own `stripColor`, is no code of the
        project's living on). A definition whose body says nothing (none, or
        too short to tell: `export const execaCommand = createExeca(mapCommandAsync);`) lives
        on when its own line comes back with another name in its place (`_header_renamed`),
        or one too short to compare does, or what its line ran is all still there
        (`_line_code_stays`, as `reading` reads it); else it went."""
        # Its definitions however short or common the name (rule 5 reads `JWT` too); for the
        # distinctive names of rules 2 and 3 these are `self.removed[name]`.
        for removed in self.deleted.get(name, []):
            body = body_after(self.files[removed.file], removed.line)
            if any(is_telling(text) for text in body):
                if mostly_added(body, self.added_lines):
                    return True
            elif self._header_renamed(removed) or self._line_code_stays(removed, reading):
                return True
        others = {other for change in self.files for other in self._replacements(name, change)}
        return any(self.project_name(other.rsplit(".", 1)[-1]) for other in others)

    def _line_code_stays(self, removed: Removed, reading: Reading) -> bool:
        """Whether a deleted one-line definition only ran project code the head still has:
        it was another name for it (`old_parse = parse_config`), or, where `reading` says so,
        its line uses project code and none that the change deletes. Its tests ran that code,
        which lives on."""
        text = removed.line.text
        alias = _ALIAS.search(text)
        target = alias["v"].rsplit(".", 1)[-1] if alias else None
        if target is not None and target != removed.name and self.project_name(target):
            return True
        if not reading.kept_lines_live:
            return False
        path = self.files[removed.file].old_path or ""
        used = references([text], path).exercised - {removed.name}
        return any(self.project_name(name) for name in used) and not any(
            name in self.deleted for name in used
        )

    def _replacements(self, name: str, change: FileChange) -> set[str]:
        """The names that took the place of `name` in deleted lines of source code that come
        back with another name where it was (callers retargeted)."""
        found: set[str] = set()
        if not is_source(change.old_path):
            return found
        word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
        for line in change.removed:
            match = word.search(line.text)
            if match is None or name in defined_names(line.text, change.old_path or ""):
                continue
            before, after = line.text[: match.start()].lstrip(), line.text[match.end() :].rstrip()
            if len(before.strip()) + len(after.strip()) < _MIN_CONTEXT:
                continue
            for text in self.added_lines:
                other = _replacement(text, before, after, name)
                if other is not None:
                    found.add(other)
        return found

    def owners(self, subjects: set[str]) -> set[str]:
        """The classes (Go receivers, JavaScript objects) the gone subjects were defined on,
        and the classes and Ruby modules around those (`Rack::Protection` of a gone
        `Rack::Protection::EncryptedCookie`)."""
        owners: set[str] = set()
        for name in subjects:
            for removed in self.removed[name]:
                owners.update(self.owner(removed))
        return owners

    def went_with(self, name: str, subjects: set[str]) -> bool:
        """Whether every deleted definition of `name` went as part of a gone subject: inside
        one (a method of a deleted class, a class nested in it), or, for the class or module a
        gone subject was in, a deleted opening of it (the `module Rack` of a deleted
        `rack/protection/encrypted_cookie.rb`); and none lives on renamed or moved. Whatever
        else the project calls by that name is still judged as any other definition the test
        exercises."""
        owners = self.owners(subjects)

        def part(removed: Removed) -> bool:
            if subjects & set(self.owner(removed)):
                return True
            opening = CLASS.match(removed.line.text)
            return name in owners and opening is not None and name in opening["n"].split("::")

        went = all(part(removed) for removed in self.removed[name])
        return went and not self.lives_on(name, reading=SUBJECT)

    def owner(self, removed: Removed, *, through: bool = False) -> list[str]:
        """The class (Go receiver, JavaScript object) a deleted definition was on, and the
        classes and modules around that one, innermost first."""
        text = removed.line.text
        for pattern in (_GO_RECEIVER, _JS_OWNER):
            match = pattern.match(text)
            if match is not None:
                return [match["n"]]
        return self.around(removed, through=through)

    def around(self, removed: Removed, *, through: bool = False) -> list[str]:
        """The classes and modules around a deleted definition, innermost first; `through`
        blocks that define nothing (a Ruby `if RUBY_VERSION < "1.9"` around methods)."""
        text = removed.line.text
        path = self.files[removed.file].old_path
        base = self.trees.text("base", path) if path else None
        if base is None:
            return []
        lines = base.splitlines()
        header = indent(text)
        found: list[str] = []
        for position in range(min(removed.line.number - 1, len(lines)) - 1, -1, -1):
            candidate = lines[position]
            if candidate.strip() and indent(candidate) < header:
                match = CLASS.match(candidate)
                if match is None and through and not defined_names(candidate, path or ""):
                    header = indent(candidate)
                    continue
                if match is None:
                    break  # a function or block around it: what encloses that is no owner
                found.extend(reversed(match["n"].split("::")))
                header = indent(candidate)
        return found

    def _inert(self, hit: Hit, name: str) -> bool:
        """Whether a line of source code that mentions the name does nothing with it: a plain
        comment, or an autoload of a file the change deleted (loading the name would fail)."""
        if plain_comment(hit.text, hit.path):
            return True
        target = autoload_target(hit.text, name, hit.path)
        return target is not None and self._loads_deleted_file(target)

    def _loads_deleted_file(self, target: str) -> bool:
        """Whether an autoload's file is one the change deletes, found nowhere at the head."""
        deleted = any(
            c.status == "deleted" and c.old_path is not None and ends_at(c.old_path, target)
            for c in self.files
        )
        return deleted and not any(ends_at(path, target) for path in self.head_files)

    @cached_property
    def head_files(self) -> list[str]:
        return self.trees.listing("head", ".")

    def _header_renamed(self, removed: Removed) -> bool:
        """Whether a deleted definition's one line comes back with another name in its place
        (a line too short to tell counts as renamed)."""
        text = removed.line.text
        match = re.search(rf"(?<![\w$]){re.escape(removed.name)}(?![\w$])", text)
        if match is None:
            return True
        before, after = text[: match.start()].lstrip(), text[match.end() :].rstrip()
        if len(before.strip()) + len(after.strip()) < _MIN_CONTEXT:
            return True
        return any(
            _replacement(added, before, after, removed.name) is not None
            for added in self.added_lines
        )

    def project_name(self, name: str) -> bool:
        """Whether the head tree defines `name` in code, or may (a file it cannot read), or
        imports it from the project's own code (`from .impl import real as name`: the code
        renamed where it is imported is still the project's)."""
        self.search([name])
        return any(
            may_define(hit.path)
            or (is_code(hit.path) and (name in defines(hit) or assigns(hit.text, name)))
            or (is_source(hit.path) and name in self._own_imports(hit.path))
            for hit in self._head_hits.get(name, [])
        )

    def _own_imports(self, path: str) -> frozenset[str]:
        """The names a head source file binds by importing them from the project's own code:
        a relative module (`from .impl import x as y`, `import {x as y} from './impl.js'`), or
        a Python package whose top-level name is a folder or module of the head tree."""
        if path not in self._own_imports_of:
            text = self.trees.text("head", path)
            if text is None:
                found: frozenset[str] = frozenset()
            elif reads_python(path):
                found = _python_own_imports(text, self._head_modules)
            else:
                found = frozenset(
                    word
                    for match in _JS_IMPORT.finditer(text)
                    if match["m"].startswith((".", "/"))
                    for word in re.findall(r"[A-Za-z_$][\w$]*", match["what"])
                )
            self._own_imports_of[path] = found
        return self._own_imports_of[path]

    @cached_property
    def _head_modules(self) -> frozenset[str]:
        """The top-level names the head tree's folders and Python files give modules."""
        names: set[str] = set()
        for path in self.head_files:
            *folders, file = path.split("/")
            names.update(folders)
            if reads_python(file):
                names.add(file.rsplit(".", 1)[0])
        return frozenset(names)


def defines(hit: Hit) -> list[str]:
    """The names a line of the head tree defines."""
    return defined_names(hit.text, hit.path)


def may_define(path: str) -> bool:
    """A file of code the rules do not read (a script, Cython, Lua, a template): any mention
    of a name there may be its definition."""
    return not (is_code(path) or is_data(path) or is_prose(path))


def _python_own_imports(text: str, modules: frozenset[str]) -> frozenset[str]:
    """The names a Python module binds by importing from a relative module or from one whose
    top-level name is in `modules` (the project's)."""
    tree = python_module(text)
    found: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom):
            own = node.level > 0 or (node.module or "").split(".")[0] in modules
            found.update(a.asname or a.name for a in node.names if own and a.name != "*")
        elif isinstance(node, ast.Import):
            found.update(
                a.asname for a in node.names if a.asname and a.name.split(".")[0] in modules
            )
    return frozenset(found)


def assigns(text: str, name: str) -> bool:
    """An assignment to `name` at any depth (a Ruby constant in its module), or to an
    attribute of that name (`exports.Name = class {`)."""
    pattern = rf"(?:^\s*|[\w$)\]]\.){re.escape(name)}\s*(?::[^=]*)?=(?![=>~])"
    return re.search(pattern, text) is not None


def _block_references(lines: Sequence[str], position: int, path: str) -> References:
    """The names used by the definition at `lines[position]`, decorators included but for
    skip and xfail conditions: a flag that says where a test runs (`PY_3_10_PLUS`) is not
    what it tests, and its going is judged by what it meant (`exemptions.dropped_pythons`)."""
    end = reader_for(path).block_end(lines, position)
    start = position - len(decorators(lines, position))
    kept: list[str] = []
    skipping = False
    for text in lines[start:position]:
        if text.lstrip().startswith("@"):
            skipping = _SKIP.match(text.lstrip()) is not None
        if not skipping:
            kept.append(text)
    return references([*kept, *lines[position:end]], path)


def _with_helpers(lines: Sequence[str], position: int, path: str) -> References:
    """A test's names, and those of the helpers it uses that its file defines, followed
    through helpers of helpers: a test that checks its subject through `check_x(...)` is
    about what `check_x` uses."""
    where: dict[str, list[int]] = {}
    for number, text in enumerate(lines):
        for name in defined_names(text, path):
            where.setdefault(name, []).append(number)
    exercised: set[str] = set()
    named: set[str] = set()
    pending, seen = [position], {position}
    while pending and len(seen) <= _MAX_HELPERS:
        found = _block_references(lines, pending.pop(), path)
        exercised |= found.exercised
        named |= found.named
        for name in found.exercised | found.parameters:
            for helper in where.get(name, []):
                if helper not in seen:
                    seen.add(helper)
                    pending.append(helper)
    helpers = {name for name, places in where.items() if set(places) & seen}
    return References(frozenset(exercised - helpers), frozenset(named), frozenset())


def body_after(change: FileChange, header: Line) -> list[str]:
    """The deleted lines of a deleted definition's body (the run of removed lines after its
    header, down to where the block ends)."""
    removed = change.removed
    position = next((i for i, line in enumerate(removed) if line is header), None)
    if position is None:
        return []
    run = [header.text]
    for line in removed[position + 1 :]:
        if line.number != header.number + len(run):
            break
        run.append(line.text)
    end = reader_for(change.old_path or "").block_end(run, 0)
    return run[1:end]


def _replacement(text: str, before: str, after: str, name: str) -> str | None:
    """The other (maybe qualified) name `text` has between `before` and `after`, if it is
    that: `name` replaced."""
    if not (text.startswith(before) and text.endswith(after)):
        return None
    middle = text[len(before) : len(text) - len(after)] if after else text[len(before) :]
    return middle if middle != name and _QUALIFIED.fullmatch(middle) else None


def decorators(lines: Sequence[str], position: int) -> tuple[str, ...]:
    """The decorator lines right above the definition at `lines[position]`, stripped."""
    header = indent(lines[position])
    found: list[str] = []
    index = position
    while index > 0:
        index -= 1
        stripped = lines[index].strip()
        if not stripped or (indent(lines[index]) <= header and stripped[0] not in "@)]"):
            break
        found.append(stripped)
    return tuple(reversed(found))


def suites(lines: Sequence[str], definition: Definition) -> list[int]:
    """The positions of the suites around a test, innermost first."""
    found: list[int] = []
    suite = enclosing(lines, definition.line.number - 1)
    while suite is not None:
        found.append(suite)
        suite = enclosing(lines, suite)
    return found


def _suite_attributes(lines: Sequence[str], suite: int) -> list[str]:
    """The statements directly in a suite's body that define no test or helper: the class
    attributes every test of the class reads (`storage_class = _OrderedMultiDict`)."""
    end = PYTHON.block_end(lines, suite)
    inner = [n for n in range(suite + 1, end) if lines[n].strip()]
    if not inner:
        return []
    level = min(indent(lines[n]) for n in inner)
    found: list[str] = []
    for n in inner:
        text = lines[n]
        if indent(text) == level and _ATTRIBUTE.match(text):
            found.append(text)
    return found


def reads_python(path: str) -> bool:
    """A file read as Python (`.py`, `.pyi`)."""
    return reader_for(path) is PYTHON


def autoload_target(text: str, name: str, path: str) -> str | None:
    """The file a Ruby `autoload :name, "path"` line loads `name` from (`rack/logger.rb`), as
    the end of a path; None for any other line."""
    match = _AUTOLOAD.match(text) if reader_for(path) is RUBY else None
    if match is None or match["n"] != name:
        return None
    target = match["p"].removeprefix("./")
    return target if target.endswith(".rb") else f"{target}.rb"


def ends_at(path: str, target: str) -> bool:
    """Whether `path` is `target` under some folder of the load path."""
    return path == target or path.endswith("/" + target)
