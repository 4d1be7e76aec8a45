"""`test-tamper`'s removed-with-its-subject exemption needs positive evidence that the subject
is gone: its name nowhere in the head tree, every file searched (prose counts only where it
defines the name), its body nowhere in what the change adds. A subject moved into a file the
rule cannot read as code (Cython, Lua, a script without a suffix, a config entry) is still
there. And when git cannot read the trees, the rule cannot decide, so it fails with the
reason: a failed read is never taken for an absent file."""

from __future__ import annotations

import os

import pytest

from app.guards.repo import GitFailed, GitTrees, changes_between, isolated_git, resolve
from tests.guards.conftest import GitRepo, by_rule
from tests.guards.test_cli_guards import ourobot
from tests.guards.test_tamper_subjects import (
    BASE,
    LEGACY,
    TESTS_WITHOUT_LEGACY,
    VENV,
    VENV_TESTS,
    WITHOUT_LEGACY,
    Change,
    drop_legacy,
    tamper,
)

REMOVED = "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
LEGACY_BODY = LEGACY.split("\n\n\n", 2)[2]  # `def legacy_parse_dates(text): ...`
LUA = """\
local M = {}

function M.legacy_parse_dates(text)
  local d, m, y = text:match("(%d+)/(%d+)/(%d+)")
  return {{tonumber(y), tonumber(m), tonumber(d)}}
end

return M
"""
CUT = (
    "\n\n\ndef virtualenv_no_global():\n    if _running_under_venv():\n"
    "        return False\n    return False\n"
)
SCRIPT = "#!/usr/bin/env python3\nimport re\nimport sys\n\n\n" + LEGACY_BODY


def moved_to(path: str, content: str) -> Change:
    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", WITHOUT_LEGACY)
        r.write(path, content)
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    return change


# -- the subject lives on where the rule does not read code: still tampering ---------------


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("pkg/_dates.pyx", "import re\n\n\n" + LEGACY_BODY),
        ("lua/dates.lua", LUA),
        ("bin/parse-dates", SCRIPT),
        ("pkg/legacy_dates.txt", "import re\n\n\n" + LEGACY_BODY),
    ],
    ids=["cython", "lua", "script-without-suffix", "text-run-with-exec"],
)
def test_a_subject_moved_into_a_file_of_another_kind_is_still_there(
    repo: GitRepo, path: str, content: str
):
    assert tamper(repo, BASE, moved_to(path, content)) == [REMOVED]


def test_a_subject_renamed_into_a_cython_file_is_still_there(repo: GitRepo):
    """Its name is new, but its body comes back in the change: moved, not gone."""
    cython = "import re\n\n\n" + LEGACY_BODY.replace(
        "def legacy_parse_dates(text):", "cpdef list parse_slashed(str text):"
    )
    assert tamper(repo, BASE, moved_to("pkg/_speedups.pyx", cython)) == [REMOVED]


def test_a_subject_a_config_file_still_names_is_still_there(repo: GitRepo):
    """An entry point still points at it: the code is expected to be there."""
    pyproject = '[project.scripts]\nlegacy-dates = "pkg.dates:legacy_parse_dates"\n'
    files = {**BASE, "pyproject.toml": pyproject}
    assert tamper(repo, files, drop_legacy) == [REMOVED]


CYTHON_SUBJECT = """\
from pkg._speedups import fast_parse_dates
from pkg.samples import make_sample_text


def test_fast_parse_dates():
    assert fast_parse_dates(make_sample_text()) == [(2024, 1, 2)]


def test_nothing():
    assert fast_parse_dates("") == []
"""


def test_a_subject_that_stays_in_cython_is_not_excused_by_a_deleted_helper(repo: GitRepo):
    """The test's subject is Cython code that stays; only a helper it also calls goes."""
    files = {
        "pkg/_speedups.pyx": "cpdef list fast_parse_dates(str text):\n    return []\n",
        "pkg/samples.py": "def make_sample_text():\n    return '2024-01-02'\n",
        "tests/test_fast.py": CYTHON_SUBJECT,
    }

    def change(r: GitRepo) -> None:
        r.remove("pkg/samples.py")
        kept = CYTHON_SUBJECT.split("\n\n\n")
        r.write("tests/test_fast.py", f"{kept[0].splitlines()[0]}\n\n\n{kept[2]}")

    assert tamper(repo, files, change) == [
        "tests/test_fast.py:2 test 'test_fast_parse_dates' removed"
    ]


# -- removed for real: still exempt --------------------------------------------------------


def test_a_subject_only_prose_still_mentions_is_gone(repo: GitRepo):
    """The changelog says it was removed and old docs still name it: neither runs."""

    def change(r: GitRepo) -> None:
        drop_legacy(r)
        r.write("CHANGES.rst", "Unreleased\n\n- Remove ``legacy_parse_dates``.\n")

    files = {**BASE, "docs/api.md": "## `legacy_parse_dates(text)`\n\nDeprecated.\n"}
    assert tamper(repo, files, change) == []


def test_data_that_names_what_a_test_uses_defines_nothing(repo: GitRepo):
    """The removed test's module is listed in a config file and a fixture archive: data names
    code, it defines none, so the module is not some other subject the test still has."""

    def change(r: GitRepo) -> None:
        r.write("pkg/venv.py", VENV.split("\n\n\ndef _running_under_legacy")[0] + CUT)
        r.write("tests/test_venv.py", VENV_TESTS.split("\n\n\ndef test_no_global_under_legacy")[0])

    files = {
        "pkg/__init__.py": "",
        "pkg/venv.py": VENV,
        "tests/test_venv.py": VENV_TESTS,
        "pyproject.toml": '[tool.coverage.run]\ninclude = ["pkg/venv.py"]\n',
        "tests/data/venv.tar.gz": "venv 1.0\n",
    }
    assert tamper(repo, files, change) == []


