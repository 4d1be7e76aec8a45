"""Where the tests a change removes went: renamed, moved to another file, folded into a
parametrized test, or gone. Over the whole change, so a move between files is seen as one.

A removed test definition is matched, in this order, to an added one
1. with the same name (an edited header, or a move), then
2. with an identical body under another name (a rename; both bodies wholly in the change).
An added test can stand for a removed one only in the same file or in a file the runner
collects: a test "moved" into a fixture or helper file is gone. Removed tests that were skipped
unconditionally anyway are not counted (they ran nowhere).

What is left unmatched in a file is set against the new tests the same file gains, a
parametrized test counting one per literal case. A file whose removed tests mostly (at least
three in four) went to other files is a move, split or merge: its few leftovers (tests
renamed and edited on the way) may also be set against new tests other collected files gain
beyond their own needs. Whatever remains is a removal.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from app.guards.changes import FileChange
from app.guards.suite import (
    Definition,
    collects_tests,
    definitions,
    is_conftest,
    is_test_path,
    skipped_definitions,
)

# Share of a file's removed tests that must have gone to other files for it to be a move.
_MOVED_SHARE = 0.75


@dataclass(frozen=True)
class Continuation:
    """An added test that carries on a removed one."""

    old: Definition
    new: Definition
    old_file: int  # indexes of the two files in the change
    new_file: int


@dataclass
class Relocations:
    """The fate of every removed test of a change (files by their index in the change)."""

    # Tests each file lost for good, the ones to report first.
    gone: dict[int, list[Definition]] = field(default_factory=dict)
    # Removed tests per file (all recognised definitions, skipped ones included).
    removed: dict[int, list[Definition]] = field(default_factory=dict)
    continuations: list[Continuation] = field(default_factory=list)
    # (file, name) of added tests that carry on an older test, or stand in for one that was
    # removed from their file: a skip added to them hides a test that ran before.
    carried: set[tuple[int, str]] = field(default_factory=set)


def relocate(files: Sequence[FileChange]) -> Relocations:
    removed = {
        index: definitions(change.removed, change.old_line_count)
        for index, change in enumerate(files)
        if _counts_removals(change.old_path)
    }
    available = {
        index: definitions(change.added, change.new_line_count)
        for index, change in enumerate(files)
        if change.new_path is not None and is_test_path(change.new_path)
    }
    collected = {i for i in available if collects_tests(files[i].new_path or "")}
    result = Relocations(removed=removed)
    unmatched = _match(files, removed, available, collected, result)
    fresh = {index: sum(d.cases for d in defs) for index, defs in available.items()}
    deficits = {
        index: sum(d.cases for d in defs) - fresh.get(index, 0) for index, defs in unmatched.items()
    }
    lenders = _settle_moves(deficits, fresh, collected, _moved_out(unmatched, result))
    for index, defs in unmatched.items():
        result.gone[index] = _excess(defs, deficits[index])
    # New tests that stand in for removed ones carry them on, like a rename.
    for index in lenders | {i for i, defs in unmatched.items() if defs}:
        result.carried.update((index, d.name) for d in available.get(index, ()))
    return result


def _counts_removals(path: str | None) -> bool:
    return path is not None and is_test_path(path) and not is_conftest(path)


def _match(
    files: Sequence[FileChange],
    removed: dict[int, list[Definition]],
    available: dict[int, list[Definition]],
    collected: set[int],
    result: Relocations,
) -> dict[int, list[Definition]]:
    """Match removed tests by name, then by body; return the unmatched ones that ran."""
    pending: list[tuple[int, Definition]] = []
    for index, defs in removed.items():
        for old in defs:
            if not _carry(index, old, available, collected, result, _same_name):
                pending.append((index, old))
    unmatched: dict[int, list[Definition]] = defaultdict(list)
    skipped = {i: skipped_definitions(defs, files[i].removed) for i, defs in removed.items()}
    for index, old in pending:
        if old.body and _carry(index, old, available, collected, result, _same_body):
            continue
        if old.line.number not in skipped[index]:
            unmatched[index].append(old)
    return unmatched


def _carry(
    home: int,
    old: Definition,
    available: dict[int, list[Definition]],
    collected: set[int],
    result: Relocations,
    same: Callable[[Definition, Definition], bool],
) -> bool:
    """Take the first added test that `same` pairs with `old`, preferring `old`'s own file,
    else any file the runner collects; record it."""
    accept = partial(same, old)
    for index in [home] + [i for i in available if i != home and i in collected]:
        for position, new in enumerate(available.get(index, ())):
            if accept(new):
                available[index].pop(position)
                result.continuations.append(Continuation(old, new, home, index))
                result.carried.add((index, new.name))
                return True
    return False


def _same_name(old: Definition, new: Definition) -> bool:
    return new.name == old.name


def _same_body(old: Definition, new: Definition) -> bool:
    return new.body == old.body


def _moved_out(
    unmatched: dict[int, list[Definition]],
    result: Relocations,
) -> set[int]:
    """Files with leftovers most of whose removed tests went to other files."""
    elsewhere: dict[int, int] = defaultdict(int)
    for continuation in result.continuations:
        if continuation.new_file != continuation.old_file:
            elsewhere[continuation.old_file] += 1
    return {
        index
        for index, defs in unmatched.items()
        if defs and elsewhere[index] >= _MOVED_SHARE * (elsewhere[index] + len(defs))
    }


def _settle_moves(
    deficits: dict[int, int], fresh: dict[int, int], collected: set[int], moved: set[int]
) -> set[int]:
    """Let files that are moves pay their leftover deficit from the new tests other collected
    files gain beyond their own needs; return the files whose new tests paid."""
    spare = {
        index: max(-deficits[index], 0) if index in deficits else fresh[index]
        for index in fresh
        if index in collected and index not in moved
    }
    lenders: set[int] = set()
    for index in sorted(moved):
        for lender, amount in spare.items():
            paid = min(max(deficits[index], 0), amount)
            if paid > 0:
                deficits[index] -= paid
                spare[lender] -= paid
                lenders.add(lender)
    return lenders


def _excess(defs: list[Definition], deficit: int) -> list[Definition]:
    """The first removed tests that make up `deficit` (parametrized cases counted)."""
    reported: list[Definition] = []
    for definition in defs:
        if deficit <= 0:
            break
        reported.append(definition)
        deficit -= definition.cases
    return reported
