"""Java's and Kotlin's tests, as JUnit 3, 4 and 5 read them: a method under `@Test` (or
`@ParameterizedTest`, `@RepeatedTest`, `@TestFactory`, `@TestTemplate`, fully qualified or
not), or a JUnit 3 `test` method (`void testX(`, `fun testX(`); `assertEquals` checks;
`@Disabled` and `@Ignore`, JUnit 5's conditions (`@DisabledOnOs`, `@EnabledOnOs`,
`@DisabledIf...`, `@EnabledIf...`, on a JRE or a property), and assumptions
(`Assumptions.assumeTrue(false)`, `Assume.assumeTrue(...)`, `abort()`), which skip the test
when they fail. Two languages, two readers: a Kotlin test file is not a Java one
(`exemptions.paired_files` pairs a test only with source of its own language).

A condition on the operating system is read for Linux x86_64, where the suite runs:
`@DisabledOnOs(WINDOWS)` and `@EnabledOnOs(LINUX)` skip nothing there (`_elsewhere`). Any
other condition, and any assumption but one on the platform, may skip there.
"""

from __future__ import annotations

import re

from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either

_VISIBILITY = r"(?:public\s+|protected\s+|private\s+)?"
# An annotation, maybe fully qualified: `@Disabled`, `@org.junit.jupiter.api.Disabled`.
_QUALIFIED = r"@(?:[A-Za-z_$][\w$]*\.)*"
_DISABLED = Marker("decorator", re.compile(rf"{_QUALIFIED}(?:Disabled|Ignore)\b(?!\.)"))
_DISABLING = re.compile(rf"^{_QUALIFIED}(?:Disabled|Ignore)\b(?!\.)")
_CONDITION = re.compile(
    rf"{_QUALIFIED}(?P<how>Disabled|Enabled)(?P<on>On\w*|If\w*|For\w*|In\w*)\b(?P<args>.*)"
)
_ASSUMPTION = re.compile(
    r"(?<![\w$])(?:(?:[\w$]+\.)*(?:Assumptions|Assume)\.)?"
    r"(?:assume(?P<how>True|False|That|NotNull|NoException)\s*\((?P<args>.*)|abort\s*\()"
)
_TEST_ANNOTATION = re.compile(
    rf"{_QUALIFIED}(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b(?!\.)"
)
# Operating systems JUnit names, and what Linux x86_64 is called in them.
_OS = re.compile(r"\b(LINUX|WINDOWS|MAC|SOLARIS|FREEBSD|OPENBSD|AIX|OTHER)\b")
_WINDOWS_OR_MAC = re.compile(r"(?i)windows|\bmac|osx|darwin|solaris|bsd|aix")
_LINUX = re.compile(r"(?i)linux")
_SYNTAX = Syntax(
    comment=("//",),
    block=(("/*", "*/"),),
    spanning=('"""',),
    quotes=('"',),
    skip=re.compile(r"'(?:\\.|[^\\'])'"),
)


def _elsewhere(text: str) -> bool:
    """A JUnit condition or assumption that skips only off Linux x86_64."""
    condition = _CONDITION.search(text)
    if condition is not None:
        return _os_condition_elsewhere(condition["how"], condition["on"], condition["args"])
    assumption = _ASSUMPTION.search(text)
    if assumption is not None and assumption["how"] in ("True", "False"):
        holds = _platform(assumption["args"] or "")
        # `assumeTrue(c)` skips where `c` is false; `assumeFalse(c)` where it is true.
        return holds is (assumption["how"] == "True")
    return False


def _os_condition_elsewhere(how: str, on: str, args: str) -> bool:
    if on != "OnOs":
        return False
    named = set(_OS.findall(args))
    arches = set(re.findall(r"\"([^\"]+)\"", args))
    if not named and not arches:
        return False
    here = ("LINUX" in named or not named) and (not arches or bool(arches & {"x86_64", "amd64"}))
    # Disabled here when it names Linux (and this machine); enabled here only when it does.
    return not here if how == "Disabled" else here


def _platform(args: str) -> bool | None:
    """Whether a condition on the platform holds on Linux: True, False, or None when it is
    about something else (or cannot be read). `!` and literals read too."""
    text = args.strip().rstrip(";").strip()
    text = text[: text.rfind(")")] if text.endswith(")") else text
    text = text.split(",")[0].strip()
    negated = text.startswith("!")
    text = text.lstrip("!").strip()
    if text in ("true", "false"):
        value: bool | None = text == "true"
    elif _WINDOWS_OR_MAC.search(text) and not _LINUX.search(text):
        value = False
    elif _LINUX.search(text) and not _WINDOWS_OR_MAC.search(text):
        value = True
    else:
        return None
    return not value if negated else value


def _markers() -> tuple[Marker, ...]:
    return (
        _DISABLED,
        Marker("decorator", _CONDITION),
        Marker("body", _ASSUMPTION),
    )


JAVA = Language(
    name="java",
    suffixes=(".java",),
    comment="//",
    headers=(re.compile(rf"^\s*{_VISIBILITY}void\s+(?P<n>test\w*)\s*\("),),
    assertions=either(*CHECKS),
    markers=_markers(),
    skipping_decorator=_DISABLING,
    attributed=re.compile(
        r"^\s*(?:@[\w$.]+(?:\([^)]*\))?\s+)*"
        r"(?:(?:public|protected|private|static|final|synchronized|abstract|default)\s+)*"
        r"(?:<[^>]*>\s*)?[\w$.]+(?:\s*<[^()]*>)?(?:\s*\[\s*\])*\s+(?P<n>[A-Za-z_$][\w$]*)\s*\("
    ),
    attribute=_TEST_ANNOTATION,
    between=re.compile(r"^(?:@|//|/\*|\*|\)|[\w$.]+\s*=|\"|\})"),
    elsewhere=_elsewhere,
    syntax=_SYNTAX,
)

KOTLIN = Language(
    name="kotlin",
    suffixes=(".kt",),
    comment="//",
    headers=(re.compile(rf"^\s*{_VISIBILITY}fun\s+(?P<n>test\w*)\s*\("),),
    assertions=either(*CHECKS),
    markers=_markers(),
    skipping_decorator=_DISABLING,
    attributed=re.compile(
        r"^\s*(?:@[\w$.]+(?:\([^)]*\))?\s+)*"
        r"(?:(?:public|protected|private|internal|override|open|suspend|final)\s+)*"
        r"fun\s+(?:<[^>]*>\s*)?(?P<n>`[^`]+`|[A-Za-z_$][\w$]*)\s*\("
    ),
    attribute=_TEST_ANNOTATION,
    between=re.compile(r"^(?:@|//|/\*|\*|\)|[\w$.]+\s*=|\"|\})"),
    elsewhere=_elsewhere,
    syntax=Syntax(
        comment=("//",), block=(("/*", "*/"),), nested=True, spanning=('"""',), quotes=('"',)
    ),
)
