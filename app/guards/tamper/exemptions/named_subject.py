"""Removed tests named after their gone subject (`exemptions.set_aside`, rule 7).

The test's name, or a suite's header around it, spells in a row the words of a distinctive
name it uses (the class attributes of its suites included) that is gone as rule 2 reads it
(`exemptions.subject_gone`); or every case of one of its `parametrize` lists is such a name.
What a test is about is what its name says, as for a file (`exemptions.file_subject`);
whatever else it calls on the way is setup.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from app.guards.tamper.code_names import References
from app.guards.tamper.conditions.skip_conditions import dotted_name
from app.guards.tamper.definitions import Definition
from app.guards.tamper.exemptions.evidence import SUBJECT, Evidence, decorators, suites


def named_subject_gone(ev: Evidence, index: int, definition: Definition, found: References) -> bool:
    """Whether the test is named after a gone subject it uses: a distinctive name the
    change deletes from source code, gone from the whole head tree and not renamed
    (`Evidence.is_gone`), whose words the test's name, or the header of a suite around it, spells
    in a row (`test_ordered_multidict_is_hashable` or `class TestOrderedMultiDict` for
    `_OrderedMultiDict`). What a test is about is what its name says, as for a file
    (rule 3); whatever else it calls on the way (a `MultiDict` it compares with) is setup.
    The name is used by the test, its helpers, or the class attributes of a suite around
    it (`storage_class = _OrderedMultiDict`)."""
    lines = ev.wholly_deleted(index, definition)
    if lines is None:
        return False
    titles = [definition.name, *(lines[s] for s in suites(lines, definition))]
    used = found.exercised | found.named | ev.suite_uses(index, definition)
    named = {n for n in used & ev.removed.keys() if any(spells(title, n) for title in titles)}
    subjects = {n for n in named if ev.is_gone(n, reading=SUBJECT)}
    position = definition.line.number - 1
    for cases in _parametrized_names(decorators(lines, position)):
        # Every case of a parametrize list a gone subject (`[WatchGodReload]`): the
        # cases name what the test runs on, as its name would.
        if cases <= ev.removed.keys() and all(ev.is_gone(n, reading=SUBJECT) for n in cases):
            subjects |= cases
    # As in rule 2: a deleted name it exercises that lives on (renamed, or elsewhere)
    # means code it tested is still there.
    return bool(subjects) and all(
        n in subjects or ev.went_with(n, subjects) for n in found.exercised & ev.removed.keys()
    )


def _parametrized_names(lines: Sequence[str]) -> list[set[str]]:
    """The values of each literal `parametrize` list of a test's decorators whose every case
    is a name (`[WatchGodReload]`, `[mod.Legacy, Old]`), as the names' last parts."""
    found: list[set[str]] = []
    for text in "\n".join(lines).split("\n@"):
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
