"""Real git repositories built in tmp_path for the guards tests.

`GitRepo` writes files, symlinks and gitlinks and commits them with a real `git` that never sees
the host's configuration. Trees git itself refuses to build from a worktree (`.GIT` entries,
`..` names) are made with `mktree`, as an attacker pushing raw objects would.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from app.guards import GuardResult, check_diff, check_repo
from app.repo_config import RepoConfig, load_repo_config

ROOT = Path(__file__).resolve().parents[2]
OUROBOT = ROOT / ".venv" / "bin" / "ourobot"


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "LC_ALL": "C",
    }


class GitRepo:
    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.env = git_env(home)
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=self.env,
            input=stdin,
            capture_output=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout.decode("utf-8", "surrogateescape").strip()

    def write(self, rel: str, content: str | bytes, *, executable: bool = False) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        data = content.encode() if isinstance(content, str) else content
        target.write_bytes(data)
        if executable:
            target.chmod(0o755)

    def symlink(self, rel: str, target: str) -> None:
        link = self.path / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(target, link)

    def remove(self, rel: str) -> None:
        self.git("rm", "-q", "--", rel)

    def move(self, old: str, new: str) -> None:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", "--", old, new)

    def gitlink(self, rel: str, sha: str = "1" * 40) -> None:
        """A submodule entry; commit it with `stage_all=False` (no checkout backs it)."""
        self.git("update-index", "--add", "--cacheinfo", f"160000,{sha},{rel}")

    def commit(self, message: str = "change", *, stage_all: bool = True) -> str:
        if stage_all:
            self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
        return self.git("rev-parse", "HEAD")

    def commit_tree(self, entries: list[tuple[str, str, str, str]], parent: str) -> str:
        """A commit whose root tree is exactly `entries` (mode, type, sha, name)."""
        listing = "".join(f"{mode} {kind} {sha}\t{name}\0" for mode, kind, sha, name in entries)
        tree = self.git("mktree", "-z", stdin=listing.encode())
        return self.git("commit-tree", tree, "-p", parent, "-m", "crafted")

    def blob(self, content: str) -> str:
        return self.git("hash-object", "-w", "--stdin", stdin=content.encode())

    def check(self, base: str, head: str, config: RepoConfig | None = None) -> GuardResult:
        return check_repo(self.path, base, head, config)


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    home = tmp_path / "home"
    home.mkdir()
    return GitRepo(tmp_path / "repo", home)


def config(text: str = "") -> RepoConfig:
    return load_repo_config("version: 1\n" + text if text else None)


LIMITS_OFF = """\
guards:
  max_deleted_lines: null
  max_file_shrink_percent: null
  max_changed_files: null
  max_added_lines: null
  max_diff_bytes: null
"""


def rules(result: GuardResult) -> set[str]:
    return {violation.rule for violation in result.violations}


def by_rule(result: GuardResult, rule: str) -> list[tuple[str | None, int | None, str]]:
    return [(v.path, v.line, v.message) for v in result.violations if v.rule == rule]


def tampered(
    repo: GitRepo, files: dict[str, str], change: Callable[[GitRepo], None]
) -> list[tuple[str | None, int | None, str]]:
    """`test-tamper`'s findings on `change`, made on top of a base commit of `files` (and a
    README, so that the base is never empty)."""
    for path, content in {"README.md": "x\n", **files}.items():
        repo.write(path, content)
    base = repo.commit("base")
    change(repo)
    return by_rule(repo.check(base, repo.commit("change")), "test-tamper")


def tamper(repo: GitRepo, files: dict[str, str], change: Callable[[GitRepo], None]) -> list[str]:
    """`tampered`, each finding as one "path:line message" string."""
    return [f"{path}:{line} {message}" for path, line, message in tampered(repo, files, change)]


def tamper_messages(
    repo: GitRepo, files: dict[str, str], change: Callable[[GitRepo], None]
) -> list[str]:
    """`tampered`, each finding's message alone (no path or line)."""
    return [message for _, _, message in tampered(repo, files, change)]


def diff_tamper_messages(
    repo: GitRepo, files: dict[str, str], change: Callable[[GitRepo], None]
) -> list[str]:
    """The messages of `test-tamper` on the same change given as a bare diff (no trees)."""
    for path, content in {"README.md": "x\n", **files}.items():
        repo.write(path, content)
    base = repo.commit("base")
    change(repo)
    head = repo.commit("change")
    found = by_rule(diff_result(repo.git("diff", base, head) + "\n"), "test-tamper")
    return [message for _, _, message in found]


def edited(path: str, old: str, new: str) -> Callable[[GitRepo], None]:
    """A change for `tamper`: the first `old` in the file at `path` replaced by `new` (the
    text must be there, so a fixture that drifts fails loudly instead of changing nothing)."""

    def change(repo: GitRepo) -> None:
        text = (repo.path / path).read_text()
        assert old in text, f"{old!r} not in {path}"
        repo.write(path, text.replace(old, new, 1))

    return change


def diff_result(text: str, cfg: RepoConfig | None = None) -> GuardResult:
    return check_diff(text.encode(), cfg or config())


def lines(count: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {number}\n" for number in range(1, count + 1))
