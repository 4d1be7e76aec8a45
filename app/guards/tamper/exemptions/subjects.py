"""Removed tests that are not tampering: tests removed together with the code they tested, and
exact duplicates of a test that stays.

`test-tamper` exists for one attack: a red suite made green by removing tests while the code
those tests exercise stays. A change that deletes the code itself (a deprecated function, a
class, a whole package) and its tests with it removes nothing the suite still needs. Telling
the two apart takes the whole trees, not the diff: a name deleted in one file may live on in
another, under a collision or a re-export. So these exemptions hold only for changes computed
from a repository (`app.guards.trees`); a bare diff gets none.

A removed test is set aside (judged as if it had not been removed) when one of these holds:

1. Its package went with it: it was in a deleted test file whose directory held source code,
   all of which the change deleted (none renamed, its lines not added back elsewhere), and the
   directory no longer exists at the head.
2. Its subject went with it. The test uses (calls, reads, or names in a `monkeypatch`/`mock`
   target string) a distinctive name (not a builtin, keyword or generic word like `get`,
   `run`, `main`) that
   - the change deletes a definition of, from source code (not tests);
   - no source file of the head tree still provides: defines, imports, assigns or uses it
     other than as an attribute of something else (`ssl.SSLContext` does not provide
     `SSLContext`); strings that mention it count as providing it, a plain comment line
     does not (it runs nothing); no other
     file mentions at all (code in a language the rules do not read, a script, a config
     entry: what cannot be read is taken to provide it), but for prose, where only a
     definition counts (a changelog saying it was removed is no evidence it stays);
   - was not renamed or moved: most of its deleted body is not added back in the change (to
     any file), and no deleted line that used it comes back with another name of the
     project's in its place (defined in its code, or imported from it under another name);
     a one-line definition, with no body to compare, lives on when its line comes back
     renamed, when it only named code the head still defines (`old = parse_config`), or
     when its line uses project code and none that the change deletes;
   and every other project definition the test exercises is either gone too, the class (or Go
   receiver, or JavaScript object) a gone subject was defined on, or a definition from whose
   body the change deleted a line that used a gone subject (the function the removed feature
   was cut out of). So a test whose own subject stays cannot be excused by deleting some
   helper it happens to call; and a test that exercises any name the change deleted but that
   lives on, renamed or elsewhere, is not excused at all.
3. Its deleted file is named after a subject that went (`creole_test.rb`, `test_legacy.py`,
   `encrypted_cookie_spec.rb` for `EncryptedCookie`): the name the file is named after, which
   the file uses, meets the three conditions of 2 on the name alone; the file's tests go
   whatever else they call.
4. It is an exact duplicate: a test that stays in the same file, at the head, has the same
   body, the same header but for its name, the same decorators and the same enclosing suite;
   or a Python test whose twin, the same function under the same name with the same imports,
   runs on in another test file the change leaves alone (`app.guards.tamper.exemptions.twins`).
5. Its file's source file went with it: the deleted test file is paired by its stem with a
   source file the change deletes (`jwt_test.go` and `jwt.go`, `spec_logger.rb` and
   `logger.rb`: `app.guards.tamper.exemptions.paired_files`), most of whose lines are not added back, and which is
   named after a name it defined, however short or common (`JWT`, `Logger`), that is gone.
   Gone here is 2's "no longer provided, not renamed or moved" but that a name
   that took its place in a retargeted line counts as a rename only when the project defines
   it (`Hash` for `OrderedHash` is no code of the project's). A test of the file then goes if
   it uses (by 3's reading, or in the header of a suite around it) a name the source file
   defined (a distinctive one, or the one it is named after) that is gone, and every such
   name it uses is gone, a class or module the file only opened around what went, or a
   method of a class that went (other classes' methods of that name are not its code) that
   the change does not define anew. Whatever else it calls, when it is named after the file:
   its name or a suite header around it holds the file's stem (`TestJWT...`, `describe
   Rack::Logger`); a test of other code that builds a helper of the file on its way is not
   the file's test.

6. Its near twin stays: a test of the same suite, whole and running, has its body but for one
   token, which the change deleted from source code and nothing at the head but prose
   mentions (`app.guards.tamper.exemptions.near_twins`).
7. It is named after its gone subject: its name, or a suite's header around it, spells a
   distinctive name it uses (the class attributes of its suites included) that is gone as in
   2, or every case of one of its `parametrize` lists is such a name; whatever else it calls.
8. It checked only a deprecation warning whose whole block the change deleted from source
   code (`app.guards.tamper.exemptions.deprecations`).
9. It only loaded a file the change deletes, found nowhere at the head (`require
   'rack/mock_session'`: `app.guards.tamper.exemptions.load_only`).
10. It calls a definition the change deletes whole and expects, word for word, a message of
   that definition's own body (30 characters or more) that nothing at the head but prose
   holds: the test is that definition's, whatever other class has its name.

Everything errs one way: what cannot be shown from the trees is taken to be still there. The
evidence that a subject went is positive: the whole head tree searched, not only its code; a
tree git cannot read raises (`GitFailed`), and the rule fails rather than take it for empty.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from app.guards.changes import FileChange, Line, is_telling
from app.guards.tamper.code_names import (
    STRING,
    References,
    binds,
    defined_names,
    is_code,
    is_data,
    is_distinctive,
    is_prose,
    is_reserved,
    is_source,
    python_module,
    references,
)
from app.guards.tamper.conditions.skip_conditions import dotted_name
from app.guards.tamper.definitions import Definition, definitions
from app.guards.tamper.diffs import alignments, mostly_added
from app.guards.tamper.exemptions.deprecations import Deprecations
from app.guards.tamper.exemptions.load_only import loads_only_deleted
from app.guards.tamper.exemptions.near_twins import near_twins
from app.guards.tamper.exemptions.paired_files import (
    autoload_target,
    ends_at,
    named_after,
    paired_sources,
    source_stem,
)
from app.guards.tamper.exemptions.reverts import Reverts
from app.guards.tamper.exemptions.twins import Twins
from app.guards.tamper.lang import plain_comment, reader_for
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.lang.text import enclosing, indent
from app.guards.tamper.test_files import is_test_path
from app.guards.trees import Hit, TreeView

# Text around a used name that must match for a line to count as the same line renamed.
_MIN_CONTEXT = 12
# A class, or a Ruby module (a namespace), with its path: `class Rack::Protection::Base`.
_CLASS = re.compile(
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
# A message a test expects word for word, long enough to be a deleted definition's own.
_MIN_MESSAGE = 30
# Helpers followed from one removed test (a bound on the work, not a policy).
_MAX_HELPERS = 50


@dataclass(frozen=True)
class _Removed:
    """A definition the change deletes from source code."""

    name: str
    file: int
    line: Line


@dataclass(frozen=True)
class _Reading:
    """What counts as a name living on, in one of the two readings of "gone". Rules 2 and 3
    (`_SUBJECT`) excuse a test on a distinctive name it uses, and nothing else, so every doubt
    the trees leave keeps the name. Rule 5 (`_PAIRED`) reads the names of a source file the
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


