"""A `ChangeSet` computed from a git repository: two revisions, or a worktree against a revision.

git runs as a subprocess with a list argv and an environment built from scratch (no system or
global config, an empty HOME), and is asked only for plumbing that attributes cannot bend: the
raw list of changed entries with rename detection (`diff-tree --raw -M`), blob contents
(`cat-file --batch`) and trees. Line counts come from the blobs (see `app.guards.lines`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.errors import ConfigError, UserError
from app.guards.changes import (
    GITLINK_MODE,
    SYMLINK_MODE,
    ChangeSet,
    FileChange,
    Source,
    Status,
)
from app.guards.lines import is_binary, line_delta, printable_runs
from app.guards.trees import CODE_SUFFIXES, Hit, Side, TreeChangeSet
from app.repo_config import DEFAULT_SOURCE, MAX_CONFIG_BYTES, RepoConfig, load_repo_config
from app.workspace.git import OBJECT_ID as _OBJECT_ID
from app.workspace.git import GitError, isolated_env, run_git

_ZERO_MODE = "000000"
_STATUS: dict[str, Status] = {
    "A": "added",
    "D": "deleted",
    "M": "modified",
    "T": "modified",
    "R": "renamed",
    "C": "copied",
}
_TIMEOUT_S = 600
# Without a diff-bytes limit, blobs beyond this are still not read into memory: fail closed.
DEFAULT_LOAD_LIMIT = 256 * 1024 * 1024


class GitFailed(RuntimeError):
    """A git command failed unexpectedly (not a bad revision or a missing repository)."""


class Git:
    """git in one repository, isolated from the host's and the user's git configuration."""

    def __init__(self, repo: Path, home: Path, extra_env: Mapping[str, str] | None = None):
        self.repo = repo
        self.extra = dict(extra_env or {})
        self._env = isolated_env(
            {"HOME": str(home), "XDG_CONFIG_HOME": str(home), "LC_ALL": "C", **(extra_env or {})}
        )

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return run_git(
                args,
                env={**self._env, **(env or {})},
                cwd=cwd or self.repo,
                stdin=stdin,
                timeout_s=_TIMEOUT_S,
            )
        except GitError as exc:
            raise GitFailed(str(exc)) from None

    def out(self, *args: str, stdin: bytes | None = None, cwd: Path | None = None) -> bytes:
        proc = self.run(*args, stdin=stdin, cwd=cwd)
        if proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitFailed(f"git {args[0]} failed: {message[-1] if message else proc.returncode}")
        return proc.stdout


@contextmanager
def isolated_git(repo: Path, extra_env: Mapping[str, str] | None = None) -> Iterator[Git]:
    """A `Git` for `repo` with an empty temporary HOME; refuses what is not a repository.
    `extra_env` may name the repository (`GIT_DIR`, `GIT_WORK_TREE`) so that nothing in `repo`
    decides which repository git reads."""
    if not repo.is_dir():
        raise UserError(f"{repo}: not a directory")
    with tempfile.TemporaryDirectory(prefix="ourobot-git-") as home:
        git = Git(repo, Path(home), extra_env)
        if git.run("rev-parse", "--git-dir").returncode != 0:
            raise UserError(f"{repo}: not a git repository")
        yield git


def resolve(git: Git, rev: str, kind: str = "commit") -> str:
    """The object id of `rev` as a commit (or tree); an unknown revision is a `UserError`."""
    if not rev or rev.startswith("-") or any(c.isspace() or c == "\0" for c in rev):
        raise UserError(f"invalid revision {rev!r}")
    proc = git.run("rev-parse", "--verify", "--quiet", f"{rev}^{{{kind}}}")
    sha = proc.stdout.decode("ascii", "replace").strip()
    if proc.returncode != 0 or not _OBJECT_ID.match(sha):
        raise UserError(f"unknown revision {rev!r} in {git.repo}")
    return sha


def has_commit(git: Git, sha: str) -> bool:
    return git.run("cat-file", "-e", f"{sha}^{{commit}}").returncode == 0


def merge_base(git: Git, base: str, head: str) -> str | None:
    """Where `head` branched from `base`, as GitHub's three-dot compare uses; None when the
    histories share nothing (or a shallow clone hides it)."""
    proc = git.run("merge-base", base, head)
    sha = proc.stdout.decode("ascii", "replace").strip()
    return sha if proc.returncode == 0 and _OBJECT_ID.match(sha) else None


def read_config_at(git: Git, commit: str) -> tuple[RepoConfig, str]:
    """`.github/ourobot.yml` as committed at `commit` (the base), and where it came from."""
    listing = git.out("ls-tree", "-z", commit, "--", DEFAULT_SOURCE)
    source = f"{DEFAULT_SOURCE}@{commit[:12]}"
    if not listing:
        return load_repo_config(None, source), f"defaults (no {DEFAULT_SOURCE} at {commit[:12]})"
    meta, _, _ = listing.rstrip(b"\0").partition(b"\t")
    mode, kind, sha = meta.decode("ascii").split()
    if kind != "blob" or mode not in ("100644", "100755"):
        raise ConfigError(f"{source}: not a regular file")
    blobs = read_blobs(git, [sha])
    raw = blobs.get(sha, b"")
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: file too large (the limit is {MAX_CONFIG_BYTES} bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not valid UTF-8") from None
    return load_repo_config(text, source), source


@dataclass(frozen=True)
class RawEntry:
    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str
    status: Status
    old_path: str | None
    new_path: str | None


def raw_entries(git: Git, base: str, head: str) -> list[RawEntry]:
    """Changed entries between two tree-ishes, renames detected, submodules never ignored."""
    out = git.out(
        "diff-tree",
        "-r",
        "-z",
        "--raw",
        "--no-abbrev",
        "-M",
        "--ignore-submodules=none",
        "--no-ext-diff",
        "--no-textconv",
        base,
        head,
    )
    tokens = out.split(b"\0")
    entries: list[RawEntry] = []
    index = 0
    while index < len(tokens):
        meta = tokens[index]
        index += 1
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_sha, new_sha, status = meta[1:].decode("ascii").split(" ")
        kind = _STATUS.get(status[:1])
        if kind is None:
            raise GitFailed(f"unexpected diff status {status!r}")
        first = _path(tokens[index])
        index += 1
        second = None
        if kind in ("renamed", "copied"):
            second = _path(tokens[index])
            index += 1
        old_path = None if kind == "added" else first
        new_path = None if kind == "deleted" else (second or first)
        entries.append(RawEntry(old_mode, new_mode, old_sha, new_sha, kind, old_path, new_path))
    return entries


def _path(raw: bytes) -> str:
    # Invalid UTF-8 survives as surrogates, which the unsafe-path rule reports.
    return raw.decode("utf-8", errors="surrogateescape")


def blob_sizes(git: Git, shas: Sequence[str]) -> dict[str, int]:
    if not shas:
        return {}
    out = git.out("cat-file", "--batch-check", stdin="".join(s + "\n" for s in shas).encode())
    sizes: dict[str, int] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == "missing":
            raise _missing(parts[0])
        if len(parts) == 3 and parts[1] == "blob":
            sizes[parts[0]] = int(parts[2])
    return sizes


def _missing(sha: str) -> GitFailed:
    # A blob the change names but git cannot produce is no evidence of an empty file: read as
    # one, a test file's old side would have no tests to lose.
    return GitFailed(f"object {sha} is missing from the repository")


def read_blobs(git: Git, shas: Sequence[str]) -> dict[str, bytes]:
    """Blob contents by id, in one `cat-file --batch` call."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    out = git.out("cat-file", "--batch", stdin="".join(s + "\n" for s in unique).encode())
    blobs: dict[str, bytes] = {}
    offset = 0
    while offset < len(out):
        end = out.index(b"\n", offset)
        line = out[offset:end].decode("ascii", "replace")
        header = line.split()
        offset = end + 1
        if len(header) == 2 and header[1] == "missing":
            raise _missing(header[0])
        if len(header) != 3:
            raise GitFailed(f"git cat-file: unexpected output {line[:100]!r}")
        size = int(header[2])
        blobs[header[0]] = out[offset : offset + size]
        offset += size + 1
    return blobs


