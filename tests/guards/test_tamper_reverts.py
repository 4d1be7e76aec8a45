"""`test-tamper` with the history: a change that takes back an earlier commit's change to the
code (a revert, by `git revert` or by hand) takes back the tests that commit wrote, and that is
not tampering. Taking back the tests alone, part of the code, a commit of tests alone, or tests
edited since, still is; so is the same change without the history (a bare diff, a worktree, a
shallow clone that does not reach the commit). Every case runs the real rule over real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app.guards import check_iteration
from tests.guards.conftest import GitRepo, by_rule, config, diff_result

QUERY = """\
def parse(text):
    pairs = [part.split("=", 1) for part in text.split("&") if part]
    return {key: value for key, value in pairs}
"""
# The fix: prototype-like keys are dropped.
QUERY_FIXED = """\
def parse(text):
    pairs = [part.split("=", 1) for part in text.split("&") if part]
    reserved = {"__proto__", "constructor"}
    return {key: value for key, value in pairs if key not in reserved}
"""
TESTS = """\
from pkg.query import parse


def test_parse():
    assert parse("a=1&b=2") == {"a": "1", "b": "2"}
"""
TESTS_FIXED = (
    TESTS
    + """

def test_reserved_keys_are_dropped():
    assert parse("__proto__=1&a=2") == {"a": "2"}