_SUBJECT = _Reading(kept_lines_live=True)
_PAIRED = _Reading(kept_lines_live=False)


class Exemptions:
    """The exemptions over one change. Reads the trees only when the diff already shows a
    candidate (a deleted test file, or a deleted definition a removed test uses)."""

    def __init__(self, files: Sequence[FileChange], trees: TreeView | None) -> None:
        self._files = files
        self._trees = trees
        self._gone_packages: dict[int, bool] = {}
        self._gone: dict[tuple[str, _Reading], bool] = {}
        self._head_hits: dict[str, list[Hit]] = {}
        self._pair_names_of: dict[int, frozenset[str]] = {}
        self._own_imports_of: dict[str, frozenset[str]] = {}
        self._whole: dict[tuple[int, int], list[str] | None] = {}

    def set_aside(self, unmatched: Mapping[int, Sequence[Definition]]) -> dict[int, set[int]]:
        """Of the removed tests nothing else accounts for, the header lines (per file) of
        those removed with their package or subject, or duplicates."""
        if self._trees is None:
            return {}
        chosen: dict[int, set[int]] = {}
        pending: list[tuple[int, Definition, References]] = []
        for index, defs in unmatched.items():
            if self.package_gone(index):
                chosen[index] = {d.line.number for d in defs}
                continue
            if not self._removed:
                continue  # the change deletes no definition: no test lost its subject
            for definition in defs:
                found = self._references(index, definition)
                if found is None:
                    continue
                used = found.exercised | found.named | self._suite_uses(index, definition)
                if used & self._removed.keys():
                    pending.append((index, definition, found))
        self._search({name for _, _, found in pending for name in found.exercised | found.named})
        for index, definition, found in pending:
            if self._subject_gone(found) or self._named_subject_gone(index, definition, found):
                chosen.setdefault(index, set()).add(definition.line.number)
        for index, defs in unmatched.items():
            subject = self._file_subject_gone(index)
            if subject is not None:
                chosen.setdefault(index, set()).update(
                    d.line.number for d in defs if self._uses(index, d, subject)
                )
        for index, defs in unmatched.items():
            freed = self._paired(index, defs)
            if freed:
                chosen.setdefault(index, set()).update(freed)
        twins = Twins(self._files, self._trees, unmatched)
        for index, defs in unmatched.items():
            taken = chosen.setdefault(index, set())
            taken.update(
                d.line.number
                for d in defs
                if d.line.number not in taken
                and (self._duplicate(index, d) or twins.run_on(index, d))
            )
            taken |= self._reverted(index, [d for d in defs if d.line.number not in taken])
        left = {
            index: [d for d in defs if d.line.number not in chosen.get(index, set())]
            for index, defs in unmatched.items()
        }
        twinned = near_twins(
            self._files,
            self._trees,
            left,
            lambda index, definition: self._wholly_deleted(index, definition) is not None,
        )
        for index, lines in twinned.items():
            chosen.setdefault(index, set()).update(lines)
        deprecations = Deprecations(self._files, self._trees, self._moved)
        for index, defs in left.items():
            for definition in defs:
                base = self._python_test(index, definition)
                position = definition.line.number - 1
                if base is not None and deprecations.went_with(
                    base, position, _decorators(base, position)
                ):
                    chosen.setdefault(index, set()).add(definition.line.number)
        for index, defs in left.items():
            path = self._files[index].old_path or ""
            for definition in defs:
                base = self._wholly_deleted(index, definition)
                if base is not None and (
                    loads_only_deleted(
                        self._files, self._head_files, path, base, definition.line.number - 1
                    )
                    or self._message_went(base, definition.line.number - 1, path)
                ):
                    chosen.setdefault(index, set()).add(definition.line.number)
        return {index: lines for index, lines in chosen.items() if lines}

    def _message_went(self, lines: Sequence[str], position: int, path: str) -> bool:
        """Whether the test calls a definition the change deletes whole and expects, word for
        word, a message of that definition's own (a string of `_MIN_MESSAGE` characters or
        more in its deleted body), which nothing at the head but prose holds: rack's test of
        `Request#values_at`, which expects its deprecation text, went with it, whatever
        other class has a `values_at`."""
        block = "\n".join(lines[position : reader_for(path).block_end(lines, position)])
        messages = {
            literal[1:-1]
            for literal in STRING.findall(block)
            if len(literal) - 2 >= _MIN_MESSAGE and "\\" not in literal
        }
        trees = self._trees
        if not messages or trees is None:
            return False
        code = STRING.sub('""', block)
        for name, body in self._deleted_bodies:
            if not re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", code):
                continue
            said = [message for message in messages if message in body]
            if any(_unsaid(trees, message) for message in said):
                return True
        return False

    @cached_property
    def _deleted_bodies(self) -> list[tuple[str, str]]:
        """Each definition the change deletes from source code with its deleted body, when
        most of that body is not added back anywhere (read once for every removed test)."""
        found: list[tuple[str, str]] = []
        for name, records in self._deleted.items():
            for removed in records:
                body = _body_after(self._files[removed.file], removed.line)
                if body and not mostly_added(body, self._added_lines):
                    found.append((name, "\n".join(body)))
        return found

    def _python_test(self, index: int, definition: Definition) -> list[str] | None:
        """The base file's lines, for a Python test the change deletes whole."""
        if not _reads_python(self._files[index].old_path or ""):
            return None
        return self._wholly_deleted(index, definition)

    def _moved(self, lines: Sequence[str]) -> bool:
        return mostly_added(lines, self._added_lines)

    # -- 1. the package went with it -----------------------------------------------------

    def package_gone(self, index: int) -> bool:
        """A deleted test file whose directory, source code and all, the change deleted."""
        if index not in self._gone_packages:
            self._gone_packages[index] = self._package_gone(index)
        return self._gone_packages[index]

    def _package_gone(self, index: int) -> bool:
        change = self._files[index]
        if self._trees is None or change.status != "deleted" or change.old_path is None:
            return False
        directory = posixpath.dirname(change.old_path)
        sources = [
            c
            for c in self._files
            if c.old_path is not None
            and posixpath.dirname(c.old_path) == directory
            and is_source(c.old_path)
        ]
        if not directory or not sources or any(c.status != "deleted" for c in sources):
            return False
        if self._trees.listing("head", directory):
            return False
        deleted = [line.text for c in sources for line in c.removed]
        return not mostly_added(deleted, self._added_lines)

    # -- 2. the subject went with it -----------------------------------------------------

    @cached_property
    def _deleted(self) -> dict[str, list[_Removed]]:
        """Every name the change deletes a definition of, from source code."""
        found: dict[str, list[_Removed]] = {}
        for index, change in enumerate(self._files):
            if not is_source(change.old_path):
                continue
            for line in change.removed:
                for name in defined_names(line.text, change.old_path or ""):
                    found.setdefault(name, []).append(_Removed(name, index, line))
        return found

    @cached_property
    def _removed(self) -> dict[str, list[_Removed]]:
        """Distinctive names the change deletes a definition of, from source code."""
        return {name: found for name, found in self._deleted.items() if is_distinctive(name)}

    @cached_property
    def _added_lines(self) -> set[str]:
        """Every line the change adds, to any file: code moved into test material, or into a
        file of a language the rules do not read (a `.pyx`, a script), is moved, not gone."""
        return {line.text.strip() for change in self._files for line in change.added}

    def _references(self, index: int, definition: Definition) -> References | None:
        """The names a removed test uses, read from the base tree, with those of the helpers
        (and fixtures) it uses from its own file; None unless the change deletes all of the
        test (a test edited in part is not one removed with its subject)."""
        lines = self._wholly_deleted(index, definition)
        if lines is None:
            return None
        return _with_helpers(lines, definition.line.number - 1, self._files[index].old_path or "")

    def _wholly_deleted(self, index: int, definition: Definition) -> list[str] | None:
        """The base file's lines, when the change deletes every line of the test (asked by
        every rule of a removed test: read once)."""
        key = (index, definition.line.number)
        if key not in self._whole:
            self._whole[key] = self._read_wholly_deleted(index, definition)
        return self._whole[key]

    def _read_wholly_deleted(self, index: int, definition: Definition) -> list[str] | None:
        change = self._files[index]
        path = change.old_path or ""
        text = self._trees.text("base", path) if self._trees and path else None
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

    def _search(self, names: Collection[str]) -> None:
        wanted = [name for name in names if name not in self._head_hits]
        if not wanted or self._trees is None:
            return
        for name in wanted:
            self._head_hits[name] = []
        hits = self._trees.search("head", wanted) + self._trees.mentions("head", wanted)
        for hit in hits:
            for name in wanted:
                if re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", hit.text):
                    self._head_hits[name].append(hit)

    def _subject_gone(self, found: References) -> bool:
        used = found.exercised | found.named
        subjects = {n for n in used & self._removed.keys() if self._is_gone(n, reading=_SUBJECT)}
        if not subjects:
            return False
        for name in found.exercised - subjects:
            if name in self._removed and not self._went_with(name, subjects):
                return False  # deleted but still there, or renamed: the code stays
            # Project code the test exercised that stays. Prose defines none: a `const stdout`
            # in a guide's example is no code of the project's.
            heads = [
                h
                for h in self._head_hits.get(name, [])
                if _may_define(h.path) or (is_source(h.path) and name in _defines(h))
            ]
            if heads and not all(self._allowed(name, hit, subjects) for hit in heads):
                return False
        return True

    def _named_subject_gone(self, index: int, definition: Definition, found: References) -> bool:
        """Whether the test is named after a gone subject it uses: a distinctive name the
        change deletes from source code, gone from the whole head tree and not renamed
        (`_is_gone`), whose words the test's name, or the header of a suite around it, spells
        in a row (`test_ordered_multidict_is_hashable` or `class TestOrderedMultiDict` for
        `_OrderedMultiDict`). What a test is about is what its name says, as for a file
        (rule 3); whatever else it calls on the way (a `MultiDict` it compares with) is setup.
        The name is used by the test, its helpers, or the class attributes of a suite around
        it (`storage_class = _OrderedMultiDict`)."""
        lines = self._wholly_deleted(index, definition)
        if lines is None:
            return False
        titles = [definition.name, *(lines[s] for s in _suites(lines, definition))]
        used = found.exercised | found.named | self._suite_uses(index, definition)
        named = {
            n for n in used & self._removed.keys() if any(spells(title, n) for title in titles)
        }
        subjects = {n for n in named if self._is_gone(n, reading=_SUBJECT)}
        position = definition.line.number - 1
        for cases in _parametrized_names(_decorators(lines, position)):
            # Every case of a parametrize list a gone subject (`[WatchGodReload]`): the
            # cases name what the test runs on, as its name would.
            if cases <= self._removed.keys() and all(
                self._is_gone(n, reading=_SUBJECT) for n in cases
            ):
                subjects |= cases
        # As in rule 2: a deleted name it exercises that lives on (renamed, or elsewhere)
        # means code it tested is still there.
        return bool(subjects) and all(
            n in subjects or self._went_with(n, subjects)
            for n in found.exercised & self._removed.keys()
        )

    def _suite_uses(self, index: int, definition: Definition) -> frozenset[str]:
        """The names the class attributes of the Python test classes around a removed test
        use."""
        path = self._files[index].old_path or ""
        lines = self._wholly_deleted(index, definition) if _reads_python(path) else None
        if lines is None:
            return frozenset()
        attributes = [a for s in _suites(lines, definition) for a in _suite_attributes(lines, s)]
        return references(attributes, path).exercised if attributes else frozenset()

    def _file_subject_gone(self, index: int) -> str | None:
        """The subject a deleted test file is named after (`creole_test.rb`, `test_legacy.py`,
        `encrypted_cookie_spec.rb` for `EncryptedCookie`), when it went: a distinctive name the
        file uses, that the change deletes a definition of from source code, gone from the
        whole head tree and not renamed. The file's tests that use it then go with it,
        whatever else they call on the way (an app built with a helper, a layout): which code
        a file is about is what its name says, and that code is nowhere now. Its tests that do
        not use it are judged one by one, as anywhere else."""
        change = self._files[index]
        if change.status != "deleted" or change.old_path is None or self._trees is None:
            return None
        names = [
            name
            for name in _file_subjects(change.old_path)
            if name in self._removed and is_distinctive(name)
        ]
        text = self._trees.text("base", change.old_path) if names else None
        if text is None:
            return None
        used = [n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text)]
        self._search(used)
        return next((name for name in used if self._is_gone(name, reading=_SUBJECT)), None)

    def _uses(self, index: int, definition: Definition, name: str) -> bool:
        """Whether a removed test (or a helper of its own file it calls) uses `name`: the
        names read from it, or the word in its own lines (`Rack::Protection::Name.new`)."""
        found = self._references(index, definition)
        if found is not None and name in found.exercised | found.named:
            return True
        lines = self._wholly_deleted(index, definition)
        if lines is None:
            return False
        position = definition.line.number - 1
        path = self._files[index].old_path or ""
        end = reader_for(path).block_end(lines, position)
        word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
        return any(word.search(line) for line in lines[position:end])

    def _is_gone(self, name: str, *, reading: _Reading) -> bool:
        """No line of the head tree provides the name (`_provides`) and it does not live on,
        renamed or moved (`_lives_on`), as `reading` reads them."""
        key = (name, reading)
        if key not in self._gone:
            self._search([name])  # nothing to do where the caller searched it with others
            hits = self._head_hits.get(name, [])
            still = any(self._provides(hit, name, reading=reading) for hit in hits)
            self._gone[key] = not still and not self._lives_on(name, reading=reading)
        return self._gone[key]

    def _provides(self, hit: Hit, name: str, *, reading: _Reading) -> bool:
        """Whether a line of the head tree shows `name` still there: a line of source code
        that binds it (a string mentioning it included, or a comment after code on its line;
        not a line that does nothing with it, `_inert`), a test's or prose's definition of it
        (a test's use is no definition; its own helper is one), or any mention in data (an
        entry point) or in other code (which may use or define it)."""
        if is_source(hit.path):
            return not self._inert(hit, name) and binds(hit.text, name, hit.path)
        if is_code(hit.path) or is_prose(hit.path):
            return name in _defines(hit)
        return True

    def _lives_on(self, name: str, *, reading: _Reading) -> bool:
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
        # distinctive names of rules 2 and 3 these are `self._removed[name]`.
        for removed in self._deleted.get(name, []):
            body = _body_after(self._files[removed.file], removed.line)
            if any(is_telling(text) for text in body):
                if mostly_added(body, self._added_lines):
                    return True
            elif self._header_renamed(removed) or self._line_code_stays(removed, reading):
                return True
        others = {other for change in self._files for other in self._replacements(name, change)}
        return any(self._project_name(other.rsplit(".", 1)[-1]) for other in others)

    def _line_code_stays(self, removed: _Removed, reading: _Reading) -> bool:
        """Whether a deleted one-line definition only ran project code the head still has:
        it was another name for it (`old_parse = parse_config`), or, where `reading` says so,
        its line uses project code and none that the change deletes. Its tests ran that code,
        which lives on."""
        text = removed.line.text
        alias = _ALIAS.search(text)
        target = alias["v"].rsplit(".", 1)[-1] if alias else None
        if target is not None and target != removed.name and self._project_name(target):
            return True
        if not reading.kept_lines_live:
            return False
        path = self._files[removed.file].old_path or ""
        used = references([text], path).exercised - {removed.name}
        return any(self._project_name(name) for name in used) and not any(
            name in self._deleted for name in used
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
            for text in self._added_lines:
                other = _replacement(text, before, after, name)
                if other is not None:
                    found.add(other)
        return found

    def _allowed(self, name: str, hit: Hit, subjects: set[str]) -> bool:
        """Whether a project definition a removed test exercises, still at the head, is part
        of what went: the class a gone subject was defined on, or a definition the change cut
        a use of a gone subject out of."""
        if name in self._owners(subjects):
            return True
        change = next((c for c in self._files if c.new_path == hit.path), None)
        if change is None or change.old_path is None or self._trees is None:
            return False
        text = self._trees.text("base", change.old_path)
        if text is None:
            return False
        lines = text.splitlines()
        reader = reader_for(change.old_path)
        cut = {
            line.number
            for line in change.removed
            if any(re.search(rf"(?<![\w$]){re.escape(s)}(?![\w$])", line.text) for s in subjects)
        }
        for position, base_line in enumerate(lines):
            if name in defined_names(base_line, change.old_path):
                end = reader.block_end(lines, position)
                if any(position + 1 < number <= end for number in cut):
                    return True
        return False

    def _owners(self, subjects: set[str]) -> set[str]:
        """The classes (Go receivers, JavaScript objects) the gone subjects were defined on,
        and the classes and Ruby modules around those (`Rack::Protection` of a gone
        `Rack::Protection::EncryptedCookie`)."""
        owners: set[str] = set()
        for name in subjects:
            for removed in self._removed[name]:
                owners.update(self._owner(removed))
        return owners

    def _went_with(self, name: str, subjects: set[str]) -> bool:
        """Whether every deleted definition of `name` went as part of a gone subject: inside
        one (a method of a deleted class, a class nested in it), or, for the class or module a
        gone subject was in, a deleted opening of it (the `module Rack` of a deleted
        `rack/protection/encrypted_cookie.rb`); and none lives on renamed or moved. Whatever
        else the project calls by that name is still judged as any other definition the test
        exercises."""
        owners = self._owners(subjects)

        def part(removed: _Removed) -> bool:
            if subjects & set(self._owner(removed)):
                return True
            opening = _CLASS.match(removed.line.text)
            return name in owners and opening is not None and name in opening["n"].split("::")

        went = all(part(removed) for removed in self._removed[name])
        return went and not self._lives_on(name, reading=_SUBJECT)

    def _owner(self, removed: _Removed, *, through: bool = False) -> list[str]:
        """The class (Go receiver, JavaScript object) a deleted definition was on, and the
        classes and modules around that one, innermost first."""
        text = removed.line.text
        for pattern in (_GO_RECEIVER, _JS_OWNER):
            match = pattern.match(text)
            if match is not None:
                return [match["n"]]
        return self._around(removed, through=through)

    def _around(self, removed: _Removed, *, through: bool = False) -> list[str]:
        """The classes and modules around a deleted definition, innermost first; `through`
        blocks that define nothing (a Ruby `if RUBY_VERSION < "1.9"` around methods)."""
        text = removed.line.text
        path = self._files[removed.file].old_path
        base = self._trees.text("base", path) if self._trees is not None and path else None
        if base is None:
            return []
        lines = base.splitlines()
        header = indent(text)
        found: list[str] = []
        for position in range(min(removed.line.number - 1, len(lines)) - 1, -1, -1):
            candidate = lines[position]
            if candidate.strip() and indent(candidate) < header:
                match = _CLASS.match(candidate)
                if match is None and through and not defined_names(candidate, path or ""):
                    header = indent(candidate)
                    continue
                if match is None:
                    break  # a function or block around it: what encloses that is no owner
                found.extend(reversed(match["n"].split("::")))
                header = indent(candidate)
        return found

    # -- 5. the source file it is named after went with it ----------------------------

    def _paired(self, index: int, defs: Sequence[Definition]) -> set[int]:
        """The header lines of the tests of a deleted test file that go with a source file of
        its stem the change deletes (`app.guards.tamper.exemptions.paired_files`): those that use a name the source
        file defined, when every such name they use is gone (but the classes and modules the
        file only opened around what went)."""
        freed: set[int] = set()
        if self._trees is None:
            return freed
        for source in paired_sources(self._files, index):
            names = self._pair_names(source)
            if not names:
                continue
            openings = self._openings(source)
            stem = source_stem(self._files[source].old_path or "") or ""
            for definition in defs:
                if not self._named_after_file(index, definition, stem):
                    continue
                used = self._pair_uses(index, definition, names)
                gone = {name for name in used if self._is_gone(name, reading=_PAIRED)}
                if gone and all(
                    name in gone or name in openings or self._member_of_gone(name, source)
                    for name in used
                ):
                    freed.add(definition.line.number)
        return freed

    def _named_after_file(self, index: int, definition: Definition, stem: str) -> bool:
        """Whether the test, or a suite around it, is named after the file: its name or the
        header of a suite around it holds the stem (`TestJWTWithConfig` for `jwt.go`,
        `describe Rack::Logger` for `logger.rb`), case and `_` aside. A test of other code
        that only calls a helper of the file (`TestReverse` building a `Pad`) is not the
        file's test."""
        lines = self._wholly_deleted(index, definition)
        key = _flat(stem)
        if lines is None or not key:
            return False
        names = [definition.name]
        suite = enclosing(lines, definition.line.number - 1)
        while suite is not None:
            names.append(lines[suite])
            suite = enclosing(lines, suite)
        return any(key in _flat(name) for name in names)

    def _pair_names(self, source: int) -> frozenset[str]:
        """The names a deleted source file defined (its distinctive ones, and the one it is
        named after, however short or common: `JWT` in `jwt.go`, `Logger` in `logger.rb`);
        none unless the file went: most of its lines not added back anywhere in the change,
        and the name it is named after gone. A file named after nothing it defines (`util.go`
        of helpers) is no subject its tests go with."""
        if source not in self._pair_names_of:
            self._pair_names_of[source] = self._read_pair_names(source)
        return self._pair_names_of[source]

    def _read_pair_names(self, source: int) -> frozenset[str]:
        change = self._files[source]
        path = change.old_path or ""
        stem = source_stem(path)
        if stem is None or mostly_added([line.text for line in change.removed], self._added_lines):
            return frozenset()
        defined = {name for line in change.removed for name in defined_names(line.text, path)}
        subjects = {name for name in defined if named_after(name, stem) and not is_reserved(name)}
        names = {name for name in defined if is_distinctive(name)} | subjects
        self._search(names)
        if not any(self._is_gone(name, reading=_PAIRED) for name in subjects):
            return frozenset()
        return frozenset(names)

    def _pair_uses(self, index: int, definition: Definition, names: Collection[str]) -> set[str]:
        """Which of `names` a removed test uses: read from it and the helpers of its file it
        calls, or as words in its own lines or in the headers of the suites around it (the
        `describe Thor::CoreExt::OrderedHash do` whose `subject` its tests use), as rule 3
        reads them (a description naming the subject names it too)."""
        lines = self._wholly_deleted(index, definition)
        found = self._references(index, definition)
        if lines is None or found is None:
            return set()
        used = set(names) & (found.exercised | found.named)
        position = definition.line.number - 1
        path = self._files[index].old_path or ""
        start = position - len(_decorators(lines, position))
        own = lines[start : reader_for(path).block_end(lines, position)]
        suite = enclosing(lines, position)
        while suite is not None:
            own.append(lines[suite])
            suite = enclosing(lines, suite)
        text = "\n".join(own)
        used |= {n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text)}
        return used

    def _member_of_gone(self, name: str, source: int) -> bool:
        """A method (or nested definition) the source file defined only inside a class, Go
        receiver or JavaScript object that went (`OrderedHash#shift`): other classes' methods
        of the name (`Arguments#shift`) are not its code. Unless the change defines the name
        anew, outside tests, or moves or renames it: where its code would live on."""
        records = [r for r in self._deleted.get(name, []) if r.file == source]
        owners = [self._owner(r, through=True)[:1] for r in records]
        return (
            bool(records)
            and all(owner and self._is_gone(owner[0], reading=_PAIRED) for owner in owners)
            and not self._lives_on(name, reading=_PAIRED)
            and not self._defined_anew(name)
        )

    def _defined_anew(self, name: str) -> bool:
        """Whether a line the change adds outside tests defines the name, assigns it, or
        names it in a string or symbol, as dynamic definitions do (`define_method(:name)`,
        `setattr(cls, "name", ...)`)."""
        named = re.compile(rf"""(?<![\w$:]):{re.escape(name)}\b|(['"`]){re.escape(name)}\1""")
        return any(
            name in defined_names(line.text, change.path)
            or _assigns(line.text, name)
            or named.search(line.text) is not None
            for change in self._files
            if change.new_path is not None and not is_test_path(change.new_path)
            for line in change.added
        )

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
            for c in self._files
        )
        return deleted and not any(ends_at(path, target) for path in self._head_files)

    @cached_property
    def _head_files(self) -> list[str]:
        return self._trees.listing("head", ".") if self._trees is not None else []

    def _header_renamed(self, removed: _Removed) -> bool:
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
            for added in self._added_lines
        )

    def _project_name(self, name: str) -> bool:
        """Whether the head tree defines `name` in code, or may (a file it cannot read), or
        imports it from the project's own code (`from .impl import real as name`: the code
        renamed where it is imported is still the project's)."""
        self._search([name])
        return any(
            _may_define(hit.path)
            or (is_code(hit.path) and (name in _defines(hit) or _assigns(hit.text, name)))
            or (is_source(hit.path) and name in self._own_imports(hit.path))
            for hit in self._head_hits.get(name, [])
        )

    def _own_imports(self, path: str) -> frozenset[str]:
        """The names a head source file binds by importing them from the project's own code:
        a relative module (`from .impl import x as y`, `import {x as y} from './impl.js'`), or
        a Python package whose top-level name is a folder or module of the head tree."""
        if path not in self._own_imports_of:
            text = self._trees.text("head", path) if self._trees is not None else None
            if text is None:
                found: frozenset[str] = frozenset()
            elif _reads_python(path):
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
        for path in self._head_files:
            *folders, file = path.split("/")
            names.update(folders)
            if _reads_python(file):
                names.add(file.rsplit(".", 1)[0])
        return frozenset(names)

    def _openings(self, source: int) -> set[str]:
        """The classes and Ruby modules a deleted source file only opened around a definition
        that went (`class Thor` and `module CoreExt` around `class OrderedHash`): each of the
        file's definitions of the name is a `class` or `module` line."""
        around: set[str] = set()
        for name in self._pair_names(source):
            if self._is_gone(name, reading=_PAIRED):
                for removed in self._deleted.get(name, []):
                    if removed.file == source:
                        around.update(self._around(removed))
        return {
            name
            for name in around
            if all(
                _CLASS.match(r.line.text) for r in self._deleted.get(name, []) if r.file == source
            )
        }

    # -- 3. an exact duplicate stays ---------------------------------------------------

    def _duplicate(self, index: int, definition: Definition) -> bool:
        change = self._files[index]
        if self._trees is None or change.new_path is None or change.old_path is None:
            return False
        if not definition.body:
            return False
        head = self._trees.text("head", change.new_path)
        base = self._trees.text("base", change.old_path)
        if head is None or base is None:
            return False
        base_lines = base.splitlines()
        position = definition.line.number - 1
        if not 0 <= position < len(base_lines):
            return False
        shape = _Shape.of(base_lines, position, definition.name)
        head_lines = head.splitlines()
        numbered = [Line(n + 1, text, n + 1) for n, text in enumerate(head_lines)]
        return any(
            twin.body == definition.body
            and _Shape.of(head_lines, twin.line.number - 1, twin.name) == shape
            for twin in definitions(numbered, len(head_lines), reader_for(change.new_path))
        )

    # -- 4. the commit that wrote it is taken back -------------------------------------

    @cached_property
    def _reverts(self) -> Reverts | None:
        return Reverts(self._files, self._trees) if self._trees is not None else None

    def _reverted(self, index: int, defs: Sequence[Definition]) -> set[int]:
        """The header lines of the tests (of one file) that go with the earlier change to
        the code that brought them (`app.guards.tamper.exemptions.reverts`)."""
        path = self._files[index].old_path or ""
        spans: dict[int, list[int]] = {}
        for definition in defs:
            lines = self._wholly_deleted(index, definition)
            if lines is None:
                continue
            position = definition.line.number - 1
            start = position - len(_decorators(lines, position))
            end = reader_for(path).block_end(lines, position)
            spans[definition.line.number] = [n + 1 for n in range(start, end) if lines[n].strip()]
        if not spans or self._reverts is None:
            return set()
        return self._reverts.freed(path, spans)


