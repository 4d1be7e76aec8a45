"""The per-iteration guard: the implementer's uncommitted worktree against the revision it
started from, judged by the same engine; `deletions` measures what the iteration destroys
(lines removed without replacement, over `max_deletions_per_iteration`; a file shrunk past
`max_file_shrink_percent`; a long file rewritten), not every line it modifies."""

from __future__ import annotations

from app.cli import demo_script
from app.guards import check_iteration, check_repo
from tests.guards.conftest import GitRepo, by_rule, config, lines, rules
from tests.guards.destruction_cases import (
    BILLING,
    BILLING_REFACTORED,
    BILLING_RULES,
    INSTALL_FROM_MEMORY,
    INSTALL_GUIDE,
)


def started(repo: GitRepo) -> str:
    repo.write("INSTALL.md", lines(256))
    repo.write(".gitignore", "build/\n")
    return repo.commit("base")


def test_more_deletions_than_the_iteration_allows_are_refused(repo: GitRepo):
    started(repo)
    repo.write("INSTALL.md", lines(250))
    result = check_iteration(repo.path, "HEAD", config())
    assert by_rule(result, "deletions") == [
        ("INSTALL.md", None, "6 of 256 lines removed without replacement, over the limit of 5")
    ]
    assert result.stats["source"] == "worktree"


def test_five_lines_deleted_outright_pass_and_six_over_two_files_are_refused(repo: GitRepo):
    started(repo)
    repo.write("INSTALL.md", lines(251))
    assert check_iteration(repo.path, "HEAD", config()).conclusion == "success"
    repo.write("INSTALL.md", lines(253))
    repo.write("NOTES.md", lines(7))
    repo.commit("notes")
    repo.write("INSTALL.md", lines(250))
    repo.write("NOTES.md", lines(4))
    assert by_rule(check_iteration(repo.path, "HEAD", config()), "deletions") == [
        (None, None, "6 lines removed without replacement (INSTALL.md 3, NOTES.md 3), "
         "over the limit of 5")
    ]  # fmt: skip


def test_a_180_line_refactor_that_replaces_what_it_removes_passes_one_iteration(repo: GitRepo):
    repo.write("billing.py", BILLING)
    repo.commit("base")
    repo.write("billing.py", BILLING_REFACTORED)
    repo.write("billing_rules.py", BILLING_RULES)
    result = check_iteration(repo.path, "HEAD", config())
    assert result.conclusion == "success", result.violations
    # Every one of the 180 lines git counts as deleted was replaced in its hunk or moved.
    assert (result.stats["deleted_lines"], result.stats["added_lines"]) == (180, 187)
    # The pull request it ends in is judged as before, on its deleted lines: within 200.
    repo.commit("refactor")
    assert "deletions" not in rules(check_repo(repo.path, "HEAD^", "HEAD", config()))
    # Without the module the rules moved to, the rules were destroyed, not moved.
    repo.remove("billing_rules.py")
    assert by_rule(check_iteration(repo.path, "HEAD~1", config()), "deletions") == [
        ("billing.py", None, "49 of 228 lines removed without replacement, over the limit of 5")
    ]


def test_the_demos_250_to_30_line_rewrite_is_refused(repo: GitRepo):
    repo.write("INSTALL.md", demo_script.INSTALL_GUIDE)
    repo.commit("base")
    repo.write("INSTALL.md", demo_script.DESTRUCTIVE_INSTALL)
    assert by_rule(check_iteration(repo.path, "HEAD", config()), "deletions") == [
        ("INSTALL.md", None, "220 of 250 lines removed without replacement, over the limit of 5"),
        ("INSTALL.md", 30, "file shrinks from 250 to 30 lines (88%), over the 50% shrink limit"),
    ]


def test_a_long_file_rewritten_from_memory_at_the_same_length_is_refused(repo: GitRepo):
    repo.write("INSTALL.md", INSTALL_GUIDE)
    repo.commit("base")
    repo.write("INSTALL.md", INSTALL_FROM_MEMORY)
    result = check_iteration(repo.path, "HEAD", config())
    # Nothing is removed without replacement and nothing shrinks: every step was reworded.
    assert (result.stats["deleted_lines"], result.stats["added_lines"]) == (240, 240)
    assert by_rule(result, "deletions") == [
        ("INSTALL.md", None, "rewritten: 11% of its 300 lines kept (30 of the 270 that say "
         "something), under the 25% one iteration must keep of a file"),
    ]  # fmt: skip
    # Rewording a third of the steps is an edit.
    third = [
        new if n % 3 == 0 else old
        for n, (old, new) in enumerate(zip(INSTALL_GUIDE.splitlines(True),
                                           INSTALL_FROM_MEMORY.splitlines(True), strict=True))
    ]  # fmt: skip
    repo.write("INSTALL.md", "".join(third))
    assert check_iteration(repo.path, "HEAD", config()).conclusion == "success"
    # A short file is no long one: rewriting 39 lines is judged by what it removes only; nor
    # is a file of short lines, whose few telling lines a small edit rewords.
    repo.write("short.md", lines(39, "an original line"))
    repo.write("deps.txt", "".join(f"pkg{n}\n" for n in range(50)) + lines(4, "package-name"))
    repo.commit("short")
    repo.write("short.md", lines(39, "a reworded line"))
    repo.write("deps.txt", "".join(f"pkg{n}\n" for n in range(50)) + lines(4, "renamed-package"))
    assert check_iteration(repo.path, "HEAD", config()).conclusion == "success"


def test_null_limits_switch_each_measure_off(repo: GitRepo):
    repo.write("INSTALL.md", demo_script.INSTALL_GUIDE)
    repo.write("GUIDE.md", INSTALL_GUIDE)
    repo.commit("base")
    repo.write("INSTALL.md", demo_script.DESTRUCTIVE_INSTALL)
    repo.write("GUIDE.md", INSTALL_FROM_MEMORY)

    def messages(guards: str) -> list[str]:
        result = check_iteration(repo.path, "HEAD", config(f"guards: {{{guards}}}\n"))
        return [message.split(" (")[0] for _, _, message in by_rule(result, "deletions")]

    assert messages("max_deletions_per_iteration: null") == [
        "rewritten: 11% of its 300 lines kept",
        "file shrinks from 250 to 30 lines",
    ]
    # The share a file keeps is the shrink limit's measure: off with it.
    assert messages("max_file_shrink_percent: null") == [
        "220 of 250 lines removed without replacement, over the limit of 5"
    ]
    result = check_iteration(repo.path, "HEAD", config(
        "guards: {max_deletions_per_iteration: null, max_file_shrink_percent: null}\n"
    ))  # fmt: skip
    assert "deletions" not in rules(result) and "deletions" in result.stats["rules_off"]


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
