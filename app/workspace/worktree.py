"""A disposable worktree per cycle, on branch `ourobot/<ticket>`.

The worktree is added from the repository's own object store: a user's local repository (local
mode) or ourobot's bare mirror (GitHub mode). Adding one writes only a branch ref and git's own
bookkeeping under the git directory: the repository's checked-out branch, index and working tree
are never touched.

Lifecycle, in the order the seed's scars taught:
- before a new worktree, the stale state of a crashed run is recovered: a worktree still
  registered on the branch is removed, and a branch left by an earlier attempt is kept under
  `refs/ourobot/attempts/<ticket>/<n>` before the branch starts again from the base (nothing a
  human may want to look at is lost);
- the worktree is always removed in a `finally`, success or crash, and always *before* its
  branch (git refuses to delete a branch a worktree has checked out);
- the branch is deleted only when nobody needs it (`Workspace.keep_branch`).

Every git command here runs with the host's configuration ignored, hooks off and no fsmonitor:
a repository's local hooks are code ourobot did not choose to run.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import UserError
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.git import GitError, git, git_bytes
from app.workspace.hygiene import strip_test_artifacts

ATTEMPTS_PREFIX = "refs/ourobot/attempts/"
_TICKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
# Hooks and fsmonitor are commands a repository's local config can name: never run them.
HARDENED: Mapping[str, str] = {
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "core.hooksPath",
    "GIT_CONFIG_VALUE_0": "/dev/null",
    "GIT_CONFIG_KEY_1": "core.fsmonitor",
    "GIT_CONFIG_VALUE_1": "false",
    "GIT_CONFIG_KEY_2": "commit.gpgSign",
    "GIT_CONFIG_VALUE_2": "false",
}


class WorkspaceError(Exception):
    """The worktree could not be prepared or committed to; one line."""


def branch_for(ticket: str) -> str:
    """`ourobot/<ticket>`; a ticket id is letters, digits, `.`, `_` and `-`."""
    if not _TICKET.match(ticket) or ".." in ticket or ticket.endswith((".", ".lock")):
        raise UserError(
            f"ticket id {ticket!r}: use letters, digits, '.', '_' and '-' (e.g. issue-12)"
        )
    return BOT_BRANCH_PREFIX + ticket


@dataclass(frozen=True)
class Trailers:
    """What every commit of a cycle says about where it came from."""

    ticket: str
    iteration: int
    model: str

    def text(self) -> str:
        return (
            f"Ourobot-Ticket: {self.ticket}\n"
            f"Ourobot-Iteration: {self.iteration}\n"
            f"Ourobot-Model: {self.model}\n"
        )


@dataclass(frozen=True)
class PathChange:
    status: str  # git's letter: A, M, D, R, C, T
    path: str  # the new path (the old one for D)
    old_path: str | None = None  # set for renames and copies


@dataclass
class Workspace:
    """One cycle's worktree. `keep_branch` is set by the cycle when a human may want to look."""

    git_dir: Path
    path: Path
    branch: str
    base_sha: str
    ticket: str
    recovered: list[str] = field(default_factory=list)
    keep_branch: bool = False

    # ---- git ---------------------------------------------------------------------------------

    def git(self, *args: str) -> str:
        try:
            return git(list(args), cwd=self.path, env=HARDENED).stdout
        except GitError as exc:
            raise WorkspaceError(str(exc)) from None

    def git_raw(
        self, *args: str, ok: Sequence[int] = (0,), stdin: bytes | None = None
    ) -> tuple[int, bytes]:
        try:
            proc = git_bytes(list(args), cwd=self.path, ok=ok, env=HARDENED, stdin=stdin)
        except GitError as exc:
            raise WorkspaceError(str(exc)) from None
        return proc.returncode, proc.stdout

    def head(self) -> str:
        return self.git("rev-parse", "--verify", "HEAD^{commit}").strip()

    def tracked(self, rev: str = "HEAD") -> list[str]:
        """Every path in `rev`'s tree."""
        _, out = self.git_raw("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev)
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def tree_sizes(self, rev: str = "HEAD") -> dict[str, int]:
        """Path -> size in bytes of every blob in `rev` (links and submodules left out)."""
        _, out = self.git_raw("ls-tree", "-r", "-z", "-l", "--full-tree", rev)
        sizes: dict[str, int] = {}
        for record in out.split(b"\0"):
            meta, _, name = record.partition(b"\t")
            parts = meta.split()
            if len(parts) == 4 and parts[1] == b"blob" and parts[0] != b"120000":
                sizes[name.decode("utf-8", "surrogateescape")] = int(parts[3])
        return sizes

    def read_at(self, rev: str, path: str) -> bytes | None:
        """A file's bytes at `rev`, or None when it is not a file there."""
        code, kind = self.git_raw("cat-file", "-t", f"{rev}:{path}", ok=(0, 1, 128))
        if code != 0 or kind.strip() != b"blob":
            return None
        return self.git_raw("cat-file", "blob", f"{rev}:{path}")[1]

    def changes(self, since: str, until: str = "HEAD") -> list[PathChange]:
        """What `until` changed since `since`, renames detected."""
        _, out = self.git_raw(
            "diff-tree", "-r", "-z", "-M", "--no-ext-diff", "--no-textconv", "--name-status",
            since, until,
        )  # fmt: skip
        tokens = [t.decode("utf-8", "surrogateescape") for t in out.split(b"\0")]
        found: list[PathChange] = []
        index = 0
        while index < len(tokens) and tokens[index]:
            status = tokens[index][:1]
            if status in ("R", "C"):
                found.append(PathChange(status, tokens[index + 2], tokens[index + 1]))
                index += 3
            else:
                found.append(PathChange(status, tokens[index + 1]))
                index += 2
        return found

    def ignored(self, paths: Sequence[str]) -> set[str]:
        """Which of `paths` git would ignore (so `git add -A` would never commit them)."""
        if not paths:
            return set()
        listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
        code, out = self.git_raw(
            "check-ignore", "--no-index", "-z", "--stdin", ok=(0, 1), stdin=listing
        )
        if code == 1:
            return set()
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}

    # ---- the worktree's state -----------------------------------------------------------------

    def strip_artifacts(self) -> list[str]:
        """Remove the test artifacts `git add -A` would stage (untracked, not ignored)."""
        _, out = self.git_raw("ls-files", "-z", "--others", "--exclude-standard")
        untracked = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
        return strip_test_artifacts(self.path, untracked)

    def reset(self, rev: str = "HEAD") -> None:
        """The worktree exactly as `rev`: tracked files restored, everything else removed
        (ignored files too, so no run leaves anything the next one could read)."""
        self.git("reset", "-q", "--hard", rev)
        self.git("clean", "-ffdxq")

    def commit(self, subject: str, trailers: Trailers) -> str | None:
        """Stage everything but test artifacts and commit under the bot's identity; the new
        commit, or None when the worktree holds no change."""
        self.strip_artifacts()
        self.git("add", "-A")
        code, _ = self.git_raw("diff", "--cached", "--quiet", ok=(0, 1))
        if code == 0:
            return None
        self.git("commit", "-q", "--no-verify", "-m", subject, "-m", trailers.text())
        return self.head()

    def drop_last_commit(self, to: str) -> None:
        """Move the branch back to `to` (a refused iteration is not on the branch)."""
        self.reset(to)

    def commits_since_base(self) -> int:
        return int(self.git("rev-list", "--count", f"{self.base_sha}..HEAD").strip() or 0)


