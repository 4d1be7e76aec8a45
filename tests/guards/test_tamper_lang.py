"""The language readers of `test-tamper` (`app.guards.tamper.lang`): a file's reader is found by
its name, each reader reads its own language only, and a file of no known language is read by
all of them (as the rule read every file before it had readers), but for the skip markers that
mean something else outside their language."""

from __future__ import annotations

import pytest

from app.guards.changes import Line
from app.guards.tamper.definitions import definitions
from app.guards.tamper.lang import MIXED, plain_comment, reader_for
from app.guards.tamper.lang.go import GO
from app.guards.tamper.lang.javascript import JAVASCRIPT
from app.guards.tamper.lang.jvm import JAVA, KOTLIN
from app.guards.tamper.lang.python import PYTHON
from app.guards.tamper.lang.ruby import RUBY
from app.guards.tamper.lang.rust import RUST


def run(*texts: str) -> list[Line]:
    return [Line(n, text, n) for n, text in enumerate(texts, 1)]


@pytest.mark.parametrize(
    ("path", "reader"),
    [
        ("tests/test_a.py", PYTHON),
        ("typings/a.pyi", PYTHON),
        ("test/a.spec.mts", JAVASCRIPT),
        ("pkg/a_test.go", GO),
        ("spec/a_spec.rb", RUBY),
        ("src/test/java/ATest.java", JAVA),
        ("src/test/kotlin/ATest.kt", KOTLIN),
        ("tox.ini", MIXED),
        ("Tests/ATests.swift", MIXED),
        ("", MIXED),
    ],
)
def test_a_file_is_read_by_the_reader_of_its_language(path: str, reader: object):
    assert reader_for(path) is reader


@pytest.mark.parametrize(
    ("header", "name", "language"),
    [
        ("def test_parse(tmp_path):", "test_parse", "python"),
        ("  it.only('parses', () => {", "parses", "javascript"),
        ("func TestParse(t *testing.T) {", "TestParse", "go"),
        ('  it "parses" do', "parses", "ruby"),
        ("fn test_parse() {", "test_parse", "rust"),
        ("  public void testParse() {", "testParse", "java"),
        ("  fun testParse() {", "testParse", "kotlin"),
    ],
)
def test_each_reader_reads_its_own_headers_and_no_other(header: str, name: str, language: str):
    readers = [PYTHON, JAVASCRIPT, GO, RUBY, RUST, JAVA, KOTLIN]
    owners = [reader.name for reader in readers if reader.test_name(header) == name]
    assert owners == [language]
    # A file of no known language reads it, with the body rules of the language it is in.
    assert MIXED.test_name(header) == name
    assert MIXED.at(header).name == language


def test_rspec_reads_its_examples_with_parentheses_too():
    assert RUBY.test_name("  it('parses') do") == "parses"
    assert RUBY.test_name('  xit("parses") do') == "parses"
    assert RUBY.skip('  xit("parses") do') == "defining"


def test_a_python_test_in_a_file_of_no_known_language_keeps_pythons_body_and_cases():
    lines = run(
        '@pytest.mark.parametrize("a", [1, 2, 3])',
        "def test_a(a):",
        "    assert a",
        "",
        "def helper():",
    )
    (python,) = definitions(lines, None, PYTHON)
    (mixed,) = definitions(lines, None, MIXED)
    assert (mixed.body, mixed.cases, mixed.end) == (python.body, python.cases, python.end)
    assert (mixed.body, mixed.cases) == (("assert a",), 3)
    # Read as JavaScript, the same lines define no test at all.
    assert definitions(lines, None, JAVASCRIPT) == []


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("tests/test_a.py", "@pytest.mark.skip(reason='x')", "decorator"),
        ("tests/test_a.py", "pytestmark = pytest.mark.skip", "module"),
        ("a_test.go", "\tt.Skip('slow')", "body"),
        ("test/a.test.js", "it.skip('x', () => {", "defining"),
        ("test/a.test.js", "  this.skip()", "body"),
        ("spec/a_spec.rb", "    skip", "body"),
        # Not skips in another language's file: a Python `this.skip()` is a call of its own.
        ("tests/test_a.py", "    this.skip()", None),
        ("spec/a_spec.rb", "it.skip('x', () => {", None),
    ],
)
def test_a_skip_marker_is_read_in_its_own_language(path: str, text: str, kind: str | None):
    assert reader_for(path).skip(text) == kind


def test_a_file_of_no_known_language_reads_only_the_markers_no_language_mistakes():
    # Unmistakable in any file, as before the readers: read.
    assert MIXED.skip("@pytest.mark.skip(reason='x')") == "decorator"
    assert MIXED.skip("it.skip('x', () => {") == "defining"
    # RSpec's bare `skip` and Mocha's `this.skip()` mean something else elsewhere: not read.
    assert MIXED.skip("    skip") is None
    assert MIXED.skip("  this.skip()") is None
    assert RUBY.skip("    skip") == "body"


@pytest.mark.parametrize(
    ("path", "text", "plain"),
    [
        ("a.py", "# why", True),
        ("a.rb", "# why", True),
        ("a.go", "// why", True),
        ("a.go", "# why", False),
        ("a.go", "//go:generate x", False),
        ("a.c", "#include <x.h>", False),
        ("tox.ini", "// why", True),
    ],
)
def test_a_plain_comment_is_read_by_the_languages_line_comment(path: str, text: str, plain: bool):
    assert plain_comment(text, path) is plain


def test_each_language_checks_with_its_own_assertions():
    assert GO.checks("\trequire.NoError(t, err)")
    assert not JAVASCRIPT.checks("const path = require.resolve('../x.js')")
    assert JAVASCRIPT.checks("  t.is(a, b)")
    assert not PYTHON.checks("    console.print(t, width=40)")
    assert RUBY.checks("    value.must_equal 1")
    # Read by every reader, a line of no known language checks where any of them says so.
    assert MIXED.checks("\trequire.NoError(t, err)") and MIXED.checks("  t.is(a, b)")
