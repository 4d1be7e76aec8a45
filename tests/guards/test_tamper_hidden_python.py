"""Tests hidden inside Python itself (issue 15): a module or class body wrapped in a string,
`__test__ = False` inherited from a helper base, `@property` (or a fixture, a context
manager) on a test, `globals().pop("test_x")`, a case given skip marks or a `parametrize`
list emptied, an assertion moved into an inner function never called, under a loop over
nothing or made a tautology, and syntax newer than the interpreter ourobot runs on. Each
bypass is reported with the whole trees (and from a bare diff where the diff shows it); each
near miss passes."""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Callable

import pytest

from app.guards.tamper.lang.lexing import masked
from app.guards.tamper.lang.python import PYTHON, parse
from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper_messages

PATH = "tests/test_calc.py"
FLAT = """import pytest


def test_adds():
    assert add(1, 2) == 3


def test_adds_negative():
    assert add(-1, -2) == -3
"""
CLASS = """import pytest


class TestCalc:
    def test_adds(self):
        assert add(1, 2) == 3

    def test_adds_negative(self):
        assert add(-1, -2) == -3
"""
CASES = """import pytest


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 2),
        (3, 4),
    ],
)
def test_adds(a, b):
    assert add(a, b) == a + b
"""
FIRST = "def test_adds():\n    assert add(1, 2) == 3"
HELPER = "tests/helpers.py"


def _replaced(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _inherits(text: str) -> str:
    text = _replaced(text, "class TestCalc:", "class TestCalc(Base):")
    return _replaced(text, "import pytest\n", "import pytest\n\nfrom tests.helpers import Base\n")


# (files at the base, files at the head, the message reported, whether a bare diff shows it:
# True, or the message it gives instead)
BYPASSES: dict[str, tuple[dict[str, str], dict[str, str | None], str, bool | str]] = {
    "module body in a string": (
        {PATH: FLAT},
        {PATH: _replaced(FLAT, "\n\ndef test_adds():", '\n\n"""\ndef test_adds():') + '"""\n'},
        "test 'test_adds' hidden in a string or a comment",
        True,
    ),
    "class body in a string": (
        {PATH: CLASS},
        {PATH: _replaced(CLASS, "    def test_adds", "    '''\n    def test_adds") + "    '''\n"},
        "test 'test_adds_negative' hidden in a string or a comment",
        True,
    ),
    "__test__ = False inherited from a helper base": (
        {PATH: CLASS, HELPER: "class Base:\n    __test__ = False\n"},
        {PATH: _inherits(CLASS)},
        "test class 'TestCalc' no longer collected (its base 'Base' hides it)",
        False,
    ),
    "__init__ inherited from a helper base": (
        {
            PATH: CLASS,
            HELPER: "class Root:\n    def __init__(self):\n        pass\n\n\n"
            "class Base(Root):\n    x = 1\n",
        },
        {PATH: _inherits(CLASS)},
        "test class 'TestCalc' no longer collected (its base 'Base' hides it)",
        False,
    ),
    "a helper base made __test__ = False": (
        {PATH: _inherits(CLASS), HELPER: "class Base:\n    x = 1\n"},
        {HELPER: "class Base:\n    x = 1\n    __test__ = False\n"},
        "test class 'Base' no longer collected (__test__ = False)",
        True,
    ),
    "@property on a test": (
        {PATH: CLASS},
        {
            PATH: _replaced(
                CLASS, "    def test_adds(self)", "    @property\n    def test_adds(self)"
            )
        },
        "test 'TestCalc::test_adds' no longer collected (@property makes it no function)",
        True,
    ),
    "@pytest.fixture on a test": (
        {PATH: FLAT},
        {PATH: _replaced(FLAT, "def test_adds():", "@pytest.fixture\ndef test_adds():")},
        "test 'test_adds' no longer collected (@fixture makes it no function)",
        True,
    ),
    "@contextmanager on a test": (
        {PATH: FLAT},
        {PATH: _replaced(FLAT, "def test_adds():", "@contextlib.contextmanager\ndef test_adds():")},
        "test 'test_adds' no longer collected (@contextmanager makes it no function)",
        True,
    ),
    'globals().pop("test_adds")': (
        {PATH: FLAT},
        {PATH: FLAT + '\n\nglobals().pop("test_adds")\n'},
        "test 'test_adds' rebound",
        "test names may be rebound at import (setattr, globals, exec)",
    ),
    "del on the module object": (
        {PATH: FLAT},
        {PATH: FLAT + "\n\nmodule = sys.modules[__name__]\ndel module.test_adds\n"},
        "test 'test_adds' rebound",
        False,
    ),
    "pytest.param(marks=skip) on a case that ran": (
        {PATH: CASES},
        {
            PATH: _replaced(
                CASES, "        (1, 2),", "        pytest.param(1, 2, marks=pytest.mark.skip),"
            )
        },
        "parametrized case of test 'test_adds' skipped (marks)",
        True,
    ),
    "pytest.param(marks=[xfail]) on a case that ran": (
        {PATH: CASES},
        {
            PATH: _replaced(
                CASES,
                "        (1, 2),",
                '        pytest.param(1, 2, marks=[pytest.mark.xfail(reason="x")]),',
            )
        },
        "parametrized case of test 'test_adds' skipped (marks)",
        True,
    ),
    "a parametrize list emptied": (
        {PATH: CASES},
        {PATH: _replaced(CASES, "        (1, 2),\n        (3, 4),\n", "")},
        "test 'test_adds' left with no parametrized cases (pytest skips it)",
        False,
    ),
    "a parametrize list named at the top emptied": (
        {
            PATH: CASES.replace("@pytest", "CASES = [(1, 2), (3, 4)]\n\n\n@pytest").replace(
                "[\n        (1, 2),\n        (3, 4),\n    ]", "CASES"
            )
        },
        {
            PATH: CASES.replace("@pytest", "CASES = []\n\n\n@pytest").replace(
                "[\n        (1, 2),\n        (3, 4),\n    ]", "CASES"
            )
        },
        "test 'test_adds' left with no parametrized cases (pytest skips it)",
        False,
    ),
    "an assertion moved into an inner function never called": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT, FIRST, "def test_adds():\n    def check():\n        assert add(1, 2) == 3"
            )
        },
        "assertions put under a function that is never called",
        True,
    ),
    "an assertion under a loop over nothing": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT, FIRST, "def test_adds():\n    for _ in ():\n        assert add(1, 2) == 3"
            )
        },
        "assertions put under a condition that never holds",
        True,
    ),
    "an assertion made isinstance(x, object)": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT, "    assert add(1, 2) == 3", "    assert isinstance(add(1, 2), object)"
            )
        },
        "assertion that always holds added",
        True,
    ),
    "an assertion made len(x) >= 0": (
        {PATH: FLAT},
        {PATH: _replaced(FLAT, "    assert add(1, 2) == 3", "    assert len(str(add(1, 2))) >= 0")},
        "assertion that always holds added",
        True,
    ),
    "newer syntax above a test moved out of collection": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT,
                FIRST,
                "def same[T](x: T) -> T:\n    return x\n\n\nclass Holder:\n"
                "    def test_adds(self):\n        assert add(1, 2) == 3",
            )
        },
        "test 'test_adds' no longer collected",
        False,
    ),
    "a type alias above a test made a property": (
        {PATH: CLASS},
        {
            PATH: _replaced(
                _replaced(CLASS, "import pytest\n", "import pytest\n\ntype Number = int\n"),
                "    def test_adds(self)",
                "    @property\n    def test_adds(self)",
            )
        },
        "test 'TestCalc::test_adds' no longer collected (@property makes it no function)",
        True,
    ),
}

