"""The per-iteration guard: the implementer's uncommitted worktree against the revision it
started from, judged by the same engine with `max_deletions_per_iteration`."""

from __future__ import annotations

from app.guards import check_iteration
from tests.guards.conftest import GitRepo, by_rule, config, lines, rules


def started(repo: GitRepo) -> str:
    repo.write("INSTALL.md", lines(256))
    repo.write(".gitignore", "build/\n")
    return repo.commit("base")


def test_more_deletions_than_the_iteration_allows_are_refused(repo: GitRepo):
    started(repo)
    repo.write("INSTALL.md", lines(250))
    result = check_iteration(repo.path, "HEAD", config())
    assert by_rule(result, "deletions") == [(None, None, "6 lines deleted, over the limit of 5")]
    assert result.stats["source"] == "worktree"


def test_a_small_edit_and_untracked_files_are_judged_like_the_commit(repo: GitRepo):
    started(repo)
    repo.write("INSTALL.md", lines(251) + "appended\n")
    repo.write("docs/new.md", "new\n")
    repo.write("build/output.bin", b"\0" * 100)  # ignored: `git add -A` would not commit it
    result = check_iteration(repo.path, "HEAD", config())
    assert result.conclusion == "success", result.violations
    assert result.stats["files"] == 2


def test_protected_paths_are_refused_except_in_pro_mode(repo: GitRepo):
    started(repo)
    repo.write(".github/workflows/ci.yml", "on: push\n")
    assert "protected-path" in rules(check_iteration(repo.path, "HEAD", config()))
    pro = check_iteration(repo.path, "HEAD", config("mode: pro\n"))
    assert "protected-path" not in rules(pro)
    assert "protected-path" not in pro.stats["rules"]


def test_the_worktree_and_its_index_are_left_untouched(repo: GitRepo):
    started(repo)
    repo.write("INSTALL.md", "rewritten\n")
    repo.write("new.txt", "x\n")
    before = repo.git("status", "--porcelain")
    check_iteration(repo.path, "HEAD", config())
    assert repo.git("status", "--porcelain") == before
    assert repo.git("diff", "--cached", "--name-only") == ""


def test_a_linked_worktree_is_checked_against_its_own_start(repo: GitRepo, tmp_path):
    started(repo)
    linked = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "ourobot/issue-1", str(linked))
    (linked / "INSTALL.md").write_text(lines(200))
    result = check_iteration(linked, "HEAD", config())
    assert result.stats["deleted_lines"] == 56
    assert "deletions" in rules(result)