"""
)
REMOVED = ["tests/test_query.py:5 test 'test_reserved_keys_are_dropped' removed"]


def history(repo: GitRepo, *, fix: str = QUERY_FIXED, tests: str = TESTS_FIXED) -> str:
    """A base with the parser and its test, the commit that fixed it with a new test (whose id
    is returned), and an unrelated commit after it."""
    repo.write("README.md", "x\n")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", TESTS)
    repo.commit("parser")
    repo.write("pkg/query.py", fix)
    repo.write("tests/test_query.py", tests)
    fixed = repo.commit("drop reserved keys")
    repo.write("docs/usage.md", "parse it\n")
    repo.commit("docs")
    return fixed


def findings(repo: GitRepo, base: str, head: str) -> list[str]:
    found = by_rule(repo.check(base, head), "test-tamper")
    return [f"{path}:{line} {message}" for path, line, message in found]


def test_git_revert_of_a_fix_takes_its_test_with_it(repo: GitRepo):
    fixed = history(repo)
    base = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", fixed)
    assert findings(repo, base, "HEAD") == []


def test_a_revert_made_by_hand_under_any_message_passes_too(repo: GitRepo):
    """The evidence is the history, not the message: the message could say anything."""
    history(repo)
    base = repo.git("rev-parse", "HEAD")
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", TESTS)
    assert findings(repo, base, repo.commit("simplify the parser")) == []


def test_removing_the_fixs_test_while_the_fix_stays_is_tampering(repo: GitRepo):
    history(repo)
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_query.py", TESTS)
    assert findings(repo, base, repo.commit("drop a test")) == REMOVED


def test_taking_back_part_of_the_fix_does_not_free_its_test(repo: GitRepo):
    """The reserved set goes, but one key is still dropped: the fix's old return line does not
    come back, so its change is not taken back."""
    history(repo)
    base = repo.git("rev-parse", "HEAD")
    half = QUERY_FIXED.replace('    reserved = {"__proto__", "constructor"}\n', "")
    repo.write("pkg/query.py", half.replace("if key not in reserved", 'if key != "__proto__"'))
    repo.write("tests/test_query.py", TESTS)
    assert findings(repo, base, repo.commit("half a revert")) == REMOVED


def test_a_fix_wrapped_in_a_block_and_rewritten_away_is_not_taken_back(repo: GitRepo):
    """The fix wrapped a line in a new block; a rewrite drops the block and does the work
    another way without bringing the old line back: the fix's change is not taken back (its
    behaviour may live on in the rewrite), so its test is still reported."""
    wrapped = QUERY.replace(
        "    return {key: value for key, value in pairs}\n",
        "    with guard():\n        return {key: value for key, value in pairs}\n",
    )
    history(repo, fix="def guard():\n    return open('x')\n\n\n" + wrapped)
    base = repo.git("rev-parse", "HEAD")
    repo.write("pkg/query.py", QUERY.replace("{key: value for key, value in pairs}", "dict(pairs)"))
    repo.write("tests/test_query.py", TESTS)
    assert findings(repo, base, repo.commit("rewrite")) == REMOVED


def test_a_revert_after_later_edits_to_the_same_file_passes(repo: GitRepo):
    """What the file gained and lost since the fix, elsewhere in it, does not matter: the
    change's net effect on the file still undoes the fix's."""
    history(repo)
    later = '"""Query strings."""\n\n\n{}\n\nVERSION = 2\n'
    repo.write("pkg/query.py", later.format(QUERY_FIXED))
    repo.commit("docstring and version")
    base = repo.git("rev-parse", "HEAD")
    repo.write("pkg/query.py", later.format(QUERY))
    repo.write("tests/test_query.py", TESTS)
    assert findings(repo, base, repo.commit("take the fix back")) == []


def test_reverting_a_commit_of_tests_alone_is_tampering(repo: GitRepo):
    """A commit that only added tests changed no code: taking it back takes tests away from
    code that stays."""
    fixed = history(repo, fix=QUERY)
    base = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", fixed)
    assert findings(repo, base, "HEAD") == REMOVED


def test_a_commit_that_only_touched_punctuation_frees_nothing(repo: GitRepo):
    fixed = history(repo, fix=QUERY.replace("if part]", "if part]\n\n\n"))
    base = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", fixed)
    assert findings(repo, base, "HEAD") == REMOVED


def test_a_test_edited_since_the_fix_is_not_the_fixs_test_any_more(repo: GitRepo):
    fixed = history(repo)
    repo.write("tests/test_query.py", TESTS_FIXED.replace('{"a": "2"}', "dict(a='2')"))
    repo.commit("restyle the test")
    base = repo.git("rev-parse", "HEAD")
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", TESTS)
    assert fixed
    assert findings(repo, base, repo.commit("revert by hand")) == REMOVED


def test_a_revert_given_as_a_bare_diff_is_still_a_removal(repo: GitRepo):
    fixed = history(repo)
    base = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", fixed)
    diff = repo.git("diff", base, "HEAD")
    found = by_rule(diff_result(diff + "\n"), "test-tamper")
    assert [m for _, _, m in found] == ["test 'test_reserved_keys_are_dropped' removed"]


def test_an_implementers_worktree_has_no_history_to_show(repo: GitRepo):
    """The per-iteration guard judges a worktree against a tree: it reports the removal."""
    history(repo)
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", TESTS)
    result = check_iteration(repo.path, "HEAD", config())
    assert [m for _, _, m in by_rule(result, "test-tamper")] == [
        "test 'test_reserved_keys_are_dropped' removed"
    ]


def test_a_shallow_clone_that_does_not_reach_before_the_fix_reports_it(
    repo: GitRepo, tmp_path: Path
):
    """Where the clone starts at the fix, its parent is missing: what the fix changed cannot
    be read, so nothing is taken back."""
    fixed = history(repo)
    repo.git("revert", "--no-edit", fixed)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "3", f"file://{repo.path}", str(shallow)],
        env=repo.env,
        check=True,
        capture_output=True,
    )
    clone = GitRepo.__new__(GitRepo)
    clone.path, clone.env = shallow, repo.env
    assert clone.git("rev-parse", "HEAD~2") == fixed
    assert findings(clone, "HEAD~1", "HEAD") == REMOVED
    assert findings(repo, "HEAD~1", "HEAD") == []


LIB = """\
exports.location = function location(url) {
  return url;
};

exports.redirect = function redirect(url) {
  return 302;
};
"""
LIB_FIXED = LIB.replace(
    "  return", "  if (url === 'back') throw new TypeError('\"back\" is not a location');\n  return"
)
SPEC = """\
var lib = require('../lib');

describe('location', function () {
  it('returns the url', function () {
    expect(lib.location('/a')).toBe('/a');
  });
});

describe('redirect', function () {
  it('redirects', function () {
    expect(lib.redirect('/a')).toBe(302);
  });
});
"""
# Each suite gains a last test with a blank line in its body, as Express's tests have.
SPEC_FIXED = """\
var lib = require('../lib');

describe('location', function () {
  it('returns the url', function () {
    expect(lib.location('/a')).toBe('/a');
  });

  it('rejects back', function () {
    var back = function () { lib.location('back'); };

    expect(back).toThrow();
  });
});

