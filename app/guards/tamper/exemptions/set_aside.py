"""Removed tests that are not tampering: the exemptions that set a removed test aside (judge
the change as if it had not been removed), in the order they are tried.

`test-tamper` exists for one attack: a red suite made green by removing tests while the code
those tests exercise stays. A change that deletes the code itself (a deprecated function, a
class, a whole package) and its tests with it removes nothing the suite still needs; nor does
one that removes a duplicate of a test that stays, or takes back the commit that wrote a test.
Telling these apart takes the whole trees (`exemptions.evidence`), so they hold only for
changes computed from a repository (`app.guards.trees`); a bare diff gets none.

A removed test nothing else accounts for (not renamed, moved or folded into another:
`relocations`) is set aside when
1. its package went with it (`exemptions.package_gone`);
2. its subject went with it (`exemptions.subject_gone`);
3. its deleted file is named after a subject that went (`exemptions.file_subject`);
4. it is an exact duplicate of a test that stays (`exemptions.duplicates`), or a Python
   test whose twin runs on in another file (`exemptions.twins`);
5. its file's source file went with it (`exemptions.paired_files`);
6. its near twin stays, but for one token that went (`exemptions.near_twins`);
7. it is named after its gone subject (`exemptions.named_subject`);
8. it checked only a deprecation warning whose block went (`exemptions.deprecations`);
9. it only loaded a file the change deletes (`exemptions.load_only`);
10. it expects a deleted definition's own message (`exemptions.messages`);
and when the change takes back the commit that wrote it (`exemptions.reverts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property

from app.guards.changes import FileChange
from app.guards.tamper.code_names import References
from app.guards.tamper.definitions import Definition
from app.guards.tamper.exemptions.deprecations import Deprecations
from app.guards.tamper.exemptions.duplicates import duplicate
from app.guards.tamper.exemptions.evidence import Evidence, decorators, reads_python
from app.guards.tamper.exemptions.file_subject import file_subject_gone, uses
from app.guards.tamper.exemptions.load_only import loads_only_deleted
from app.guards.tamper.exemptions.messages import ExpectedMessages
from app.guards.tamper.exemptions.named_subject import named_subject_gone
from app.guards.tamper.exemptions.near_twins import near_twins
from app.guards.tamper.exemptions.package_gone import package_gone
from app.guards.tamper.exemptions.paired_files import PairedFiles
from app.guards.tamper.exemptions.reverts import Reverts
from app.guards.tamper.exemptions.subject_gone import subject_gone
from app.guards.tamper.exemptions.twins import Twins
from app.guards.tamper.lang import reader_for
from app.guards.trees import TreeView


class Exemptions:
    """The exemptions over one change. Reads the trees only when the diff already shows a
    candidate (a deleted test file, or a deleted definition a removed test uses)."""

    def __init__(self, files: Sequence[FileChange], trees: TreeView | None) -> None:
        self._files = files
        self._trees = trees
        self._evidence = Evidence(files, trees) if trees is not None else None
        self._gone_packages: dict[int, bool] = {}

    def package_gone(self, index: int) -> bool:
        """A deleted test file whose directory, source code and all, the change deleted."""
        if self._evidence is None:
            return False
        if index not in self._gone_packages:
            self._gone_packages[index] = package_gone(self._evidence, index)
        return self._gone_packages[index]

    def set_aside(self, unmatched: Mapping[int, Sequence[Definition]]) -> dict[int, set[int]]:
        """Of the removed tests nothing else accounts for, the header lines (per file) of
        those an exemption sets aside."""
        ev = self._evidence
        if ev is None or self._trees is None:
            return {}
        chosen: dict[int, set[int]] = {}
        pending: list[tuple[int, Definition, References]] = []
        for index, defs in unmatched.items():
            if self.package_gone(index):
                chosen[index] = {d.line.number for d in defs}
                continue
            if not ev.removed:
                continue  # the change deletes no definition: no test lost its subject
            for definition in defs:
                found = ev.references(index, definition)
                if found is None:
                    continue
                used = found.exercised | found.named | ev.suite_uses(index, definition)
                if used & ev.removed.keys():
                    pending.append((index, definition, found))
        ev.search({name for _, _, found in pending for name in found.exercised | found.named})
        for index, definition, found in pending:
            if subject_gone(ev, found) or named_subject_gone(ev, index, definition, found):
                chosen.setdefault(index, set()).add(definition.line.number)
        for index, defs in unmatched.items():
            subject = file_subject_gone(ev, index)
            if subject is not None:
                chosen.setdefault(index, set()).update(
                    d.line.number for d in defs if uses(ev, index, d, subject)
                )
        paired = PairedFiles(ev)
        for index, defs in unmatched.items():
            freed = paired.freed(index, defs)
            if freed:
                chosen.setdefault(index, set()).update(freed)
        twins = Twins(self._files, self._trees, unmatched)
        for index, defs in unmatched.items():
            taken = chosen.setdefault(index, set())
            taken.update(
                d.line.number
                for d in defs
                if d.line.number not in taken
                and (duplicate(ev, index, d) or twins.run_on(index, d))
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
            lambda index, definition: ev.wholly_deleted(index, definition) is not None,
        )
        for index, lines in twinned.items():
            chosen.setdefault(index, set()).update(lines)
        deprecations = Deprecations(self._files, self._trees, ev.moved)
        for index, defs in left.items():
            for definition in defs:
                base = self._python_test(index, definition)
                position = definition.line.number - 1
                if base is not None and deprecations.went_with(
                    base, position, decorators(base, position)
                ):
                    chosen.setdefault(index, set()).add(definition.line.number)
        messages = ExpectedMessages(ev)
        for index, defs in left.items():
            path = self._files[index].old_path or ""
            for definition in defs:
                base = ev.wholly_deleted(index, definition)
                if base is not None and (
                    loads_only_deleted(
                        self._files, ev.head_files, path, base, definition.line.number - 1
                    )
                    or messages.went(base, definition.line.number - 1, path)
                ):
                    chosen.setdefault(index, set()).add(definition.line.number)
        return {index: lines for index, lines in chosen.items() if lines}

    def _python_test(self, index: int, definition: Definition) -> list[str] | None:
        """The base file's lines, for a Python test the change deletes whole."""
        if self._evidence is None or not reads_python(self._files[index].old_path or ""):
            return None
        return self._evidence.wholly_deleted(index, definition)

    @cached_property
    def _reverts(self) -> Reverts | None:
        return Reverts(self._files, self._trees) if self._trees is not None else None

    def _reverted(self, index: int, defs: Sequence[Definition]) -> set[int]:
        """The header lines of the tests (of one file) that go with the earlier change to
        the code that brought them (`exemptions.reverts`)."""
        if self._evidence is None:
            return set()
        path = self._files[index].old_path or ""
        spans: dict[int, list[int]] = {}
        for definition in defs:
            lines = self._evidence.wholly_deleted(index, definition)
            if lines is None:
                continue
            position = definition.line.number - 1
            start = position - len(decorators(lines, position))
            end = reader_for(path).block_end(lines, position)
            spans[definition.line.number] = [n + 1 for n in range(start, end) if lines[n].strip()]
        if not spans or self._reverts is None:
            return set()
        return self._reverts.freed(path, spans)