def symlinks_in(git: Git, tree: str) -> dict[str, str]:
    """Every symlink in a tree (path -> target), to follow chains of links."""
    out = git.out("ls-tree", "-r", "-z", "--full-tree", tree)
    found: dict[str, str] = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0].decode() == SYMLINK_MODE:
            found[_path(path)] = parts[2].decode()
    blobs = read_blobs(git, list(found.values()))
    return {path: _path(blobs.get(sha, b"")) for path, sha in found.items()}


def changes_between(
    git: Git,
    base: str,
    head: str,
    *,
    load_limit: int = DEFAULT_LOAD_LIMIT,
    source: Source = "repo",
) -> ChangeSet:
    """Every change from `base` to `head` (tree-ishes), counted from blob contents."""
    entries = raw_entries(git, base, head)
    wanted = [
        sha
        for entry in entries
        for sha, mode in ((entry.old_sha, entry.old_mode), (entry.new_sha, entry.new_mode))
        if _has_blob(mode)
    ]
    sizes = blob_sizes(git, wanted)
    total = sum(sizes.get(sha, 0) for sha in dict.fromkeys(wanted))
    links = symlinks_in(git, head) if any(e.new_mode == SYMLINK_MODE for e in entries) else {}
    if total > load_limit:
        reason = (
            f"the changed files hold {total} bytes, over the {load_limit}-byte evaluation "
            "limit; the diff cannot be evaluated"
        )
        bare = tuple(_without_content(entry, links) for entry in entries)
        return ChangeSet(bare, source, total, base, head, unevaluable=reason, links=links)
    blobs = read_blobs(git, wanted)
    files = []
    diff_bytes = 0
    for entry in entries:
        change, size = _with_content(entry, blobs)
        files.append(change)
        diff_bytes += size
    trees = GitTrees(git.repo, base, head, git.extra)
    return TreeChangeSet(tuple(files), source, diff_bytes, base, head, links=links, trees=trees)


