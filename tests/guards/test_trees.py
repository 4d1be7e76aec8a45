"""The base and head trees behind a change computed from a repository: searched by whole
words, read file by file, listed by folder, with real git; a bare diff has none."""

from __future__ import annotations

from dataclasses import replace

from app.guards.diff import parse_diff
from app.guards.repo import changes_between, isolated_git, resolve
from app.guards.trees import Hit, TreeChangeSet, trees_of
from tests.guards.conftest import GitRepo


def two_commits(repo: GitRepo) -> tuple[str, str]:
    repo.write("pkg/a.py", "def legacy_parse():\n    return 1\n")
    repo.write("pkg/b.js", "var legacy_parse_v2 = 1;\n")
    repo.write("docs/a.md", "legacy_parse\n")
    base = repo.commit("base")
    repo.write("pkg/a.py", "def parse():\n    return legacy_parse()\n")
    repo.write(".gitattributes", "pkg/c.py -diff binary\n")
    repo.write("pkg/c.py", "legacy_parse = None\n")
    return base, repo.commit("head")


def test_a_repository_change_carries_both_trees(repo: GitRepo):
    base, head = two_commits(repo)
    with isolated_git(repo.path) as git:
        changes = changes_between(git, resolve(git, base), resolve(git, head))
    assert isinstance(changes, TreeChangeSet)
    trees = trees_of(replace(changes, base="x"))  # the engine's replace() keeps them
    assert trees is not None
    assert trees.text("base", "pkg/a.py") == "def legacy_parse():\n    return 1\n"
    assert trees.text("head", "pkg/c.py") == "legacy_parse = None\n"
    assert trees.text("base", "pkg/c.py") is None
    assert trees.listing("head", "pkg") == ["pkg/a.py", "pkg/b.js", "pkg/c.py"]
    assert trees.listing("base", "nowhere") == []


def test_searching_finds_whole_words_in_code_even_in_files_marked_binary(repo: GitRepo):
    base, head = two_commits(repo)
    with isolated_git(repo.path) as git:
        trees = trees_of(changes_between(git, resolve(git, base), resolve(git, head)))
    assert trees is not None
    assert trees.search("head", ["legacy_parse"]) == [
        Hit("pkg/a.py", 2, "    return legacy_parse()"),
        Hit("pkg/c.py", 1, "legacy_parse = None"),
    ]
    assert trees.search("base", ["legacy_parse"]) == [Hit("pkg/a.py", 1, "def legacy_parse():")]
    assert trees.search("base", []) == []


def test_a_bare_diff_has_no_trees():
    assert trees_of(parse_diff(b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")) is None


def test_mentions_are_searched_in_every_file_that_is_not_code(repo: GitRepo):
    base, head = two_commits(repo)
    with isolated_git(repo.path) as git:
        trees = trees_of(changes_between(git, resolve(git, base), resolve(git, head)))
    assert trees is not None
    assert trees.mentions("head", ["legacy_parse"]) == [Hit("docs/a.md", 1, "legacy_parse")]
    assert trees.mentions("base", ["legacy_parse_v2"]) == []