@dataclass(frozen=True)
class _Shape:
    """What a test runs with besides its body: its header (but for its name), decorators and
    enclosing suite (with the suite's own decorators)."""

    header: str
    decorators: tuple[str, ...]
    suite: str
    suite_decorators: tuple[str, ...]

    @classmethod
    def of(cls, lines: Sequence[str], position: int, name: str) -> _Shape:
        suite = enclosing(lines, position)
        return cls(
            header=lines[position].strip().replace(name, "\0", 1),
            decorators=_decorators(lines, position),
            suite=lines[suite].strip() if suite is not None else "",
            suite_decorators=_decorators(lines, suite) if suite is not None else (),
        )


_FILE_SUBJECT = (
    re.compile(r"^test_(?P<n>\w+)\.py$"),
    re.compile(r"^(?P<n>\w+)_(?:test|spec)\.(?:py|go|rb|exs?)$"),
    re.compile(r"^(?P<n>[\w$]+)\.(?:test|spec)\.[cm]?[jt]sx?$"),
    re.compile(r"^(?P<n>\w+)Tests?\.(?:java|kt|cs|swift|scala)$"),
)


def _file_subjects(path: str) -> list[str]:
    """The name a test file is named after, by the runners' conventions, as it is spelled and
    as a class would be (`encrypted_cookie_spec.rb` tests `EncryptedCookie`)."""
    base = posixpath.basename(path)
    for pattern in _FILE_SUBJECT:
        match = pattern.match(base)
        if match is not None:
            name = match["n"]
            camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
            return list(dict.fromkeys((name, camel)))
    return []


