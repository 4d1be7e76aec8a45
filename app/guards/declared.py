"""Which measured test changes a model declared on purpose (`### TEST CHANGES`).

A test the change makes fail, removes, skips or renames is refused as `test-tamper` unless the
submission declared it, with a reason; a declared one is disclosed instead — in the pull
request's body and the `ourobot/guards` summary, under a heading a reviewer cannot miss — and a
person decides, as for every pull request. Declarations name a test file
(`tests/test_calc.py`), a test in it (`tests/test_calc.py::CalcTest::test_mul`), or a test by
its name alone (`test_mul`); pytest's report names tests `tests.test_calc.CalcTest::test_mul`,
so both are compared as dotted names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

_PY = re.compile(r"\.py(?=::|$)")
TRAILER = "Ourobot-Test-Change:"
Finding = TypeVar("Finding")


@dataclass(frozen=True)
class Declared:
    """A test the model says its change alters on purpose, and why (data, never trusted)."""

    test: str
    why: str


def from_messages(messages: Iterable[str]) -> list[Declared]:
    """The declarations in commit messages' `Ourobot-Test-Change: <test>: <why>` trailers."""
    found: list[Declared] = []
    for message in messages:
        for line in message.splitlines():
            if line.startswith(TRAILER):
                test, _, why = line[len(TRAILER) :].strip().partition(": ")
                if test and why:
                    found.append(Declared(test.strip(), why.strip()))
    return list(dict.fromkeys(found))


def dotted(name: str) -> str:
    """`tests/test_calc.py::CalcTest::test_mul` and `tests.test_calc.CalcTest::test_mul`
    alike: `tests.test_calc.CalcTest.test_mul`."""
    text = _PY.sub("", name.strip().replace("\\", "/"))
    return text.replace("/", ".").replace("::", ".").strip(".")


def covering(test: str, declared: Sequence[Declared]) -> Declared | None:
    """The declaration that covers a measured test id, if any."""
    measured = dotted(test)
    for entry in declared:
        said = dotted(entry.test)
        if said and (
            measured == said or measured.startswith(said + ".") or measured.endswith("." + said)
        ):
            return entry
    return None


def covering_file(path: str, declared: Sequence[Declared]) -> Declared | None:
    """The declaration that names the test file `path`, or a test in it."""
    module = dotted(path)
    for entry in declared:
        said = dotted(entry.test)
        if said and (said == module or said.startswith(module + ".")):
            return entry
    return None


def split(tests: Sequence[str], declared: Sequence[Declared]) -> tuple[list[str], list[Declared]]:
    """(the tests no declaration covers, the declarations that covered the others)."""
    undeclared: list[str] = []
    used: list[Declared] = []
    for test in tests:
        entry = covering(test, declared)
        if entry is None:
            undeclared.append(test)
        else:
            used.append(Declared(test, entry.why))
    return undeclared, used


def waive_static(
    findings: Sequence[Finding],
    declared: Sequence[Declared],
    describe: Callable[[Finding], tuple[str, str | None, str]],
) -> tuple[list[Finding], list[Declared]]:
    """(the findings that stand, the disclosures the others became): a `test-tamper` finding on
    a test file a declaration covers is disclosed with the declaration's reason instead.
    `describe` gives a finding's (rule, path, text): a guard's violation or a loop's refusal."""
    kept: list[Finding] = []
    shown: list[Declared] = []
    for finding in findings:
        rule, path, text = describe(finding)
        entry = covering_file(path or "", declared) if rule == "test-tamper" else None
        if entry is None:
            kept.append(finding)
        else:
            shown.append(Declared(f"{path}: {text}", entry.why))
    return kept, shown
