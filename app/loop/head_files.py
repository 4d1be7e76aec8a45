"""The text files of one revision, read from git objects (never the work tree) in one batch.

The first view ranks every file, so it reads them all at once: `ls-tree` for the paths,
sizes and object ids, then one `cat-file --batch` for the contents. Symbolic links and
submodules are left out (a link's target is not a file of the repository), and so are binary
files (a NUL byte in the first 8,000 bytes, as git judges). The caller passes its own
`git_raw`, so a cycle reads through its workspace's isolated git and a benchmark through a
plain one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

BINARY_PROBE_BYTES = 8_000


class GitRaw(Protocol):
    def __call__(
        self, *args: str, ok: Sequence[int] = ..., stdin: bytes | None = ...
    ) -> tuple[int, bytes]: ...


@dataclass(frozen=True)
class Blob:
    path: str
    oid: str
    size: int


def tree_blobs(git_raw: GitRaw, rev: str) -> list[Blob]:
    """Every regular file of `rev`'s tree with its object id and size."""
    _, out = git_raw("ls-tree", "-r", "-z", "-l", "--full-tree", rev)
    found: list[Blob] = []
    for record in out.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == b"blob" and parts[0] != b"120000":
            path = name.decode("utf-8", "surrogateescape")
            found.append(Blob(path, parts[2].decode("ascii"), int(parts[3])))
    return found


def read_texts(
    git_raw: GitRaw, blobs: Iterable[Blob], wanted: Callable[[Blob], bool] = lambda b: True
) -> dict[str, str]:
    """Path -> text of the wanted blobs that are text (decoded as UTF-8, errors replaced)."""
    chosen = [blob for blob in blobs if wanted(blob)]
    if not chosen:
        return {}
    request = b"".join(blob.oid.encode("ascii") + b"\n" for blob in chosen)
    _, out = git_raw("cat-file", "--batch", stdin=request)
    texts: dict[str, str] = {}
    at = 0
    for blob in chosen:
        header_end = out.index(b"\n", at)
        fields = out[at:header_end].split()
        if len(fields) != 3 or fields[1] != b"blob":  # "<oid> missing": nothing follows
            at = header_end + 1
            continue
        size = int(fields[2])
        data = out[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
        if b"\0" not in data[:BINARY_PROBE_BYTES]:
            texts[blob.path] = data.decode("utf-8", "replace")
    return texts