describe('redirect', function () {
  it('redirects', function () {
    expect(lib.redirect('/a')).toBe(302);
  });

  it('rejects back', function () {
    var back = function () { lib.redirect('back'); };

    expect(back).toThrow();
  });
});
"""


def test_the_last_tests_of_suites_reverted_in_javascript_pass(repo: GitRepo):
    """A diff may show the `});` above the second removed test deleted and the test's own
    kept: the test is still wholly deleted, in an equally valid reading of the same diff."""
    repo.write("README.md", "x\n")
    repo.write("lib/index.js", LIB)
    repo.write("test/lib.spec.js", SPEC)
    repo.commit("location")
    repo.write("lib/index.js", LIB_FIXED)
    repo.write("test/lib.spec.js", SPEC_FIXED)
    fixed = repo.commit("reject back")
    base = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", fixed)
    assert findings(repo, base, "HEAD") == []
    repo.git("reset", "-q", "--hard", base)
    repo.write("test/lib.spec.js", SPEC)
    assert findings(repo, base, repo.commit("drop the tests")) == [
        "test/lib.spec.js:7 test 'rejects back' removed",
        "test/lib.spec.js:13 test 'rejects back' removed",
    ]


# -- what is not a take-back: the fix's own lines must go, not their like --------------------

GUARDED = """\
def fetch(value, default):
    if value is None:
        return default
    return value


def parse(value, default):
    return value.strip()
"""
GUARDED_FIXED = GUARDED.replace(
    "    return value.strip()\n",
    "    if value is None:\n        return default\n    return value.strip()\n",
)
GUARDED_TESTS = """\
from pkg.lib import parse


def test_parse():
    assert parse(" a ", "d") == "a"
"""
GUARDED_TESTS_FIXED = (
    GUARDED_TESTS + '\n\ndef test_parse_none():\n    assert parse(None, "d") == "d"\n'
)
NONE_REMOVED = ["tests/test_lib.py:5 test 'test_parse_none' removed"]


def guarded(repo: GitRepo, *, lib: str = GUARDED, fixed: str = GUARDED_FIXED) -> str:
    """A base whose last commit fixed `parse(None)` and added its test; the base's id."""
    repo.write("README.md", "x\n")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/lib.py", lib)
    repo.write("tests/test_lib.py", GUARDED_TESTS)
    repo.commit("lib")
    repo.write("pkg/lib.py", fixed)
    repo.write("tests/test_lib.py", GUARDED_TESTS_FIXED)
    return repo.commit("fix parse(None)")


def test_the_same_lines_deleted_from_another_function_take_nothing_back(repo: GitRepo):
    """The fix's lines are in `fetch` too: deleting those (rewriting `fetch`) evens the net
    counts, but the fix's own lines stand, so its test is still reported."""
    base = guarded(repo)
    repo.write(
        "pkg/lib.py",
        GUARDED_FIXED.replace(
            "    if value is None:\n        return default\n    return value\n",
            "    return default if value is None else value\n",
            1,
        ),
    )
    repo.write("tests/test_lib.py", GUARDED_TESTS)
    assert findings(repo, base, repo.commit("tidy fetch")) == NONE_REMOVED


def test_a_revert_of_the_same_fix_still_passes(repo: GitRepo):
    base = guarded(repo)
    repo.git("revert", "--no-edit", base)
    assert findings(repo, base, "HEAD") == []


def test_a_module_rewritten_into_a_new_file_takes_nothing_back(repo: GitRepo):
    """The fixed file is deleted and its code, fix included, written anew into a file git does
    not pair with it: a take-back leaves the file the fix changed, it does not delete it."""
    base = guarded(repo)
    repo.remove("pkg/lib.py")
    repo.write(
        "pkg/library.py",
        '"""Value helpers."""\n\n\ndef fetch(value, default):\n'
        "    return default if value is None else value\n\n\n"
        "def parse(value, default):\n    return default if value is None else value.strip()\n",
    )
    repo.write("tests/test_lib.py", GUARDED_TESTS.replace("pkg.lib", "pkg.library"))
    assert findings(repo, base, repo.commit("rewrite")) == NONE_REMOVED


STRICT = """

def strict_parse(text):
    pairs = [part.split("=", 1) for part in text.split("&") if part]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("every part needs a value")
    return dict(pairs)
"""
STRICT_TEST = """

def test_strict_parse_rejects_bare_keys():
    from pkg.query import strict_parse

    with pytest.raises(ValueError):
        strict_parse("a")
"""


