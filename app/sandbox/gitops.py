"""Git plumbing over the sandbox's bare repositories: creation, refs, history, diffs as GitHub
shows them, trees and blobs, and server-side merges (merge, squash, rebase).

Everything runs `git` as a subprocess with a list argv and an environment built from scratch, so
neither the host's git config nor a committed `.gitattributes` (diff drivers, textconv, `-diff`)
can change what the sandbox reports.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ZERO_SHA = "0" * 40
EMPTY_TREE_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Who commits server-side merges, as on github.com.
MERGE_COMMITTER = ("GitHub", "noreply@github.com")

_STATUS = {
    "A": "added",
    "D": "removed",
    "M": "modified",
    "R": "renamed",
    "C": "copied",
    "T": "changed",
}
_TREE_TYPES = {"040000": "dir", "120000": "symlink", "160000": "submodule"}
_PERSON = re.compile(rb"^(.*) <([^>]*)> (-?\d+)(?: [+-]\d{4})?$")
_SHA = re.compile(r"^[0-9a-f]{40}$")


class GitError(Exception):
    """A git command failed in a way the caller did not ask about."""


class UnknownRevision(GitError):
    """A revision or ref named by the caller does not exist."""


class NoCommonAncestor(GitError):
    """Two commits share no history, so there is nothing to compare or merge."""


class MergeConflict(Exception):
    """A merge cannot be made cleanly, or the base ref moved while it was being made."""


class RefConflict(Exception):
    """A ref update was refused because the ref is not at the expected old value."""


@dataclass(frozen=True)
class RefUpdate:
    """One ref changed by a push (or by the REST API)."""

    ref: str
    before: str
    after: str


@dataclass(frozen=True)
class FileChange:
    """One entry of a PR's file list or a compare, shaped like GitHub's files API."""

    filename: str
    previous_filename: str | None
    status: str
    additions: int
    deletions: int
    patch: str | None  # hunks only; None for binary files or when there is no textual change
    blob_sha: str | None
    binary: bool


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    tree_sha: str
    parents: tuple[str, ...]
    message: str
    author_name: str
    author_email: str
    author_date: str
    committer_name: str
    committer_email: str
    committer_date: str


@dataclass(frozen=True)
class TreeEntry:
    path: str
    name: str
    type: str  # "file" | "dir" | "symlink" | "submodule"
    sha: str
    size: int
    mode: str


# --- process environment -------------------------------------------------------------------


@functools.cache
def _empty_home() -> str:
    # Created on first use (never at import) and kept empty for the life of the process;
    # removed when the process exits, so a demo leaves no folder behind in the temp dir.
    home = tempfile.mkdtemp(prefix="sandbox-git-home-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return home


def isolated_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for `git` that ignores the host's config, attributes and prompts."""
    home = _empty_home()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "XDG_CONFIG_HOME": home,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "TZ": "UTC",
        "GIT_AUTHOR_NAME": "Sandbox",
        "GIT_AUTHOR_EMAIL": "sandbox@sandbox.invalid",
        "GIT_COMMITTER_NAME": "Sandbox",
        "GIT_COMMITTER_EMAIL": "sandbox@sandbox.invalid",
    }
    env.update(extra or {})
    return env


# Newer git (2.46+) reads attributes from HEAD in bare repositories; point that at nothing.
_NO_TREE_ATTRS = ("-c", f"attr.tree={EMPTY_TREE_SHA}", "-c", f"core.attributesFile={os.devnull}")

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def repo_lock(path: Path) -> threading.Lock:
    """The lock every sandbox ref write to `path` holds, so a push can tell its own ref changes
    from a concurrent REST merge. Not reentrant; may be released from another thread."""
    key = str(Path(path).resolve())
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def _person_env(prefix: str, person: tuple[str, str], date: str | None = None) -> dict[str, str]:
    env = {f"GIT_{prefix}_NAME": person[0], f"GIT_{prefix}_EMAIL": person[1]}
    if date is not None:
        env[f"GIT_{prefix}_DATE"] = date
    return env