def _defines(hit: Hit) -> list[str]:
    return defined_names(hit.text, hit.path)


def _may_define(path: str) -> bool:
    """A file of code the rules do not read (a script, Cython, Lua, a template): any mention
    of a name there may be its definition."""
    return not (is_code(path) or is_data(path) or is_prose(path))


def _reads_as_text(path: str) -> bool:
    """Source code, or prose: a line of either defines a name only by the usual patterns (a
    changelog's "Remove `legacy_parse`" defines nothing; a definition moved there does)."""
    return is_source(path) or is_prose(path)


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


def _assigns(text: str, name: str) -> bool:
    """An assignment to `name` at any depth (a Ruby constant in its module), or to an
    attribute of that name (`exports.Name = class {`)."""
    pattern = rf"(?:^\s*|[\w$)\]]\.){re.escape(name)}\s*(?::[^=]*)?=(?![=>~])"
    return re.search(pattern, text) is not None


# A decorator that only says whether or where a test runs.
_SKIP = re.compile(r"^@(?:pytest\.mark\.|unittest\.)?(?:skip|skipif|skipIf|skipUnless|xfail)\b")


def _reads_python(path: str) -> bool:
    return reader_for(path) is PYTHON


def _block_references(lines: Sequence[str], position: int, path: str) -> References:
    """The names used by the definition at `lines[position]`, decorators included but for
    skip and xfail conditions: a flag that says where a test runs (`PY_3_10_PLUS`) is not
    what it tests, and its going is judged by what it meant (`app.guards.tamper.exemptions.dropped_pythons`)."""
    end = reader_for(path).block_end(lines, position)
    start = position - len(_decorators(lines, position))
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