def test_code_moved_to_another_file_is_not_taken_back(repo: GitRepo):
    """The commit added `strict_parse`; the change moves it, word for word, into a new module
    (the old one stays, so git sees no rename): what the commit wrote is written again."""
    fixed = history(repo, fix=QUERY + STRICT, tests="import pytest\n" + TESTS_FIXED + STRICT_TEST)
    base = repo.git("rev-parse", "HEAD")
    repo.write("pkg/query.py", QUERY)
    repo.write("pkg/strict.py", "# Strict parsing.\n" + STRICT)
    repo.write("tests/test_query.py", "import pytest\n" + TESTS)
    assert fixed
    assert findings(repo, base, repo.commit("move strict parsing")) == [
        "tests/test_query.py:6 test 'test_reserved_keys_are_dropped' removed",
        "tests/test_query.py:6 test 'test_strict_parse_rejects_bare_keys' removed",
    ]


def test_a_new_module_reverted_whole_passes(repo: GitRepo):
    """The commit created the file: taking it back deletes the file."""
    repo.write("README.md", "x\n")
    repo.write("pkg/__init__.py", "")
    repo.write("tests/test_query.py", "import pytest\n")
    repo.commit("start")
    repo.write("pkg/query.py", STRICT.lstrip())
    repo.write("tests/test_query.py", "import pytest\n" + STRICT_TEST)
    fixed = repo.commit("strict parsing")
    repo.git("revert", "--no-edit", fixed)
    assert findings(repo, fixed, "HEAD") == []


# -- what is not a change of code: comments, docstrings, a version -----------------------------

MORE_TESTS = GUARDED_TESTS + "\n\ndef test_parse_tabs():\n    assert parse('\\ta\\t', 'd') == 'a'\n"
TABS_REMOVED = ["tests/test_lib.py:5 test 'test_parse_tabs' removed"]


def test_taking_back_a_comment_fix_frees_no_test(repo: GitRepo):
    repo.write("README.md", "x\n")
    repo.write("pkg/lib.py", "# Helpers for parsng values.\n" + GUARDED)
    repo.write("tests/test_lib.py", GUARDED_TESTS)
    repo.commit("lib")
    repo.write("pkg/lib.py", "# Helpers for parsing values.\n" + GUARDED)
    repo.write("tests/test_lib.py", MORE_TESTS)
    base = repo.commit("more tests; fix a typo")
    repo.git("revert", "--no-edit", base)
    assert findings(repo, base, "HEAD") == TABS_REMOVED


def test_taking_back_a_docstring_fix_frees_no_test(repo: GitRepo):
    doc = 'def parse(value, default):\n    """Strip\n    the valeu.\n    """\n    return value\n'
    repo.write("README.md", "x\n")
    repo.write("pkg/lib.py", doc)
    repo.write("tests/test_lib.py", GUARDED_TESTS)
    repo.commit("lib")
    repo.write("pkg/lib.py", doc.replace("valeu", "value, or the default"))
    repo.write("tests/test_lib.py", MORE_TESTS)
    base = repo.commit("more tests; fix a typo")
    repo.git("revert", "--no-edit", base)
    assert findings(repo, base, "HEAD") == TABS_REMOVED


def test_taking_back_a_version_bump_frees_no_test(repo: GitRepo):
    repo.write("README.md", "x\n")
    repo.write("pkg/__init__.py", '__version__ = "1.0.0"\n')
    repo.write("pkg/lib.py", GUARDED)
    repo.write("tests/test_lib.py", GUARDED_TESTS)
    repo.commit("lib")
    repo.write("pkg/__init__.py", '__version__ = "1.0.1"\n')
    repo.write("tests/test_lib.py", MORE_TESTS)
    base = repo.commit("release 1.0.1 with more tests")
    repo.git("revert", "--no-edit", base)
    assert findings(repo, base, "HEAD") == TABS_REMOVED


def test_a_revert_of_a_fix_that_wrapped_a_line_in_a_block_passes(repo: GitRepo):
    """The fix re-indented a line under a new `if`: the revert adding it back at its old indent
    is no move (axios's revert of its header fix)."""
    wrapped = (
        QUERY_FIXED.replace(
            "    return {key: value for key, value in pairs if key not in reserved}\n",
            "    if not reserved.intersection(dict(pairs)):\n"
            "        return {key: value for key, value in pairs}\n"
            '    raise ValueError("reserved key")\n',
        )
        .replace(
            '    reserved = {"__proto__", "constructor"}\n',
            '    reserved = {"__proto__"}\n',
        )
        .replace(
            "{key: value for key, value in pairs if key not in reserved}",
            "{key: value for key, value in pairs}",
        )
    )
    fixed = history(repo, fix=wrapped)
    base = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", fixed)
    assert findings(repo, base, "HEAD") == []


