"""Test ids and outcomes from a JUnit XML report (pytest's `--junitxml`, and most runners').

The report is written by code under test, so it is read as untrusted input: bounded in size,
no DTD or entities, and anything unreadable is "no report", never "no tests".
"""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Status = Literal["passed", "failed", "error", "skipped"]
MAX_REPORT_BYTES = 32 * 1024 * 1024
_RANK: Mapping[Status, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


@dataclass(frozen=True)
class JUnitReport:
    """Test id (`classname::name`) -> outcome."""

    tests: Mapping[str, Status]

    def with_status(self, *statuses: Status) -> set[str]:
        return {test for test, status in self.tests.items() if status in statuses}


def read_junit(path: Path) -> JUnitReport | None:
    """The report at `path`, or None when there is none or it cannot be read. A link is not
    followed: the run that wrote the report could point it at any file on the host."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_REPORT_BYTES:
            return None
        data = handle.read(MAX_REPORT_BYTES + 1)
    return parse_junit(data)


def parse_junit(data: bytes) -> JUnitReport | None:
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return None
    try:
        root = ET.fromstring(data)  # noqa: S314 (no DTD or entity can be in it: refused above)
    except ET.ParseError:
        return None
    tests: dict[str, Status] = {}
    for case in root.iter("testcase"):
        name = case.get("name")
        if not name:
            continue
        test = f"{case.get('classname') or case.get('file') or ''}::{name}"
        status = _status(case)
        # A test reported twice (a rerun) counts as its worst outcome.
        if test not in tests or _RANK[status] > _RANK[tests[test]]:
            tests[test] = status
    return JUnitReport(tests)


def _status(case: ET.Element) -> Status:
    tags = {child.tag for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags:
        return "skipped"
    return "passed"