# ---- lifecycle ---------------------------------------------------------------------------------


def common_git_dir(repo: Path) -> Path:
    """The git directory that holds the objects and refs of `repo` (a work tree or bare)."""
    if not repo.is_dir():
        raise UserError(f"{repo}: not a directory")
    try:
        out = git(
            ["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=repo, env=HARDENED
        )
    except GitError:
        raise UserError(f"{repo}: not a git repository") from None
    return Path(out.stdout.strip())


@contextmanager
def open_workspace(
    repo: Path,
    *,
    ticket: str,
    base_sha: str,
    root: Path | None = None,
    resume: bool = False,
) -> Iterator[Workspace]:
    """A fresh worktree of `repo` on `ourobot/<ticket>`, removed when the block ends.

    The branch starts at `base_sha`; with `resume`, an existing branch is checked out as it
    is (a fix round continues where the last one stopped).
    """
    git_dir = common_git_dir(repo)
    branch = branch_for(ticket)
    _run(git_dir, "cat-file", "-e", f"{base_sha}^{{commit}}")
    recovered = recover_stale(git_dir, branch, keep_branch=resume)
    parent = Path(tempfile.mkdtemp(prefix=f"ourobot-{ticket}-", dir=root))
    path = parent / ticket
    workspace = Workspace(git_dir, path, branch, base_sha, ticket, recovered)
    try:
        exists = _branch_sha(git_dir, branch) is not None
        if resume and exists:
            _run(git_dir, "worktree", "add", "-q", str(path), branch)
        else:
            _run(git_dir, "worktree", "add", "-q", "-b", branch, str(path), base_sha)
        yield workspace
    finally:
        remove_worktree(git_dir, path)
        shutil.rmtree(parent, ignore_errors=True)
        if not workspace.keep_branch:
            delete_branch(git_dir, branch)


def recover_stale(git_dir: Path, branch: str, *, keep_branch: bool = False) -> list[str]:
    """Clear what a crashed run left: worktrees still on `branch`, and (unless kept) the branch
    itself, whose commits stay reachable under `refs/ourobot/attempts/`. What was done, in
    words for the cycle's record."""
    done: list[str] = []
    _run(git_dir, "worktree", "prune")
    for worktree in _worktrees_on(git_dir, branch):
        remove_worktree(git_dir, worktree)
        done.append(f"removed the stale worktree {worktree}")
    sha = _branch_sha(git_dir, branch)
    if sha is not None and not keep_branch:
        ticket = branch.removeprefix(BOT_BRANCH_PREFIX)
        attempt = _next_attempt(git_dir, ticket)
        _run(git_dir, "update-ref", attempt, sha)
        _run(git_dir, "update-ref", "-d", f"refs/heads/{branch}", sha)
        done.append(f"kept the earlier {branch} ({sha[:12]}) as {attempt}")
    return done


def remove_worktree(git_dir: Path, path: Path) -> None:
    """Unregister and delete a worktree, whatever state it is in."""
    try:
        _run(git_dir, "worktree", "remove", "--force", "--force", str(path))
    except WorkspaceError:
        shutil.rmtree(path, ignore_errors=True)
        _run(git_dir, "worktree", "prune")


def delete_branch(git_dir: Path, branch: str) -> None:
    sha = _branch_sha(git_dir, branch)
    if sha is not None:
        _run(git_dir, "update-ref", "-d", f"refs/heads/{branch}", sha)


def _worktrees_on(git_dir: Path, branch: str) -> list[Path]:
    listing = _run(git_dir, "worktree", "list", "--porcelain")
    found: list[Path] = []
    current: Path | None = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            current = Path(line[len("worktree ") :])
        elif line == f"branch refs/heads/{branch}" and current is not None:
            found.append(current)
    return found


def _branch_sha(git_dir: Path, branch: str) -> str | None:
    try:
        out = _run(git_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
    except WorkspaceError:
        return None
    return out.strip() or None


def _next_attempt(git_dir: Path, ticket: str) -> str:
    prefix = f"{ATTEMPTS_PREFIX}{ticket}/"
    listing = _run(git_dir, "for-each-ref", "--format=%(refname)", prefix)
    numbers = [int(ref[len(prefix) :]) for ref in listing.split() if ref[len(prefix) :].isdigit()]
    return f"{prefix}{max(numbers, default=0) + 1}"


def _run(git_dir: Path, *args: str) -> str:
    try:
        return git(list(args), cwd=git_dir, env={**HARDENED, "GIT_DIR": str(git_dir)}).stdout
    except GitError as exc:
        raise WorkspaceError(str(exc)) from None
