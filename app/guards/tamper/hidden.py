"""Python tests pytest no longer collects while their definition stays, or collects less
surely where a test moved (part of the `test-tamper` rule, read by
`runners.collection`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from app.guards.changes import FileChange
from app.guards.paths import display
from app.guards.tamper.code_names import python_module
from app.guards.tamper.conditions.flags import flags
from app.guards.tamper.conditions.skip_conditions import (
    Floor,
    truth_on_linux,
)
from app.guards.tamper.finding import Tamper
from app.guards.tamper.lang.python import is_module
from app.guards.tamper.relocations import Relocations
from app.guards.tamper.runners.collection import (
    Truth,
    bases_that_hide,
    hidden_by_lines,
    hidden_tests,
    levels,
    lowered_flags,
    subclasses_left_off,
)
from app.guards.tamper.runners.param_cases import switched_off, switched_off_lines
from app.guards.tamper.test_files import is_conftest, is_test_path
from app.guards.trees import Side, TreeView


def hidden(
    change: FileChange, trees: TreeView | None, floor: Floor, newest: Floor | None = None
) -> list[Tamper]:
    """Tests a Python module still defines but pytest no longer collects
    (`runners.collection`): in a test module, read whole on both sides with the trees,
    else from the changed lines; in any Python file, a class that held tests made
    `__test__ = False` while a class in another file inherits it. A new file hid nothing
    that ran."""
    old, new = change.old_path, change.new_path
    if change.status in ("added", "copied") or old is None or new is None:
        return []
    if not is_module(new):
        return []
    tests = _python_tests(new)
    flagged = any("__test__" in line.text for line in change.added)
    if not tests and not flagged:
        return []
    texts = (trees.text("base", old), trees.text("head", new)) if trees else (None, None)
    base, head = python_module(texts[0]), python_module(texts[1])
    if trees is None or base is None or head is None:
        lines = texts[1].split("\n") if texts[1] is not None else None
        findings = (
            hidden_by_lines(change.added, change.removed, lines, change.context) if tests else []
        )
        if tests:
            truth: Truth = partial(truth_on_linux, floor=floor, newest=newest)
            findings += switched_off_lines(change.added, change.removed, truth)
        return [Tamper(change.path, line, message) for line, message in findings]
    names = flags(trees, "base", old, texts[0]), flags(trees, "head", new, texts[1])
    truths: tuple[Truth, Truth] = (
        lambda test: truth_on_linux(test, floor, names[0], newest),
        lambda test: truth_on_linux(test, floor, names[1], newest),
    )
    findings = hidden_tests(base, head, truths) if tests else []
    if tests:
        findings += bases_that_hide(trees, new, base, head)
        findings += switched_off(base, head, truths[1])
    if flagged:
        # A base suite's tests run in the classes that inherit it, wherever they are; a
        # helper's, in those that inherit it and hold tests.
        holding = {name for _, _, name in lowered_flags(base, head, truths)}
        for line, message, name in lowered_flags(base, head, truths, with_helpers=True):
            if subclasses_left_off(trees, new, name, with_tests=name not in holding):
                findings.append((line, message))
    unique = dict.fromkeys(findings)
    return [Tamper(change.path, line, message) for line, message in unique]


def moved_out_of_collection(
    files: Sequence[FileChange],
    trees: TreeView | None,
    floor: Floor,
    moves: Relocations,
    newest: Floor | None = None,
) -> list[Tamper]:
    """A Python test moved to another test module, where pytest collects it less surely than
    it did where it was: into a class pytest does not collect (not `Test*`, given `__init__`
    or `__test__ = False`), under `if False:`, nested in a function. Read with the trees:
    each file's tests, whole, on its side (`runners.collection.levels`)."""
    if trees is None:
        return []
    read: dict[tuple[Side, int], dict[int, int] | None] = {}

    def level(side: Side, index: int, line: int) -> int | None:
        if (side, index) not in read:
            change = files[index]
            path = change.old_path if side == "base" else change.new_path
            module = python_module(trees.text(side, path)) if path else None
            truth: Truth = partial(truth_on_linux, floor=floor, newest=newest)
            known = levels(module, truth, skips=side == "base") if module else None
            read[side, index] = known
        known = read[side, index]
        return None if known is None else known.get(line, 0)

    found: list[Tamper] = []
    for moved in moves.continuations:
        old, new = files[moved.old_file], files[moved.new_file]
        if moved.old_file == moved.new_file or not all(_python_tests(c.path) for c in (old, new)):
            continue
        before = level("base", moved.old_file, moved.old.line.number)
        after = level("head", moved.new_file, moved.new.line.number)
        if before is not None and after is not None and after < before:
            message = f"test {display(moved.new.name, 80)!r} moved where pytest does not collect it"
            found.append(Tamper(new.path, moved.new.line.number, message))
    return found


def _python_tests(path: str) -> bool:
    return is_module(path) and is_test_path(path) and not is_conftest(path)