NEAR_MISSES = {
    "a string that merely holds a test's source": (
        {PATH: FLAT},
        {
            PATH: FLAT + '\n\ndef test_pytester(pytester):\n    pytester.makepyfile("""\n'
            '        def test_adds():\n            assert 1\n    """)\n'
            "    pytester.runpytest().assert_outcomes(passed=1)\n"
        },
    ),
    "a pytester string edited": (
        {PATH: FLAT + '\n\nSOURCE = """\ndef test_inner():\n    x = 1\n"""\n'},
        {PATH: FLAT + '\n\nSOURCE = """\ndef test_other():\n    x = 2\n"""\n'},
    ),
    "a Windows-only skip on a case": (
        {PATH: CASES},
        {
            PATH: _replaced(
                CASES,
                "        (1, 2),",
                "        pytest.param(1, 2, marks=pytest.mark.skipif("
                'sys.platform == "win32", reason="x")),',
            )
        },
    ),
    "a Windows-only skip": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT,
                "def test_adds():",
                '@pytest.mark.skipif(sys.platform == "win32", reason="x")\ndef test_adds():',
            )
        },
    ),
    "a moved test file": (
        {PATH: FLAT},
        {PATH: None, "tests/unit/test_calc.py": FLAT},
    ),
    "a new skipped case": (
        {PATH: CASES},
        {
            PATH: _replaced(
                CASES,
                "        (3, 4),",
                "        (3, 4),\n        pytest.param(5, 6, marks=pytest.mark.skip),",
            )
        },
    ),
    "a case's skip taken off": (
        {
            PATH: _replaced(
                CASES, "        (1, 2),", "        pytest.param(1, 2, marks=pytest.mark.skip),"
            )
        },
        {PATH: CASES},
    ),
    "a property on a helper class": (
        {PATH: CLASS},
        {
            PATH: CLASS
            + "\n\nclass Helper:\n    @property\n    def value(self):\n        return 1\n"
        },
    ),
    "a new fixture": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT,
                "def test_adds():",
                "@pytest.fixture\ndef numbers():\n    return [1]\n\n\ndef test_adds():",
            )
        },
    ),
    "a test class given a library's base": (
        {PATH: CLASS},
        {
            PATH: _replaced(
                _replaced(CLASS, "class TestCalc:", "class TestCalc(Mixin):"),
                "import pytest\n",
                "import pytest\nfrom library import Mixin\n",
            )
        },
    ),
    "a test class given a helper base that hides nothing": (
        {PATH: CLASS, HELPER: "class Base:\n    x = 1\n"},
        {PATH: _inherits(CLASS)},
    ),
    "a unittest base whose __init__ pytest ignores": (
        {
            PATH: CLASS,
            HELPER: "import unittest\n\n\nclass Base(unittest.TestCase):\n"
            "    def __init__(self, *a):\n        super().__init__(*a)\n",
        },
        {PATH: _inherits(CLASS)},
    ),
    "an inner function that is called": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT,
                FIRST,
                "def test_adds():\n    def check():\n        assert add(1, 2) == 3\n\n    check()",
            )
        },
    ),
    "a loop over cases": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT,
                FIRST,
                "def test_adds():\n    for a in [1, 2]:\n        assert add(a, 2) == a + 2",
            )
        },
    ),
    "an isinstance check of a real type": (
        {PATH: FLAT},
        {
            PATH: _replaced(
                FLAT, "    assert add(1, 2) == 3", "    assert isinstance(add(1, 2), int)"
            )
        },
    ),
    "newer syntax in a new test": (
        {PATH: FLAT},
        {PATH: FLAT + '\n\ndef test_f():\n    d = {"a": 1}\n    assert f"{d["a"]}" == "1"\n'},
    ),
    "a type alias added": (
        {PATH: FLAT},
        {PATH: _replaced(FLAT, "import pytest\n", "import pytest\n\ntype Number = int\n")},
    ),
    "a generic helper added": (
        {PATH: FLAT},
        {PATH: FLAT + "\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n"},
    ),
}