def _body_after(change: FileChange, header: Line) -> list[str]:
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


def _decorators(lines: Sequence[str], position: int) -> tuple[str, ...]:
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


def _flat(text: str) -> str:
    """Letters and digits only, lowercased: `OrderedHash`, `ordered_hash` and `ordered-hash`
    spelled alike."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _unsaid(trees: TreeView, message: str) -> bool:
    """Whether no file of the head but prose holds the message."""
    hits = trees.search("head", [message]) + trees.mentions("head", [message])
    return all(is_prose(hit.path) for hit in hits if message in hit.text)


def _parametrized_names(decorators: Sequence[str]) -> list[set[str]]:
    """The values of each literal `parametrize` list of a test's decorators whose every case
    is a name (`[WatchGodReload]`, `[mod.Legacy, Old]`), as the names' last parts."""
    found: list[set[str]] = []
    for text in "\n".join(decorators).split("\n@"):
        try:
            call = ast.parse(text.lstrip().removeprefix("@"), mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(call, ast.Call) or len(call.args) < 2:
            continue
        if not (dotted_name(call.func) or "").endswith("parametrize"):
            continue
        values = call.args[1]
        if not isinstance(values, ast.List | ast.Tuple) or not values.elts:
            continue
        names = [dotted_name(value) for value in values.elts]
        if all(names):
            found.append({name.rsplit(".", 1)[-1] for name in names if name})
    return found


def _suites(lines: Sequence[str], definition: Definition) -> list[int]:
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


_ATTRIBUTE = re.compile(r"^\s*[A-Za-z_]\w*\s*(?::[^=]+)?=(?!=)")


def _words(text: str) -> list[str]:
    """The words of a name or title, lowercased: camel case, `_`, `-` and spaces split."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", text)]


def spells(title: str, name: str) -> bool:
    """Whether a title spells a name's words in a row, however each splits them
    (`test_ordered_multidict_is_hashable` spells `_OrderedMultiDict`)."""
    target = "".join(_words(name))
    words = _words(title)
    for start in range(len(words)):
        joined = ""
        for word in words[start:]:
            joined += word
            if joined == target:
                return True
            if len(joined) >= len(target) or not target.startswith(joined):
                break
    return False
