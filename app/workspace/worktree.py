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

Every git command here names its repository (`GIT_DIR`: the worktree's own git directory
inside the repository's) and its work tree, and runs from that git directory: it never finds
its repository through the worktree's `.git` file, which whatever ran in the worktree may
have rewritten. Hooks, fsmonitor and signing are off for every git ourobot runs
(`app.workspace.git.HARDENING`). New objects are staged in quarantine (`app.workspace.staging`)
and enter the repository only with a commit that is kept.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import UserError
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.git import GIT_TIMEOUT_S, GitError, git, git_bytes, repo_env
from app.workspace.git_view import build_view
from app.workspace.hygiene import strip_test_artifacts
from app.workspace.staging import (
    Quarantine,
    Snapshot,
    check_sizes,
    install_index,
    private_index,
)
from app.workspace.tree_files import remove_beneath, remove_tree, write_beneath

ATTEMPTS_PREFIX = "refs/ourobot/attempts/"
# ourobot's own refs: they move between runs, never during one.
OWN_REFS = (f"refs/heads/{BOT_BRANCH_PREFIX}", ATTEMPTS_PREFIX)
_TICKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
# Removing a worktree and deleting a branch must finish even when the cycle's time is up.
CLEANUP_TIMEOUT_S = 60.0
# Without a diff-size limit, a file larger than this is still never hashed.
MAX_FILE_BYTES = 256 * 1024 * 1024


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
    # Tests the change alters on purpose, as the model declared them: (test, why).
    test_changes: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        lines = [
            f"Ourobot-Ticket: {self.ticket}",
            f"Ourobot-Iteration: {self.iteration}",
            f"Ourobot-Model: {self.model}",
        ]
        for test, why in self.test_changes:
            lines.append(f"Ourobot-Test-Change: {_one_line(test, 200)}: {_one_line(why, 300)}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PathChange:
    status: str  # git's letter: A, M, D, R, C, T
    path: str  # the new path (the old one for D)
    old_path: str | None = None  # set for renames and copies


@dataclass
class Workspace:
    """One cycle's worktree. `keep_branch` is set by the cycle when a human may want to look."""

    git_dir: Path  # the repository's own git directory (objects and refs)
    path: Path  # the work tree
    branch: str
    base_sha: str
    ticket: str
    admin: Path  # the worktree's git directory (its HEAD and index), inside `git_dir`
    recovered: list[str] = field(default_factory=list)
    keep_branch: bool = False
    deadline: float | None = None  # time.monotonic(): ourobot's own git stops here too
    gitfile: str = ""  # what the worktree's `.git` file said when ourobot wrote it

    @property
    def scratch(self) -> Path:
        """The cycle's private folder beside the work tree (indexes, quarantines, checkouts)."""
        return self.path.parent

    # ---- git ---------------------------------------------------------------------------------

    def env(
        self, *, index: Path | None = None, quarantine: Quarantine | None = None
    ) -> dict[str, str]:
        env = repo_env(self.admin, self.path, index=index)
        if quarantine is not None:
            env.update(quarantine.env())
        return env

    def timeout(self) -> float:
        if self.deadline is None:
            return GIT_TIMEOUT_S
        return max(1.0, self.deadline - time.monotonic())

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        try:
            return git(list(args), cwd=self.admin, env=env or self.env(),
                       timeout_s=self.timeout()).stdout  # fmt: skip
        except GitError as exc:
            raise WorkspaceError(str(exc)) from None

    def git_raw(
        self,
        *args: str,
        ok: Sequence[int] = (0,),
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        try:
            proc = git_bytes(list(args), cwd=self.admin, ok=ok, env=env or self.env(),
                             stdin=stdin, timeout_s=self.timeout())  # fmt: skip
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

    def untracked(self) -> list[str]:
        _, out = self.git_raw("ls-files", "-z", "--others", "--exclude-standard")
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def strip_artifacts(self) -> list[str]:
        """Remove the test artifacts `git add -A` would stage (untracked, not ignored)."""
        return strip_test_artifacts(self.path, self.untracked())

    def pending(self) -> list[str]:
        """The paths `git add -A` would stage: modified and untracked (not ignored) files."""
        _, out = self.git_raw("ls-files", "-z", "--modified", "--others", "--exclude-standard")
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def reset(self, rev: str = "HEAD") -> None:
        """The worktree exactly as `rev`: tracked files restored, everything else removed
        (ignored files too, so no run leaves anything the next one could read)."""
        self.restore_gitfile()
        self.git("reset", "-q", "--hard", rev)
        self.git("clean", "-ffdxq")

    def restore_gitfile(self) -> bool:
        """Put the worktree's `.git` file back as ourobot wrote it; whether it had been
        changed (only possible without the sandbox: inside it the file is read-only)."""
        target = self.path / ".git"
        try:
            if not target.is_symlink() and target.is_file() and target.read_text() == self.gitfile:
                return False
        except (OSError, UnicodeDecodeError):
            pass
        remove_beneath(self.path, ".git")
        write_beneath(self.path, ".git", self.gitfile.encode())
        return True

    def snapshot(self, max_file_bytes: int | None = None) -> Snapshot:
        """What `git add -A` would commit now, as a tree in quarantine (test artifacts
        stripped first); `OversizedFile` before anything is hashed when a file is too large."""
        self.strip_artifacts()
        check_sizes(self.path, self.pending(), max_file_bytes or MAX_FILE_BYTES)
        quarantine = Quarantine.create(self.scratch, self.git_dir / "objects")
        index = private_index(self.admin, self.scratch)
        try:
            env = self.env(index=index, quarantine=quarantine)
            self.git("add", "-A", env=env)
            tree = self.git("write-tree", env=env).strip()
        except BaseException:
            Snapshot("", index, quarantine).discard()
            raise
        return Snapshot(tree, index, quarantine)

    def commit_snapshot(self, snapshot: Snapshot, subject: str, trailers: Trailers) -> str | None:
        """Commit `snapshot` on the branch under the bot's identity: its objects admitted to
        the repository, then the branch moved (only from the commit it was built on). None,
        and nothing kept, when the tree is HEAD's."""
        try:
            parent = self.head()
            if snapshot.tree == self.git("rev-parse", f"{parent}^{{tree}}").strip():
                return None
            env = self.env(quarantine=snapshot.quarantine)
            message = f"{subject}\n\n{trailers.text()}"
            _, out = self.git_raw("commit-tree", snapshot.tree, "-p", parent, "-F", "-",
                                     stdin=message.encode(), env=env)  # fmt: skip
            commit = out.decode().strip()
            snapshot.quarantine.admit()
            self.git("update-ref", "-m", subject, "HEAD", commit, parent)
            install_index(snapshot.index, self.admin)
            return commit
        finally:
            snapshot.discard()

    def commit(self, subject: str, trailers: Trailers) -> str | None:
        """Stage everything but test artifacts and commit under the bot's identity; the new
        commit, or None when the worktree holds no change."""
        return self.commit_snapshot(self.snapshot(), subject, trailers)

    def drop_last_commit(self, to: str) -> None:
        """Move the branch back to `to` (a refused iteration is not on the branch)."""
        self.reset(to)

    def git_view(self, is_secret: Callable[[str], bool]) -> Path | None:
        """The repository as the agent's commands may see it (`app.workspace.git_view`), for
        the current HEAD; an earlier HEAD's view is removed."""
        head = self.head()
        dest = self.scratch / f"view-{head[:16]}.git"
        for old in self.scratch.glob("view-*.git"):
            if old != dest:
                remove_tree(old)
        return build_view(self.admin, self.path, self.base_sha, dest, is_secret)

    def git_state(self) -> dict[str, bytes | None]:
        """What in the repository's git directory decides what git runs or reads, and its
        refs: its config, HEAD, alternates, attributes and hooks, this worktree's own files,
        its branch, and every other ref."""
        files = ["config", "HEAD", "objects/info/alternates", "info/attributes"]
        state: dict[str, bytes | None] = {name: _read(self.git_dir / name) for name in files}
        for name in ("HEAD", "commondir", "gitdir", "config.worktree"):
            state[f"worktrees/{self.admin.name}/{name}"] = _read(self.admin / name)
        hooks = self.git_dir / "hooks"
        listing = sorted(p.name for p in hooks.iterdir()) if hooks.is_dir() else []
        state["hooks/"] = "\n".join(listing).encode()
        state[f"refs/heads/{self.branch}"] = self.git(
            "rev-parse", "--verify", "-q", f"refs/heads/{self.branch}"
        ).encode()
        refs = self.git("for-each-ref", "--format=%(refname) %(objectname)")
        others = [line for line in refs.splitlines() if not line.startswith(OWN_REFS)]
        state["refs"] = hashlib.sha256("\n".join(others).encode()).digest()
        return state

    def restore_git_state(self, before: dict[str, bytes | None]) -> list[str]:
        """Put back what a run changed of `git_state` (possible only without the sandbox,
        which mounts the git directory read-only); the names of what had changed."""
        now = self.git_state()
        changed = [name for name in before if now.get(name) != before[name]]
        for name in changed:
            if name == "hooks/":
                known = set((before[name] or b"").decode().split("\n"))
                for hook in (self.git_dir / "hooks").iterdir():
                    if hook.name not in known:
                        remove_tree(hook)
            elif name == "refs":
                # Another ref moved (possible only without the sandbox): said, never moved
                # back, since the user may have moved it meanwhile.
                continue
            elif name.startswith("refs/heads/"):
                self.git("update-ref", name, (before[name] or b"").decode().strip())
            else:
                target = self.git_dir / name
                old = before[name]
                if old is None:
                    target.unlink(missing_ok=True)
                else:
                    target.write_bytes(old)
        return changed

    @contextmanager
    def checkout(self, rev: str = "HEAD") -> Iterator[Path]:
        """A fresh checkout of exactly `rev` in a folder of its own, removed after the block:
        where a judged run (the baseline, a test run, a proof run) happens, so nothing an
        earlier run or command left in the worktree is ever read or counted. It has no `.git`:
        a run that could ask git which files are tracked could tell the canary from the
        suite, and the repository's object store holds the secret files masked here."""
        sha = self.git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
        dest = Path(tempfile.mkdtemp(prefix="run-", dir=self.scratch))
        index = self.scratch / f"index-{dest.name}"
        try:
            env = {**self.env(index=index)}
            env.pop("GIT_WORK_TREE")
            self.git("read-tree", sha, env=env)
            self.git("checkout-index", "--all", "--force", f"--prefix={dest}/", env=env)
            yield dest
        finally:
            index.unlink(missing_ok=True)
            remove_tree(dest)

    def commits_since_base(self) -> int:
        return int(self.git("rev-list", "--count", f"{self.base_sha}..HEAD").strip() or 0)


def _one_line(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


# ---- lifecycle ---------------------------------------------------------------------------------


def common_git_dir(repo: Path) -> Path:
    """The git directory that holds the objects and refs of `repo` (a work tree or bare)."""
    if not repo.is_dir():
        raise UserError(f"{repo}: not a directory")
    try:
        out = git(["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=repo)
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
    deadline: float | None = None,
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
    workspace = Workspace(git_dir, path, branch, base_sha, ticket, git_dir, recovered,
                          deadline=deadline)  # fmt: skip
    try:
        exists = _branch_sha(git_dir, branch) is not None
        if resume and exists:
            _run(git_dir, "worktree", "add", "-q", str(path), branch)
        else:
            _run(git_dir, "worktree", "add", "-q", "-b", branch, str(path), base_sha)
        # Read once, now, before anything has run in the worktree: from here on the file is
        # the sandbox's to rewrite and ourobot never reads it again.
        workspace.gitfile = (path / ".git").read_text()
        workspace.admin = _admin_dir(git_dir, workspace.gitfile)
        yield workspace
    finally:
        remove_worktree(git_dir, path)
        remove_tree(parent)
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


def _admin_dir(git_dir: Path, gitfile: str) -> Path:
    """The worktree's git directory, which `git worktree add` just named in its `.git` file;
    it must lie in the repository's own `worktrees/`."""
    admin = Path(gitfile.removeprefix("gitdir:").strip())
    if not admin.is_absolute():
        raise WorkspaceError(f"unexpected worktree git file: {gitfile.strip()!r}")
    if admin.resolve().parent != (git_dir / "worktrees").resolve():
        raise WorkspaceError(f"the worktree's git directory {admin} is not in {git_dir}")
    return admin


def remove_worktree(git_dir: Path, path: Path) -> None:
    """Unregister and delete a worktree, whatever state it is in."""
    try:
        _run(git_dir, "worktree", "remove", "--force", "--force", str(path))
    except WorkspaceError:
        remove_tree(path)
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
        return git(list(args), cwd=git_dir, env=repo_env(git_dir),
                   timeout_s=CLEANUP_TIMEOUT_S * 5).stdout  # fmt: skip
    except GitError as exc:
        raise WorkspaceError(str(exc)) from None