def _iso(timestamp: int) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _valid_rev(rev: str) -> bool:
    # A leading "-" would be read as an option; control characters never name a revision.
    return bool(rev) and not rev.startswith("-") and not any(ord(c) < 32 for c in rev)


def _path_parts(path: str) -> list[str] | None:
    parts = [p for p in path.strip("/").split("/")] if path.strip("/") else []
    if any(p in ("", ".", "..") or "\0" in p for p in parts):
        return None
    return parts


# --- the repository --------------------------------------------------------------------------


class BareRepo:
    """One bare repository of the sandbox."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    # -- running git

    def _git(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        ok: Sequence[int] = (0,),
    ) -> subprocess.CompletedProcess[bytes]:
        argv = ["git", f"--git-dir={self.path}", *_NO_TREE_ATTRS, *args]
        proc = subprocess.run(
            argv, input=input, env=isolated_env(env), capture_output=True, check=False
        )
        if proc.returncode not in ok:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"git {args[0]} failed ({proc.returncode}): {err}")
        return proc

    def _out(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        return self._git(*args, input=input, env=env).stdout.decode("utf-8", "replace").strip()

    # -- creation

    @classmethod
    def create(
        cls,
        path: Path,
        seed_dir: Path | None = None,
        *,
        default_branch: str = "main",
        author: tuple[str, str] = ("Sandbox Seeder", "seeder@sandbox.invalid"),
        message: str = "Initial commit",
    ) -> BareRepo:
        """A new bare repository at `path` whose HEAD names `default_branch`. With `seed_dir`, its
        files (dotfiles included, `.git` directories excluded) become one commit on that branch;
        without it the repository is empty, like a GitHub repo created without auto_init."""
        path = Path(path)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise ValueError(f"repository path is already in use: {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            ["git", "init", "--quiet", "--bare", "--template=", "-b", default_branch, str(path)],
            env=isolated_env(),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise GitError(f"git init failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
        repo = cls(path)
        for key, value in (
            ("http.receivepack", "true"),  # pushes over smart HTTP
            ("uploadpack.allowAnySHA1InWant", "true"),  # fetch by sha, as GitHub allows
            ("uploadpack.allowFilter", "true"),
            ("receive.autogc", "false"),  # no detached gc processes racing the tests
            ("gc.auto", "0"),
        ):
            repo._git("config", key, value)
        if seed_dir is not None:
            tree = repo._write_dir_tree(Path(seed_dir))
            env = {**_person_env("AUTHOR", author), **_person_env("COMMITTER", author)}
            sha = repo._out("commit-tree", tree, input=message.encode(), env=env)
            repo._git("update-ref", f"refs/heads/{default_branch}", sha, ZERO_SHA)
        return repo

    def _write_dir_tree(self, root: Path) -> str:
        entries = [
            f"{mode} {sha}\t".encode() + rel + b"\0" for mode, sha, rel in self._hash_dir(root)
        ]
        with tempfile.TemporaryDirectory(prefix="sandbox-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git(
                "update-index", "--add", "-z", "--index-info", input=b"".join(entries), env=env
            )
            return self._out("write-tree", env=env)

    def _hash_dir(self, root: Path) -> Iterator[tuple[str, str, bytes]]:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            base = Path(dirpath)
            # A symlink to a directory is listed among dirnames: keep it as a link, do not enter.
            links = [d for d in dirnames if (base / d).is_symlink()]
            dirnames[:] = sorted(d for d in dirnames if d != ".git" and d not in links)
            for name in sorted([*filenames, *links]):
                full = base / name
                rel = os.fsencode(full.relative_to(root).as_posix())
                if full.is_symlink():
                    target = os.readlink(os.fsencode(full))
                    yield "120000", self._hash_bytes(target), rel
                elif full.is_file():
                    mode = "100755" if os.stat(full).st_mode & 0o100 else "100644"
                    yield mode, self._hash_bytes(full.read_bytes()), rel

    def _hash_bytes(self, data: bytes) -> str:
        return self._out("hash-object", "-w", "--no-filters", "--stdin", input=data)

    # -- refs and revisions

    def refs(self) -> dict[str, str]:
        """Every ref (heads, tags, pulls, ...) -> the sha it points at."""
        out = self._out("for-each-ref", "--format=%(refname) %(objectname)")
        pairs = (line.rsplit(" ", 1) for line in out.splitlines() if line)
        return {ref: sha for ref, sha in pairs}

    def resolve(self, rev: str) -> str | None:
        """The commit sha `rev` names, or None when it names no commit."""
        if not _valid_rev(rev):
            return None
        proc = self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", ok=(0, 1, 128))
        sha = proc.stdout.decode().strip()
        return sha if proc.returncode == 0 and _SHA.match(sha) else None

    def _commit(self, rev: str) -> str:
        sha = self.resolve(rev)
        if sha is None:
            raise UnknownRevision(f"unknown revision: {rev!r}")
        return sha

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self._git("merge-base", self._commit(a), self._commit(b), ok=(0, 1))
        sha = proc.stdout.decode().strip()
        return sha if proc.returncode == 0 and sha else None

    # -- commits

    def commit_info(self, sha: str) -> CommitInfo:
        return self._read_commits([self._commit(sha)])[0]

    def commits_between(self, base: str, head: str) -> list[CommitInfo]:
        """Commits reachable from `head` but not from `base`, parents before children."""
        out = self._out(
            "rev-list", "--topo-order", "--reverse", self._commit(head), "--not", self._commit(base)
        )
        return self._read_commits(out.split())

    def _read_commits(self, shas: list[str]) -> list[CommitInfo]:
        if not shas:
            return []
        out = self._git("cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
        data, pos, commits = out.stdout, 0, []
        for sha in shas:
            header_end = data.index(b"\n", pos)
            _, kind, size = data[pos:header_end].decode().split(" ")
            if kind != "commit":
                raise UnknownRevision(f"{sha} is a {kind}, not a commit")
            body = data[header_end + 1 : header_end + 1 + int(size)]
            commits.append(_parse_commit(sha, body))
            pos = header_end + 1 + int(size) + 1
        return commits

    # -- diffs

    def _range(self, base: str, head: str) -> tuple[str, str]:
        b, h = self._commit(base), self._commit(head)
        mb = self.merge_base(b, h)
        if mb is None:
            raise NoCommonAncestor(f"no common ancestor between {base!r} and {head!r}")
        return mb, h

    def _diff(self, *args: str) -> bytes:
        flags = ("--no-color", "--no-ext-diff", "--no-textconv", "-M", "--src-prefix=a/")
        return self._git("diff", *flags, "--dst-prefix=b/", *args).stdout

    def compare(self, base: str, head: str) -> list[FileChange]:
        """Changed files from merge-base(base, head) to head (GitHub's three-dot compare)."""
        mb, h = self._range(base, head)
        raw = self._diff("--raw", "-z", "--no-abbrev", mb, h)
        sections = _split_patch(self._diff("-p", mb, h))
        changes = []
        for entry in _parse_raw(raw):
            taken = 2 if entry.split else 1
            parts, sections = sections[:taken], sections[taken:]
            changes.append(_file_change(entry, parts))
        if sections:
            raise GitError("git diff printed more file sections than it listed changes")
        return changes

    def diff_text(self, base: str, head: str) -> str:
        """The full unified diff from merge-base(base, head) to head."""
        mb, h = self._range(base, head)
        return self._diff("-p", mb, h).decode("utf-8", "replace")

    # -- trees and blobs

    def _ls_tree(self, commit: str, parts: list[str]) -> list[TreeEntry] | None:
        spec = f"{commit}:{'/'.join(parts)}" if parts else f"{commit}^{{tree}}"
        proc = self._git("ls-tree", "-z", "--long", spec, ok=(0, 128))
        if proc.returncode != 0:
            return None
        prefix = "".join(f"{p}/" for p in parts)
        return [_tree_entry(rec, prefix) for rec in proc.stdout.split(b"\0") if rec]

    def list_tree(self, rev: str, path: str = "") -> list[TreeEntry] | None:
        """The entries of the directory at `path` in `rev`; None if it is not a directory."""
        sha, parts = self.resolve(rev), _path_parts(path)
        if sha is None or parts is None:
            return None
        return self._ls_tree(sha, parts)

    def entry_at(self, rev: str, path: str) -> TreeEntry | None:
        sha, parts = self.resolve(rev), _path_parts(path)
        if sha is None or parts is None:
            return None
        if not parts:
            tree = self._out("rev-parse", f"{sha}^{{tree}}")
            return TreeEntry(path="", name="", type="dir", sha=tree, size=0, mode="040000")
        siblings = self._ls_tree(sha, parts[:-1]) or []
        return next((e for e in siblings if e.name == parts[-1]), None)

    def read_blob(self, rev: str, path: str) -> bytes | None:
        """File content (a symlink's target) at `rev`, or None if there is no file there."""
        entry = self.entry_at(rev, path)
        if entry is None or entry.type not in ("file", "symlink"):
            return None
        return self._git("cat-file", "blob", entry.sha).stdout

    def export_tree(self, rev: str, dest: Path) -> None:
        """Write the files of commit `rev` into `dest`, which must be absent or empty."""
        sha, dest = self._commit(rev), Path(dest)
        if dest.exists() and any(dest.iterdir()):
            raise ValueError(f"export destination is not empty: {dest}")
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="sandbox-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", sha, env=env)
            self._git(f"--work-tree={dest}", "checkout-index", "--all", env=env)

    # -- merges

    def mergeable(self, base: str, head: str) -> bool:
        b, h = self._commit(base), self._commit(head)
        if self.merge_base(b, h) is None:
            return False
        return self._merge_trees(b, h) is not None

    def _merge_trees(self, ours: str, theirs: str) -> str | None:
        """The merged tree of two commits, or None when the merge conflicts."""
        proc = self._git("merge-tree", "--write-tree", "--no-messages", ours, theirs, ok=(0, 1))
        if proc.returncode == 1:
            return None
        return proc.stdout.decode().split("\n", 1)[0].strip()

    def merge(
        self,
        base_ref: str,
        head_sha: str,
        method: str,
        *,
        title: str,
        message: str,
        author: tuple[str, str],
        expected_base: str | None = None,
    ) -> str:
        """Merge `head_sha` into `base_ref` by "merge", "squash" or "rebase" and move the ref
        atomically. Raises MergeConflict when the merge is not clean, there is nothing to merge,
        or the ref is not at `expected_base` (or moves meanwhile). Returns the new base sha."""
        if method not in ("merge", "squash", "rebase"):
            raise ValueError(f"unknown merge method: {method!r}")
        ref = base_ref if base_ref.startswith("refs/") else f"refs/heads/{base_ref}"
        with repo_lock(self.path):
            base = self._commit(ref)
            if expected_base is not None and base != expected_base:
                raise MergeConflict(f"{ref} is at {base}, not the expected {expected_base}")
            head = self._commit(head_sha)
            new = self._merged_commit(base, head, method, title, message, author)
            try:
                self._update_ref_locked(ref, new, base)
            except RefConflict as exc:
                raise MergeConflict(str(exc)) from exc
        return new

    def merged_commit(
        self, base: str, head: str, method: str, *, title: str, author: tuple[str, str]
    ) -> str:
        """The commit `merge` would put on the base, built without moving any ref (a merge
        queue's group, a pull request branch brought up to date). Raises MergeConflict."""
        b, h = self._commit(base), self._commit(head)
        return self._merged_commit(b, h, method, title, "", author)

    def _merged_commit(
        self, base: str, head: str, method: str, title: str, message: str, author: tuple[str, str]
    ) -> str:
        if self.merge_base(base, head) is None:
            raise MergeConflict("the head shares no history with the base")
        commits = self.commits_between(base, head)
        picks = [c for c in commits if len(c.parents) == 1]  # rebase drops merge commits
        if not commits or (method == "rebase" and not picks):
            raise MergeConflict("nothing to merge: the head is already in the base")
        if method == "rebase":
            return self._rebase(base, picks)
        tree = self._merge_trees(base, head)
        if tree is None:
            raise MergeConflict("the head does not merge cleanly into the base")
        text = f"{title}\n\n{message}" if message else title
        parents = [base, head] if method == "merge" else [base]
        return self._commit_tree(tree, parents, text, author)

    def _commit_tree(
        self,
        tree: str,
        parents: Sequence[str],
        message: str,
        author: tuple[str, str],
        author_date: str | None = None,
    ) -> str:
        env = {
            **_person_env("AUTHOR", author, author_date),
            **_person_env("COMMITTER", MERGE_COMMITTER),
        }
        args = [a for p in parents for a in ("-p", p)]
        return self._out("commit-tree", tree, *args, input=message.encode(), env=env)

    def _rebase(self, base: str, picks: list[CommitInfo]) -> str:
        current = base
        for commit in picks:
            tree = self._pick_tree(current, commit)
            if tree is None:
                raise MergeConflict(f"commit {commit.sha} does not apply cleanly on the base")
            date = str(_epoch(commit.author_date))
            who = (commit.author_name, commit.author_email)
            current = self._commit_tree(tree, [current], commit.message, who, f"@{date} +0000")
        return current

    def _pick_tree(self, onto: str, commit: CommitInfo) -> str | None:
        """Cherry-pick `commit` onto `onto`: a three-way merge whose base is the commit's parent.

        git 2.39's merge-tree has no --merge-base, so the base is forced by merging two throwaway
        commits whose only common ancestor carries the parent's tree."""
        parent_tree = self.commit_info(commit.parents[0]).tree_sha
        onto_tree = self.commit_info(onto).tree_sha
        fixed = ("Sandbox", "sandbox@sandbox.invalid")
        stub = self._commit_tree(parent_tree, [], "pick base", fixed, "@0 +0000")
        theirs = self._commit_tree(commit.tree_sha, [stub], "pick", fixed, "@0 +0000")
        ours = self._commit_tree(onto_tree, [stub], "onto", fixed, "@0 +0000")
        return self._merge_trees(ours, theirs)

    # -- ref writes

    def update_ref(self, ref: str, new: str, old: str | None = None) -> None:
        """Point `ref` (a full "refs/..." name) at commit `new`. With `old` (ZERO_SHA = must not
        exist) the update happens only if the ref is still there, else RefConflict."""
        with repo_lock(self.path):
            self._update_ref_locked(ref, new, old)

    def _update_ref_locked(self, ref: str, new: str, old: str | None) -> None:
        _check_ref_name(ref)
        sha = self._commit(new)
        current = self.refs().get(ref, ZERO_SHA)
        if old is not None and current != old:
            raise RefConflict(f"{ref} is at {current}, not the expected {old}")
        self._git("update-ref", ref, sha, current)

    def delete_ref(self, ref: str) -> None:
        _check_ref_name(ref)
        with repo_lock(self.path):
            current = self.refs().get(ref)
            if current is None:
                raise UnknownRevision(f"no such ref: {ref}")
            self._git("update-ref", "-d", ref, current)