def _has_blob(mode: str) -> bool:
    return mode not in (_ZERO_MODE, GITLINK_MODE)


def _without_content(entry: RawEntry, links: Mapping[str, str]) -> FileChange:
    target = links.get(entry.new_path or "") if entry.new_mode == SYMLINK_MODE else None
    return FileChange(
        status=entry.status,
        old_path=entry.old_path,
        new_path=entry.new_path,
        old_mode=None if entry.old_mode == _ZERO_MODE else entry.old_mode,
        new_mode=None if entry.new_mode == _ZERO_MODE else entry.new_mode,
        link_target=target,
    )


def _with_content(entry: RawEntry, blobs: Mapping[str, bytes]) -> tuple[FileChange, int]:
    old = blobs.get(entry.old_sha) if _has_blob(entry.old_mode) else None
    new = blobs.get(entry.new_sha) if _has_blob(entry.new_mode) else None
    # A link's content is its target, not lines of text: a file turned into a link loses all
    # of its lines, and a link's target is judged by the symlink rule instead.
    old_text = None if entry.old_mode == SYMLINK_MODE else old
    new_text = None if entry.new_mode == SYMLINK_MODE else new
    delta = line_delta(old_text, new_text)
    binary = new_text is not None and is_binary(new_text)
    binary_bytes = len(new_text) if binary and new_text is not None else 0
    target = _path(new) if entry.new_mode == SYMLINK_MODE and new is not None else None
    change = FileChange(
        status=entry.status,
        old_path=entry.old_path,
        new_path=entry.new_path,
        old_mode=None if entry.old_mode == _ZERO_MODE else entry.old_mode,
        new_mode=None if entry.new_mode == _ZERO_MODE else entry.new_mode,
        binary=binary,
        added=delta.added,
        removed=delta.removed,
        old_line_count=_line_count(old_text, entry.old_mode, delta.old_count),
        new_line_count=_line_count(new_text, entry.new_mode, delta.new_count),
        old_telling_count=_line_count(old_text, entry.old_mode, delta.old_telling),
        link_target=target,
        binary_bytes=binary_bytes,
        strings=printable_runs(new_text, old_text) if binary and new_text is not None else (),
    )
    return change, delta.added_bytes + delta.removed_bytes + binary_bytes


def _line_count(text: bytes | None, mode: str, counted: int | None) -> int | None:
    if mode == _ZERO_MODE:
        return 0  # the side does not exist: an empty file
    return counted if text is not None else None


Files = Literal["code", "other", "yaml"]
# `search` looks in code the rules can read; `mentions` everywhere else, so that a name can be
# known to be absent from the whole tree, not only from its code in a few languages.
_PATHSPECS: dict[Files, tuple[str, ...]] = {
    "code": tuple(f"*{suffix}" for suffix in CODE_SUFFIXES),
    "other": (".", *(f":(exclude)*{suffix}" for suffix in CODE_SUFFIXES)),
}


