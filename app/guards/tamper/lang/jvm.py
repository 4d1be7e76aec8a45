"""Java's and Kotlin's tests, as JUnit reads them: a `test` method (`void testX(`, `fun
testX(`), `assertEquals` checks, `@Disabled` and `@Ignore`. Two languages, two readers: a
Kotlin test file is not a Java one (`exemptions.paired_files` pairs a test
only with source of its own language)."""

from __future__ import annotations

import re

from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either

_VISIBILITY = r"(?:public\s+|protected\s+|private\s+)?"
_DISABLED = Marker("decorator", re.compile(r"@Disabled\b|@Ignore\b"))
_DISABLING = re.compile(r"^@Disabled\b|^@Ignore\b")

JAVA = Language(
    name="java",
    suffixes=(".java",),
    comment="//",
    headers=(re.compile(rf"^\s*{_VISIBILITY}void\s+(?P<n>test\w*)\s*\("),),
    assertions=either(*CHECKS),
    markers=(_DISABLED,),
    skipping_decorator=_DISABLING,
)

KOTLIN = Language(
    name="kotlin",
    suffixes=(".kt",),
    comment="//",
    headers=(re.compile(rf"^\s*{_VISIBILITY}fun\s+(?P<n>test\w*)\s*\("),),
    assertions=either(*CHECKS),
    markers=(_DISABLED,),
    skipping_decorator=_DISABLING,
)