# -- a test whose header a later commit touched: still the fix's test --------------------------

RETYPED = TESTS_FIXED.replace(
    "def test_reserved_keys_are_dropped():",
    "@pytest.mark.filterwarnings('error')\ndef test_reserved_keys_are_dropped() -> None:",
)


def retyped(repo: GitRepo, *, tests: str = RETYPED) -> str:
    """The fix's history, then a later commit (type hints, a marker) that rewrites the header
    and decorators of the fix's test, leaving its body alone; the base's id."""
    history(repo)
    repo.write("tests/test_query.py", "import pytest\n" + tests)
    return repo.commit("type hints for the tests")


def test_a_revert_of_a_fix_whose_test_header_was_retyped_since_passes(repo: GitRepo):
    """Starlette's revert of `pathsend`: the test's body is all the fix's, only its `def` line
    had `-> None` added by a typing commit since. The body is what the test does."""
    base = retyped(repo)
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", "import pytest\n" + TESTS)
    assert findings(repo, base, repo.commit("revert the fix")) == []


def test_a_retyped_test_whose_body_was_edited_since_is_not_the_fixs(repo: GitRepo):
    """A body line from another commit: the test is not the fix's any more."""
    base = retyped(repo, tests=RETYPED.replace('{"a": "2"}', "dict(a='2')"))
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", "import pytest\n" + TESTS)
    assert findings(repo, base, repo.commit("revert the fix")) == [
        "tests/test_query.py:6 test 'test_reserved_keys_are_dropped' removed"
    ]


def test_a_retyped_test_removed_while_the_fix_stays_is_tampering(repo: GitRepo):
    base = retyped(repo)
    repo.write("tests/test_query.py", "import pytest\n" + TESTS)
    assert findings(repo, base, repo.commit("drop a test")) == [
        "tests/test_query.py:6 test 'test_reserved_keys_are_dropped' removed"
    ]


def test_a_test_the_fix_only_rewrote_the_body_of_is_not_the_fixs(repo: GitRepo):
    """The test existed before the fix (its header is older); the fix rewrote its body. A
    take-back of the fix brings the old body back, it does not delete the test."""
    repo.write("README.md", "x\n")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/query.py", QUERY)
    old = TESTS + "\n\ndef test_reserved_keys_are_dropped():\n    assert parse('') == {}\n"
    repo.write("tests/test_query.py", old)
    repo.commit("parser")
    repo.write("pkg/query.py", QUERY_FIXED)
    repo.write("tests/test_query.py", TESTS_FIXED)
    base = repo.commit("drop reserved keys")
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", TESTS)
    assert findings(repo, base, repo.commit("take the fix back, and the test")) == REMOVED


def test_a_case_a_later_commit_added_to_the_fixs_test_is_not_the_fixs(repo: GitRepo):
    """Red-team: a later commit gave the fix's test a case of its own (`prototype`, for its
    own change) by editing the parametrize list only; the body is still the fix's, but the
    test is no longer the fix's alone."""
    one = "    '__proto__',\n"
    tests = TESTS + (
        "\n\n@pytest.mark.parametrize(\n    'key',\n    [\n" + one + "    ],\n)\n"
        "def test_reserved_keys_are_dropped(key):\n    assert parse(key + '=1&a=2') == {'a': '2'}\n"
    )
    history(repo, tests="import pytest\n" + tests)
    also = QUERY_FIXED.replace('"constructor"}', '"constructor", "prototype"}')
    repo.write("pkg/query.py", also)
    repo.write(
        "tests/test_query.py", "import pytest\n" + tests.replace(one, one + "    'prototype',\n")
    )
    base = repo.commit("drop prototype too")
    repo.write("pkg/query.py", QUERY)
    repo.write("tests/test_query.py", "import pytest\n" + TESTS)
    assert findings(repo, base, repo.commit("take the fix back")) == [
        "tests/test_query.py:6 test 'test_reserved_keys_are_dropped' removed"
    ]
