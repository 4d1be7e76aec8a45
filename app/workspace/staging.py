"""Staging a worktree's files as a tree, in quarantine: nothing enters the repository's object
store until the commit that holds it is kept.

`git add -A` writes every new file into the object store before anyone has judged it; a 48 MiB
file a command left behind, or a file that is then refused, would stay in the user's repository
(or ourobot's mirror) for good. So a snapshot is built in a private index with its new objects
in a quarantine directory of its own (git reads the repository's objects as alternates), the
guards judge that tree, and only a commit that is kept moves its quarantine into the store.

Files are sized before anything is hashed: a file larger than a change may be is refused by
its size alone (a 1 GiB sparse file costs a `stat`, not a minute of hashing).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class OversizedFile(Exception):
    """A file too large to be part of any change; never hashed."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(f"{path}: {size:,} bytes, over the {limit:,} bytes a change may hold")
        self.path = path
        self.size = size
        self.limit = limit


@dataclass
class Quarantine:
    """A directory new objects are written to, in place of the repository's object store."""

    root: Path
    store: Path  # the repository's objects directory (read as an alternate)

    @classmethod
    def create(cls, parent: Path, store: Path) -> Quarantine:
        return cls(Path(tempfile.mkdtemp(prefix="quarantine-", dir=parent)), store)

    def env(self) -> dict[str, str]:
        return {
            "GIT_OBJECT_DIRECTORY": str(self.root),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.store),
        }

    def admit(self) -> int:
        """Move every object of the quarantine into the store; how many were moved. Each lands
        under its final name by a rename, as git writes objects, so a reader never sees half."""
        moved = 0
        for folder in sorted(self.root.iterdir()):
            if not folder.is_dir() or len(folder.name) != 2:
                continue
            target = self.store / folder.name
            target.mkdir(exist_ok=True)
            for item in folder.iterdir():
                final = target / item.name
                if final.exists():
                    continue
                staging = target / f".tmp-{item.name}"
                shutil.copyfile(item, staging)
                os.chmod(staging, 0o444)
                os.replace(staging, final)
                moved += 1
        return moved

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def check_sizes(root: Path, paths: Iterable[str], limit: int) -> None:
    """Raise `OversizedFile` for the first regular file among `paths` (relative to `root`)
    whose size is over `limit`; links and missing files are not followed or counted."""
    for path in paths:
        try:
            info = os.lstat(root / path)
        except OSError:
            continue
        if not os.path.islink(root / path) and info.st_size > limit:
            raise OversizedFile(path, info.st_size, limit)


@dataclass
class Snapshot:
    """A worktree's files as a tree whose new objects are still in quarantine."""

    tree: str
    index: Path  # the private index the tree was written from (stat data included)
    quarantine: Quarantine

    def discard(self) -> None:
        self.quarantine.discard()
        self.index.unlink(missing_ok=True)


def private_index(admin: Path, scratch: Path) -> Path:
    """A copy of the worktree's own index (its stat data spares re-hashing unchanged files).

    The copy keeps the index's modification time: git re-reads a file whose stat data is as
    new as the index ("racily clean"), and a copy stamped now would make a same-size edit made
    in the index's own second look unchanged."""
    fd, name = tempfile.mkstemp(prefix="index-", dir=scratch)
    os.close(fd)
    index = Path(name)
    own = admin / "index"
    if own.is_file():
        shutil.copy2(own, index)
    else:
        index.unlink()
    return index


def install_index(index: Path, admin: Path) -> None:
    """Make `index` the worktree's own (after the commit it describes is kept)."""
    os.replace(index, admin / "index")