# --- parsing helpers ---------------------------------------------------------------------------


def _check_ref_name(ref: str) -> None:
    # git accepts "refs/heads/-x", but a name component read as an option is never wanted here.
    ok = ref.startswith("refs/") and _valid_rev(ref) and "/-" not in ref
    if ok:
        proc = subprocess.run(
            ["git", "check-ref-format", ref], env=isolated_env(), capture_output=True, check=False
        )
        ok = proc.returncode == 0
    if not ok:
        raise ValueError(f"not a valid full ref name: {ref!r}")


def _epoch(iso: str) -> int:
    return int(datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp())


def _parse_person(value: bytes) -> tuple[str, str, str]:
    match = _PERSON.match(value)
    if match is None:
        return value.decode("utf-8", "replace"), "", _iso(0)
    name, email, ts = match.groups()
    return name.decode("utf-8", "replace"), email.decode("utf-8", "replace"), _iso(int(ts))


def _parse_commit(sha: str, body: bytes) -> CommitInfo:
    head, _, message = body.partition(b"\n\n")
    tree, parents = "", []
    people: dict[bytes, tuple[str, str, str]] = {}
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = value.decode()
        elif key == b"parent":
            parents.append(value.decode())
        elif key in (b"author", b"committer"):
            people[key] = _parse_person(value)
    author = people.get(b"author", ("", "", _iso(0)))
    committer = people.get(b"committer", author)
    return CommitInfo(
        sha=sha,
        tree_sha=tree,
        parents=tuple(parents),
        message=message.decode("utf-8", "replace").rstrip("\n"),
        author_name=author[0],
        author_email=author[1],
        author_date=author[2],
        committer_name=committer[0],
        committer_email=committer[1],
        committer_date=committer[2],
    )