@dataclass(frozen=True)
class GitTrees:
    """The base and head trees of a change, read on demand with an isolated git (a `TreeView`).

    Answers are cached: the same question about the same two trees has the same answer. A
    question git cannot answer raises `GitFailed`: only a tree that git read whole and found
    without the file says a file is absent."""

    repo: Path
    base: str
    head: str
    env: Mapping[str, str] = field(default_factory=dict, compare=False)  # names the repository
    _hits: dict[tuple[Files, Side, tuple[str, ...]], list[Hit]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _texts: dict[tuple[Side, str], str | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    _listings: dict[tuple[Side, str], list[str]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _commits: dict[str, ChangeSet | None] = field(default_factory=dict, compare=False, repr=False)

    def _tree(self, side: Side) -> str:
        return self.base if side == "base" else self.head

    def search(self, side: Side, words: Collection[str]) -> list[Hit]:
        return self._grep("code", side, words)

    def mentions(self, side: Side, words: Collection[str]) -> list[Hit]:
        return self._grep("other", side, words)

    def _grep(self, files: Files, side: Side, words: Collection[str]) -> list[Hit]:
        wanted = tuple(sorted({word for word in words if word and "\n" not in word}))
        key = (files, side, wanted)
        if key not in self._hits:
            tree = self._tree(side)
            self._hits[key] = self._search(tree, wanted, _PATHSPECS[files]) if wanted else []
        return list(self._hits[key])

    def _search(self, tree: str, words: Sequence[str], pathspecs: Sequence[str]) -> list[Hit]:
        # --text: a committed .gitattributes must not turn a file "binary" and hide its lines.
        args = ["grep", "-n", "-z", "-w", "-F", "--text", "--no-color", "--no-textconv"]
        for word in words:
            args += ["-e", word]
        with isolated_git(self.repo, self.env) as git:
            proc = git.run(*args, tree, "--", *pathspecs)
        # git grep reports a blob it cannot read on stderr and still exits 1, "no match": a
        # search that did not look everywhere is no evidence that a name is nowhere.
        if proc.returncode not in (0, 1) or proc.stderr.strip():
            raise GitFailed(f"git grep failed: {_last_line(proc.stderr) or proc.returncode}")
        return _grep_hits(proc.stdout, tree)

    def text(self, side: Side, path: str) -> str | None:
        if (side, path) not in self._texts:
            self._texts[side, path] = self._text(self._tree(side), path)
        return self._texts[side, path]

    def _text(self, tree: str, path: str) -> str | None:
        if not path:
            return None
        # The entry first, then its blob: `cat-file blob <tree>:<path>` says a path "does not
        # exist" even when it is the tree that cannot be read, and ls-tree fails instead.
        with isolated_git(self.repo, self.env) as git:
            listing = git.out("ls-tree", "-z", "--full-tree", tree, "--", path)
            blob = _blob_at(listing, path)
            if blob is None:
                return None
            return git.out("cat-file", "blob", blob).decode("utf-8", errors="replace")

    def listing(self, side: Side, directory: str) -> list[str]:
        if (side, directory) not in self._listings:
            self._listings[side, directory] = self._listing(self._tree(side), directory)
        return list(self._listings[side, directory])

    def _listing(self, tree: str, path: str) -> list[str]:
        with isolated_git(self.repo, self.env) as git:
            out = git.out("ls-tree", "-r", "-z", "--full-tree", "--name-only", tree, "--", path)
        return [_path(raw) for raw in out.split(b"\0") if raw]

    def present(self, side: Side, paths: Collection[str]) -> set[str]:
        """Compared without case, as a case-insensitive checkout finds a file."""
        wanted = {path for path in paths if path}
        if not wanted:
            return set()
        if (side, "") not in self._listings:
            with isolated_git(self.repo, self.env) as git:
                out = git.out("ls-tree", "-r", "-z", "--full-tree", "--name-only", self._tree(side))
            self._listings[side, ""] = [_path(raw) for raw in out.split(b"\0") if raw]
        folded = {path.casefold() for path in self._listings[side, ""]}
        return {path for path in wanted if path.casefold() in folded}

    def yaml_lines(self, side: Side, word: str) -> list[Hit]:
        key: tuple[Files, Side, tuple[str, ...]] = ("yaml", side, (word,))
        if key not in self._hits:
            self._hits[key] = self._search(self._tree(side), [word], ("*.yml", "*.yaml"))
        return list(self._hits[key])

    def origins(self, path: str, numbers: Collection[int]) -> dict[int, str] | None:
        if not path or not numbers:
            return {}
        with isolated_git(self.repo, self.env) as git:
            if git.out("cat-file", "-t", self.base).strip() != b"commit":
                return None
            ranges = [arg for start, end in _runs(numbers) for arg in ("-L", f"{start},{end}")]
            out = git.out(
                "blame", "--porcelain", "--root", "--no-textconv", *ranges, self.base, "--", path
            )
        return _blamed(out)

    def commit(self, sha: str) -> ChangeSet | None:
        if sha not in self._commits:
            self._commits[sha] = self._commit(sha)
        return self._commits[sha]

    def _commit(self, sha: str) -> ChangeSet | None:
        with isolated_git(self.repo, self.env) as git:
            parents = git.out("rev-list", "--parents", "-n", "1", sha).split()[1:]
            if len(parents) != 1 or not has_commit(git, parents[0].decode("ascii")):
                return None
            changes = changes_between(git, parents[0].decode("ascii"), sha)
        return None if changes.unevaluable else changes


def _blob_at(listing: bytes, path: str) -> str | None:
    """The blob `ls-tree -z` lists at exactly `path`; None for no entry, a folder or a
    submodule."""
    for record in listing.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob" and _path(name) == path:
            return parts[2].decode("ascii")
    return None


def _runs(numbers: Collection[int]) -> list[tuple[int, int]]:
    """Line numbers as runs of consecutive ones (`git blame -L` ranges)."""
    runs: list[tuple[int, int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _blamed(porcelain: bytes) -> dict[int, str]:
    """Each line's commit from `git blame --porcelain` (a `<commit> <orig> <final>[ <count>]`
    header per line, the commit's details after its first). A commit marked `boundary`, where
    a shallow history starts, did not write its lines: they map to ""."""
    found: dict[int, str] = {}
    boundary: set[str] = set()
    current = ""
    for line in porcelain.split(b"\n"):
        if line.startswith(b"\t"):
            continue
        fields = line.split(b" ")
        sha = fields[0].decode("ascii", "replace")
        if len(fields) in (3, 4) and _OBJECT_ID.match(sha) and fields[2].isdigit():
            current = sha
            found[int(fields[2])] = sha
        elif line == b"boundary":
            boundary.add(current)
    return {number: "" if sha in boundary else sha for number, sha in found.items()}


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


def _grep_hits(out: bytes, tree: str) -> list[Hit]:
    """`git grep -n -z` output (`<tree>:<path>\\0<line>\\0<text>`) as hits."""
    hits: list[Hit] = []
    prefix = f"{tree}:"
    for record in out.split(b"\n"):
        parts = record.split(b"\0", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        name = _path(parts[0])
        path = name[len(prefix) :] if name.startswith(prefix) else name
        hits.append(Hit(path, int(parts[1]), parts[2].decode("utf-8", errors="replace")))
    return hits


def snapshot_worktree(git: Git, worktree: Path, base_tree: str) -> str:
    """The tree `git add -A` would commit in `worktree` now, built in a private index so the
    worktree's own index is untouched.

    The private index starts as a copy of the worktree's own (else as `base_tree`): its stat
    data lets `git add` skip every file that did not change instead of hashing the whole tree
    again, which is both the cost of a large repository and, for a file whose
    `working-tree-encoding` git cannot convert, a failure `git add -A` itself would not hit.
    """
    with tempfile.TemporaryDirectory(prefix="ourobot-index-") as scratch:
        index = Path(scratch) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        steps: list[tuple[str, ...]] = [("add", "-A"), ("write-tree",)]
        own = git.run("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=worktree)
        own_index = Path(own.stdout.decode("utf-8", "surrogateescape").strip())
        if own.returncode == 0 and own_index.is_file():
            shutil.copyfile(own_index, index)
        else:
            steps.insert(0, ("read-tree", base_tree))
        for args in steps:
            proc = git.run(*args, env=env, cwd=worktree)
            if proc.returncode != 0:
                message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                raise GitFailed(f"git {args[0]} failed: {message[-1] if message else ''}")
        return proc.stdout.decode("ascii").strip()
