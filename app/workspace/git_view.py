"""The repository as an agent's commands may see it through git: a small copy, never the real
object store.

A command may run `git status`, `git diff`, `git log` or `git show` inside the cage. Mounting the
repository's git directory for that, even read-only, would hand it every object ever stored
there: `git show HEAD:.env` prints the secret file the worktree masks, and
`git cat-file --batch-all-objects` prints everything else. So commands get a view instead: a
bare repository of its own with the base commit and each of ourobot's commits since, rebuilt by
`git fast-import` from their trees with every secret file (`is_secret`) emptied, and an index
that matches the worktree's HEAD. Nothing a command does there reaches the real repository.
"""

from __future__ import annotations

import secrets as tokens
import subprocess
from collections.abc import Callable
from pathlib import Path

from app.workspace.git import GitError, git, git_bytes, hardened, isolated_env, repo_env
from app.workspace.tree_files import remove_tree

# Past this much file content at a commit, no view is built: git is not available inside.
MAX_VIEW_BYTES = 256 * 1024 * 1024
VIEW_BRANCH = "refs/heads/ourobot-view"
_COMMITTER = "ourobot <ourobot@users.noreply.github.com> 0 +0000"


def build_view(
    admin: Path,
    work_tree: Path,
    base_sha: str,
    dest: Path,
    is_secret: Callable[[str], bool],
) -> Path | None:
    """A view of base..HEAD at `dest` (made once per HEAD: an existing `dest` is reused); None
    when the commits hold too much to copy."""
    if (dest / "HEAD").is_file():
        return dest
    env = repo_env(admin, work_tree)
    chain = [base_sha, *_lines(git(["rev-list", "--reverse", f"{base_sha}..HEAD"], cwd=admin,
                                   env=env).stdout)]  # fmt: skip
    partial = dest.with_name(dest.name + f".tmp-{tokens.token_hex(4)}")
    try:
        git(["init", "--bare", "-q", "--template=", str(partial)], cwd=admin)
        view_env = repo_env(partial)
        # Commands pair it with the worktree (GIT_WORK_TREE): not a bare repository to them.
        git(["config", "core.bare", "false"], cwd=admin, env=view_env)
        stream = _stream(admin, env, chain, is_secret)
        if stream is None:
            return None
        proc = subprocess.run(
            ["git", "fast-import", "--quiet", "--done"], input=b"".join(stream),
            env=hardened(isolated_env(view_env)), capture_output=True, check=False, timeout=600,
        )  # fmt: skip
        if proc.returncode != 0:
            raise GitError(f"git fast-import failed: {proc.stderr.decode(errors='replace')[-300:]}")
        git(["symbolic-ref", "HEAD", VIEW_BRANCH], cwd=admin, env=view_env)
        index = {**repo_env(partial, work_tree, index=partial / "index")}
        git(["read-tree", VIEW_BRANCH], cwd=admin, env=index)
        git_bytes(["update-index", "-q", "--refresh"], cwd=admin, env=index, ok=(0, 1))
        partial.rename(dest)
        return dest
    finally:
        remove_tree(partial)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def _stream(
    admin: Path, env: dict[str, str], chain: list[str], is_secret: Callable[[str], bool]
) -> list[bytes] | None:
    """fast-import commands: the base with every file, then each commit's changes."""
    out: list[bytes] = []
    total = 0
    previous: str | None = None
    for number, commit in enumerate(chain, start=1):
        entries = _changes(admin, env, previous, commit)
        blobs = _contents(admin, env, [sha for _, sha, path, _ in entries
                                       if sha and not is_secret(path)])  # fmt: skip
        total += sum(len(b) for b in blobs.values())
        if total > MAX_VIEW_BYTES:
            return None
        message = git(["log", "-1", "--format=%B", commit], cwd=admin, env=env).stdout.encode()
        out.append(f"commit {VIEW_BRANCH}\nmark :{number}\ncommitter {_COMMITTER}\n".encode())
        out.append(b"data %d\n%s\n" % (len(message), message))
        if previous is None:
            out.append(b"deleteall\n")
        else:
            out.append(f"from :{number - 1}\n".encode())
        for mode, sha, path, deleted in entries:
            quoted = path.replace("\n", " ").encode("utf-8", "surrogateescape")
            if deleted:
                out.append(b"D " + quoted + b"\n")
                continue
            data = b"" if is_secret(path) else blobs.get(sha, b"")
            out.append(f"M {mode} inline ".encode() + quoted + b"\n")
            out.append(b"data %d\n%s\n" % (len(data), data))
        previous = commit
    out.append(b"done\n")
    return out


def _changes(
    admin: Path, env: dict[str, str], previous: str | None, commit: str
) -> list[tuple[str, str, str, bool]]:
    """(mode, blob, path, deleted) for every file of `commit` (or what changed since
    `previous`); submodules are left out (a view holds no other repository)."""
    if previous is None:
        raw = git_bytes(["ls-tree", "-r", "-z", "--full-tree", commit], cwd=admin, env=env).stdout
        entries = []
        for record in _records(raw):
            meta, _, path = record.partition(b"\t")
            mode, kind, sha = meta.split()
            if kind == b"blob":
                entries.append((mode.decode(), sha.decode(), _name(path), False))
        return entries
    raw = git_bytes(["diff-tree", "-r", "-z", "--no-renames", previous, commit], cwd=admin,
                    env=env).stdout  # fmt: skip
    tokens_ = _records(raw)
    found = []
    for meta, path in zip(tokens_[::2], tokens_[1::2], strict=False):
        parts = meta.decode().lstrip(":").split()
        new_mode, new_sha, status = parts[1], parts[3], parts[4]
        if new_mode == "160000":
            continue
        found.append((new_mode, new_sha, _name(path), status == "D"))
    return found


def _records(raw: bytes) -> list[bytes]:
    return [part for part in raw.split(b"\0") if part]


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _contents(admin: Path, env: dict[str, str], shas: list[str]) -> dict[str, bytes]:
    """Blob contents by id, read in one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    proc = git_bytes(["cat-file", "--batch"], cwd=admin, env=env,
                     stdin="".join(f"{sha}\n" for sha in wanted).encode())  # fmt: skip
    found: dict[str, bytes] = {}
    data = proc.stdout
    position = 0
    for sha in wanted:
        end = data.index(b"\n", position)
        header = data[position:end].split()
        position = end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        found[sha] = data[position : position + size]
        position += size + 1
    return found