def _tree_entry(record: bytes, prefix: str) -> TreeEntry:
    meta, _, raw_name = record.partition(b"\t")
    mode, _kind, sha, size = meta.decode().split()
    name = raw_name.decode("utf-8", "replace")
    return TreeEntry(
        path=prefix + name,
        name=name,
        type=_TREE_TYPES.get(mode, "file"),
        sha=sha,
        size=0 if size == "-" else int(size),
        mode=mode,
    )


@dataclass(frozen=True)
class _RawEntry:
    status: str
    path: str
    old_path: str | None
    new_sha: str
    split: bool  # git prints a file <-> symlink/submodule change as a deletion plus a creation


def _parse_raw(raw: bytes) -> Iterator[_RawEntry]:
    """Entries of `git diff --raw -z --no-abbrev` (":m1 m2 sha1 sha2 S\\0path[\\0path2]\\0")."""
    fields = raw.split(b"\0")
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        meta = fields[i][1:].decode().split()
        status = meta[4][0]
        if status in ("R", "C"):
            old, new = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old, new = None, fields[i + 1]
            i += 2
        old_type, new_type = (int(m, 8) & 0o170000 for m in meta[:2])
        yield _RawEntry(
            split=bool(old_type and new_type and old_type != new_type),
            status=status,
            path=new.decode("utf-8", "replace"),
            old_path=old.decode("utf-8", "replace") if old is not None else None,
            new_sha=meta[3],
        )