def _change(head: dict[str, str | None]) -> Callable[[GitRepo], None]:
    def change(repo: GitRepo) -> None:
        for path, text in head.items():
            if text is None:
                repo.remove(path)
            else:
                repo.write(path, text)

    return change


def _bare(repo: GitRepo, files: dict[str, str], change: Callable[[GitRepo], None]) -> list[str]:
    """`test-tamper`'s messages on the change as a bare diff, exactly as git writes it."""
    for path, content in {"README.md": "x\n", **files}.items():
        repo.write(path, content)
    base = repo.commit("base")
    change(repo)
    head = repo.commit("change")
    diff = subprocess.run(
        ["git", "diff", base, head], cwd=repo.path, env=repo.env, capture_output=True, check=True
    ).stdout.decode()
    return [message for _, _, message in by_rule(diff_result(diff), "test-tamper")]


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_a_bypass_is_reported(repo: GitRepo, name: str):
    base, head, message, _ = BYPASSES[name]
    assert message in tamper_messages(repo, base, _change(head))


@pytest.mark.parametrize("name", sorted(n for n, case in BYPASSES.items() if case[3]))
def test_a_bypass_the_diff_shows_is_reported_from_a_bare_diff(repo: GitRepo, name: str):
    base, head, message, shown = BYPASSES[name]
    found = _bare(repo, base, _change(head))
    if isinstance(shown, str):
        message = shown
    # The bare diff's messages may name less (no trees to read the whole module from).
    assert any(m == message or m.split(" (")[-1] == message.split(" (")[-1] for m in found)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_a_near_miss_passes(repo: GitRepo, name: str):
    base, head = NEAR_MISSES[name]
    assert tamper_messages(repo, base, _change(head)) == []


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_a_near_miss_passes_from_a_bare_diff(repo: GitRepo, name: str):
    base, head = NEAR_MISSES[name]
    assert _bare(repo, base, _change(head)) == []


def test_newer_syntax_is_read_past_and_keeps_the_tests_it_defines():
    source = (
        "type Number = int\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n\n\n"
        "class TestIt[T]:\n    def test_a(self):\n        assert 1\n"
    )
    module = parse(source)
    names = {n.name for n in ast.walk(module) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert {"first", "TestIt", "test_a"} <= names
    # A statement it cannot read may bind anything: it stands as an `import *`.
    unreadable = parse('d = {}\nx = f"{d["a"]}"\n\n\ndef test_b():\n    pass\n')
    assert any(isinstance(n, ast.ImportFrom) and n.names[0].name == "*" for n in unreadable.body)
    with pytest.raises(SyntaxError):
        parse("def test_c(:\n")


def test_the_lexer_masks_the_lines_inside_strings_and_block_comments():
    lines = ['x = "a # b"', '"""', "def test_a():", '"""', "def test_b():", "# '''", "y = 1"]
    assert masked(lines, PYTHON.syntax) == {2, 3}  # type: ignore[arg-type]


def test_the_lexer_reads_an_escaped_slash_and_a_regex_quote_as_code():
    from app.guards.tamper.lang.javascript import JAVASCRIPT
    from app.guards.tamper.lang.ruby import RUBY

    script = ["x.replace(/\\/*$/, '')", "it('a', () => {", "/*", "it('b')", "*/"]
    assert masked(script, JAVASCRIPT.syntax) == {3, 4}  # type: ignore[arg-type]
    ruby = ["assert_match(/weren't found/, out)", 'it "a" do', "x = <<~RUBY", 'it "b" do', "RUBY"]
    assert masked(ruby, RUBY.syntax) == {3, 4}  # type: ignore[arg-type]