# -- git cannot read the trees: the rule fails, with the reason ------------------------------


def lose_object(repo: GitRepo, sha: str) -> None:
    """Delete a loose object, as a broken or partial clone would lack it."""
    loose = repo.path / ".git" / "objects" / sha[:2] / sha[2:]
    os.chmod(loose, 0o644)
    loose.unlink()


def setup_deletion(repo: GitRepo) -> tuple[str, str]:
    for path, content in {"README.md": "x\n", "NOTES": "unrelated\n", **BASE}.items():
        repo.write(path, content)
    base = repo.commit("base")
    drop_legacy(repo)
    return base, repo.commit("change")


def test_an_unreadable_file_in_the_head_tree_fails_the_rule_with_the_reason(repo: GitRepo):
    """Whether the subject's name is still somewhere cannot be known if a file cannot be read:
    the exemption is not granted and the rule says why."""
    base, head = setup_deletion(repo)
    lose_object(repo, repo.git("rev-parse", f"{head}:NOTES"))

    result = repo.check(base, head)

    assert result.conclusion == "failure"
    [(path, line, message)] = by_rule(result, "test-tamper")
    assert (path, line) == (None, None)
    assert "cannot be evaluated" in message
    assert repo.git("rev-parse", f"{head}:NOTES") in message


def test_an_unreadable_project_file_fails_the_rule_with_the_reason(repo: GitRepo):
    """A skip on an old Python is excused only by the base's `requires-python`; a
    pyproject.toml git cannot read is not a missing one."""
    tests = "import sys\n\nimport pytest\n\n\ndef test_one():\n    assert True\n"
    repo.write("pyproject.toml", '[project]\nrequires-python = ">=3.10"\n')
    repo.write("tests/test_one.py", tests)
    base = repo.commit("base")
    skip = '@pytest.mark.skipif(sys.version_info < (3, 10), reason="old")\n'
    repo.write("tests/test_one.py", tests.replace("def test_one", skip + "def test_one"))
    head = repo.commit("skip")
    lose_object(repo, repo.git("rev-parse", f"{base}:pyproject.toml"))

    [(_, _, message)] = by_rule(repo.check(base, head), "test-tamper")

    assert "cannot be evaluated" in message and "git cat-file failed" in message


def trees_of_repo(repo: GitRepo, base: str, head: str) -> GitTrees:
    with isolated_git(repo.path) as git:
        return GitTrees(repo.path, resolve(git, base), resolve(git, head))


def test_reading_tells_an_absent_file_from_an_unreadable_one(repo: GitRepo):
    base, head = setup_deletion(repo)
    trees = trees_of_repo(repo, base, head)
    assert trees.text("head", "nowhere.py") is None
    assert trees.text("head", "pkg") is None  # a folder is not a file
    assert trees.text("head", "NOTES/x") is None  # nor is a path through a file
    with pytest.raises(GitFailed, match="could not run"):
        trees.text("head", "x" * 300_000)  # too long to ask git about: not known absent
    lose_object(repo, repo.git("rev-parse", f"{head}:NOTES"))
    fresh = trees_of_repo(repo, base, head)
    with pytest.raises(GitFailed, match="cat-file"):
        fresh.text("head", "NOTES")
    with pytest.raises(GitFailed, match="grep"):
        fresh.mentions("head", ["legacy_parse_dates"])


def test_a_tree_that_does_not_exist_is_not_an_empty_one(repo: GitRepo):
    """`git cat-file blob <tree>:<path>` says the path "does not exist" even when the tree
    itself does not: that answer must not be read as an absent file."""
    base, _ = setup_deletion(repo)
    trees = GitTrees(repo.path, base, "f" * 40)
    with pytest.raises(GitFailed):
        trees.text("head", "pkg/dates.py")
    with pytest.raises(GitFailed):
        trees.search("head", ["legacy_parse_dates"])
    with pytest.raises(GitFailed):
        trees.listing("head", "pkg")


def test_a_changed_file_git_cannot_read_is_not_an_empty_one(repo: GitRepo):
    """The lines a change removes come from the base blob: a missing blob is an error, not
    a file that had no lines (which would hide every test it removed)."""
    base, head = setup_deletion(repo)
    lost = repo.git("rev-parse", f"{base}:tests/test_dates.py")
    lose_object(repo, lost)
    with isolated_git(repo.path) as git, pytest.raises(GitFailed, match=lost):
        changes_between(git, base, head)


@pytest.mark.slow
def test_the_command_line_fails_when_git_cannot_read_a_changed_file(repo: GitRepo):
    base, head = setup_deletion(repo)
    lose_object(repo, repo.git("rev-parse", f"{base}:tests/test_dates.py"))
    proc = ourobot("guards", "check", "--repo", str(repo.path), "--base", base, "--head", head)
    # Unreadable input (exit 2, one line): not 0 (a pass), nor 1 (a verdict on what could be
    # read), nor an "internal error".
    assert proc.returncode == 2
    assert proc.stderr.count(b"\n") == 1
    assert b"cannot read the changes in" in proc.stderr
    assert b"is missing from the repository" in proc.stderr
    assert b"internal error" not in proc.stderr and b"Traceback" not in proc.stderr