def _split_patch(patch: bytes) -> list[list[bytes]]:
    """The lines of `git diff -p` grouped per "diff --git" section, in output order. A hunk line
    starts with " ", "+", "-" or "\\", so it can never be mistaken for a section header."""
    sections: list[list[bytes]] = []
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            sections.append([])
        if sections:
            sections[-1].append(line)
    return sections


def _file_change(entry: _RawEntry, sections: list[list[bytes]]) -> FileChange:
    binary, hunks = False, list[bytes]()
    for lines in sections:
        start = next((i for i, ln in enumerate(lines) if ln.startswith(b"@@")), len(lines))
        binary = binary or any(ln.startswith(b"Binary files ") for ln in lines[:start])
        hunks.extend(ln for ln in lines[start:])
    while hunks and hunks[-1] == b"":
        hunks.pop()
    adds = sum(1 for ln in hunks if ln.startswith(b"+"))
    dels = sum(1 for ln in hunks if ln.startswith(b"-"))
    patch = b"\n".join(hunks).decode("utf-8", "replace") if hunks and not binary else None
    return FileChange(
        filename=entry.path,
        previous_filename=entry.old_path,
        status=_STATUS.get(entry.status, "changed"),
        additions=adds,
        deletions=dels,
        patch=patch,
        blob_sha=None if entry.status == "D" else entry.new_sha,
        binary=binary,
    )
