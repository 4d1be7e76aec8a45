"""Edits validated before they touch the worktree (lexically, through symlinks, per mode), then
applied exactly; one refused edit means nothing of the iteration is written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.loop.apply import PathPolicy, apply_edits
from app.loop.edits import Edit, Hunk
from app.repo_config import load_repo_config
from tests.guards.conftest import GitRepo


@pytest.fixture
def tree(tmp_path: Path) -> GitRepo:
    home = tmp_path / "home"
    home.mkdir()
    repo = GitRepo(tmp_path / "repo", home)
    repo.write("app.py", "def f():\n    return 1\n\n\ndef g():\n    return 1\n")
    repo.write("INSTALL.md", "# Install\n\nRun make.")  # no final newline
    repo.write(".github/workflows/ci.yml", "on: push\n")
    repo.write(".gitignore", "build/\n*.log\n")
    repo.symlink("docs/ci", "../.github/workflows")
    repo.symlink("outside", "/tmp")
    repo.commit("base")
    return repo


def config(text: str = ""):
    return load_repo_config("version: 1\n" + text)


def apply(repo: GitRepo, *edits: Edit, text: str = ""):
    def ignored(paths):
        proc = subprocess.run(
            ["git", "check-ignore", "--no-index", "--", *paths],
            cwd=repo.path, env=repo.env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        return set(proc.stdout.split())

    return apply_edits(PathPolicy(repo.path, config(text)), list(edits), ignored)


@pytest.mark.parametrize(
    ("path", "rule", "words"),
    [
        ("../x", "unsafe-path", "'..' component"),
        ("/etc/passwd", "unsafe-path", "absolute path"),
        (".git/config", "unsafe-path", "'.git' component"),
        ("src/a\u200b.py", "unsafe-path", "invisible Unicode"),
        ("a\nb.py", "unsafe-path", "control character"),
        ("src\\x.py", "unsafe-path", "backslash"),
        (".github/workflows/ci.yml", "protected-path", ".github/workflows/**"),
        (".GITHUB/Workflows/x.yml", "protected-path", ".github/workflows/**"),
        (".github/ourobot/CONSTITUTION.md", "protected-path", ".github/ourobot/**"),
        ("docs/ci/deploy.yml", "symlink", "resolves to .github/workflows/deploy.yml"),
        ("outside/x.txt", "symlink", "outside the worktree"),
        (".env", "protected-path", "'.env'"),
    ],
)
def test_unsafe_and_protected_paths_are_refused_before_anything_is_written(
    tree: GitRepo, path: str, rule: str, words: str
):
    before = tree.git("status", "--porcelain", "--untracked-files=all")
    result = apply(tree, Edit("file", "ok.txt", content="fine\n"), Edit("file", path, content="x"))
    assert [(r.rule, r.path) for r in result.refusals] == [(rule, path)]
    assert words in result.refusals[0].reason
    assert tree.git("status", "--porcelain", "--untracked-files=all") == before
    assert not (tree.path / "ok.txt").exists()  # the good edit waits for the iteration
    assert not Path("/tmp/x.txt").exists()


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".github/ourobot/CONSTITUTION.md",
        ".github/ourobot/prompts/reviewer.md",
        ".github/ourobot/prompts/scope-reviewer.md",
    ],
)
def test_the_governance_surface_stays_protected_when_the_config_unprotects_everything(
    tree: GitRepo, path: str
):
    target = tree.path / path
    before = target.read_text() if target.exists() else None
    result = apply(tree, Edit("file", path, content="x"), text="guards: {protected_paths: []}\n")
    assert [(r.rule, r.path) for r in result.refusals] == [("protected-path", path)]
    assert (target.read_text() if target.exists() else None) == before


def test_pro_mode_flags_a_constitution_change_for_an_admin_even_with_nothing_protected(
    tree: GitRepo,
):
    path = ".github/ourobot/CONSTITUTION.md"
    result = apply(
        tree, Edit("file", path, content="x\n"), text="mode: pro\nguards: {protected_paths: []}\n"
    )
    assert result.refusals == []
    assert [(f.rule, f.path) for f in result.flags] == [("protected-path", path)]


def test_pro_mode_writes_a_protected_path_and_flags_it(tree: GitRepo):
    result = apply(tree, Edit("file", ".github/workflows/ci.yml", content="on: pull_request\n"),
                   text="mode: pro\n")  # fmt: skip
    assert result.refusals == []
    assert [(f.rule, f.path) for f in result.flags] == [
        ("protected-path", ".github/workflows/ci.yml")
    ]
    assert (tree.path / ".github/workflows/ci.yml").read_text() == "on: pull_request\n"


def test_light_mode_writes_nothing(tree: GitRepo):
    result = apply(tree, Edit("file", "notes.txt", content="x\n"), text="mode: light\n")
    assert [r.rule for r in result.refusals] == ["protected-path"]
    assert not (tree.path / "notes.txt").exists()


def test_an_ignored_path_would_be_tested_but_never_committed(tree: GitRepo):
    result = apply(tree, Edit("file", "build/conftest.py", content="x = 1\n"))
    assert [(r.rule, r.path) for r in result.refusals] == [("unsafe-path", "build/conftest.py")]


def test_a_symlinked_directory_inside_the_worktree_is_followed(tree: GitRepo):
    tree.symlink("lib", "src")
    (tree.path / "src").mkdir()
    result = apply(tree, Edit("file", "lib/m.py", content="x = 1\n"))
    assert result.refusals == [] and result.paths == ["src/m.py"]
    assert (tree.path / "src/m.py").read_text() == "x = 1\n"


def test_append_keeps_newline_hygiene(tree: GitRepo):
    result = apply(tree, Edit("append", "INSTALL.md", content="## Upgrading\nRun make again."))
    assert result.refusals == []
    assert (tree.path / "INSTALL.md").read_text() == (
        "# Install\n\nRun make.\n## Upgrading\nRun make again.\n"
    )


def test_append_to_a_missing_file_is_refused(tree: GitRepo):
    result = apply(tree, Edit("append", "NOPE.md", content="x\n"))
    assert [r.rule for r in result.refusals] == ["edit"]
    assert "does not exist (use ### FILE: to create a file)" in result.refusals[0].reason


def test_replace_must_match_exactly_once(tree: GitRepo):
    twice = apply(
        tree, Edit("replace", "app.py", hunks=(Hunk("    return 1\n", "    return 2\n"),))
    )
    assert "occurs 2 times" in twice.refusals[0].reason
    missing = apply(tree, Edit("replace", "app.py", hunks=(Hunk("  return 1\n", "x", lines=True),)))
    assert "not in the file" in missing.refusals[0].reason
    once = apply(
        tree,
        Edit(
            "replace",
            "app.py",
            hunks=(Hunk("def g():\n    return 1\n", "def g():\n    return 2\n"),),
        ),
    )
    assert once.refusals == []
    assert (tree.path / "app.py").read_text().endswith("def g():\n    return 2\n")


def test_replace_handles_crlf_files_and_a_last_line_without_newline(tree: GitRepo):
    (tree.path / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = apply(tree, Edit("replace", "win.txt", hunks=(Hunk("two\n", "TWO\n"),)))
    assert result.refusals == []
    assert (tree.path / "win.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    last = apply(
        tree, Edit("replace", "INSTALL.md", hunks=(Hunk("Run make.\n", "Run make test.\n"),))
    )
    assert last.refusals == []
    assert (tree.path / "INSTALL.md").read_text() == "# Install\n\nRun make test."


def test_delete_removes_a_file_or_a_link_never_what_it_points_to(tree: GitRepo):
    assert apply(tree, Edit("delete", "docs/ci")).refusals == []
    assert not os.path.lexists(tree.path / "docs/ci")
    assert (tree.path / ".github/workflows/ci.yml").exists()
    assert apply(tree, Edit("delete", "app.py")).refusals == []
    missing = apply(tree, Edit("delete", "app.py"))
    assert "does not exist" in missing.refusals[0].reason


def test_a_file_cannot_replace_a_directory_or_sit_under_a_file(tree: GitRepo):
    assert "is a directory" in apply(tree, Edit("file", "docs", content="x")).refusals[0].reason
    under = apply(tree, Edit("file", "app.py/x.py", content="x"))
    assert "app.py is a file" in under.refusals[0].reason
