"""Writing and removing files in a tree that code under test has had its hands on.

A checkout or a worktree holds whatever the repository committed and whatever a command left:
a file may be a link to `/etc/passwd`, a folder a link to `/home`, a folder mode 0300 that
cannot be listed, a path longer than `PATH_MAX`. So ourobot's own writes there walk the path a
component at a time from a descriptor of the root, never following a link (`O_NOFOLLOW`), and
its removals make each folder listable before they empty it. Nothing here ever touches a file
outside the root.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

# Folders deeper than this are not measured (a measurement that could not be made).
MAX_WALK_DEPTH = 256
# What every entry costs at least, as a filesystem allocates it (du counts a block): an empty
# file or folder still takes an inode, so a million of them must weigh something.
ENTRY_BYTES = 4096
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class OutsideTree(OSError):
    """A path that leads through a link or out of the root: nothing was written."""


@contextlib.contextmanager
def _opened(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def _parts(relative: str) -> list[str]:
    parts = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise OutsideTree(f"{relative!r} is not a path inside the tree")
    return parts


def _parent_fd(root: Path, parts: list[str], *, create: bool) -> int:
    """A descriptor of the folder that holds `parts[-1]`, made when `create`."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise OutsideTree(f"{'/'.join(parts)}: {name} is not a folder") from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_beneath(root: Path, relative: str, data: bytes) -> None:
    """Write `data` to `root/relative`: a link in its place is replaced by the file, a link
    on the way is never followed (`OutsideTree`)."""
    parts = _parts(relative)
    with _opened(_parent_fd(root, parts, create=True)) as parent:
        with contextlib.suppress(FileNotFoundError):
            info = os.lstat(parts[-1], dir_fd=parent)
            if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
                _remove_entry(parent, parts[-1])
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, 0o644, dir_fd=parent)
        with _opened(fd):
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]


def remove_beneath(root: Path, relative: str) -> None:
    """Remove `root/relative` (a link as a link, a folder whole) if it is there."""
    parts = _parts(relative)
    try:
        parent = _parent_fd(root, parts, create=False)
    except (OutsideTree, FileNotFoundError):
        return
    with _opened(parent):
        _remove_entry(parent, parts[-1])


def remove_empty_beneath(root: Path, relative: str) -> None:
    """Remove `root/relative` only when it is an empty folder or an empty file, reached
    without following a link on the way (a link in its place is left alone)."""
    try:
        parts = _parts(relative)
        parent = _parent_fd(root, parts, create=False)
    except OSError:
        return
    with _opened(parent), contextlib.suppress(OSError):
        info = os.lstat(parts[-1], dir_fd=parent)
        if stat.S_ISDIR(info.st_mode):
            os.rmdir(parts[-1], dir_fd=parent)  # only when empty: anything in it is someone's
        elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
            os.unlink(parts[-1], dir_fd=parent)


def remove_tree(path: Path) -> list[str]:
    """Remove `path` whole, whatever a run did to it (folders it made unlistable, links,
    paths beyond PATH_MAX); what could not be removed, in words (empty when all went)."""
    left: list[str] = []
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return left
    if not stat.S_ISDIR(info.st_mode):
        path.unlink(missing_ok=True)
        return left
    try:
        parent = os.open(path.parent, _DIR_FLAGS)
    except OSError as exc:
        return [f"{path}: {exc.strerror}"]
    try:
        with _opened(parent):
            _remove_entry(parent, path.name, left, str(path))
    except RecursionError:
        # A tree deeper than Python's stack (a run can nest folders thousands deep): GNU rm
        # walks any depth and never follows a link.
        proc = subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)],
                              capture_output=True, check=False)  # fmt: skip
        if proc.returncode != 0 or os.path.lexists(path):
            left.append(f"{path}: {proc.stderr.decode(errors='replace').strip()[-200:]}")
    return left


def _remove_entry(parent: int, name: str, left: list[str] | None = None, shown: str = "") -> None:
    left = [] if left is None else left
    try:
        info = os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        try:
            os.unlink(name, dir_fd=parent)
        except OSError as exc:
            left.append(f"{shown or name}: {exc.strerror}")
        return
    with contextlib.suppress(OSError):
        # Known to be a folder (lstat above): a run may have left it unlistable.
        os.chmod(name, 0o700, dir_fd=parent)
    try:
        child = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        left.append(f"{shown or name}: {exc.strerror}")
        return
    with _opened(child):
        for entry in os.listdir(child):
            _remove_entry(child, entry, left, f"{shown or name}/{entry}")
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError as exc:
        left.append(f"{shown or name}: {exc.strerror}")


def walk_sizes(root: Path, skip: Iterable[str] = ()) -> tuple[int, bool]:
    """(the size of everything under `root`, each entry at least `ENTRY_BYTES`, whether all
    of it could be measured).
    Walks by descriptor (no PATH_MAX), never follows a link; `skip` names top-level entries."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return 0, not root.exists()
    with _opened(fd):
        return _sizes(fd, set(skip), 0)


def _sizes(fd: int, skip: set[str], depth: int) -> tuple[int, bool]:
    if depth >= MAX_WALK_DEPTH:
        return 0, False  # deeper than any project: not measured, so never counted as fine
    total, whole = 0, True
    try:
        names = os.listdir(fd)
    except OSError:
        return 0, False
    for name in names:
        if name in skip:
            continue
        try:
            info = os.lstat(name, dir_fd=fd)
        except OSError:
            whole = False
            continue
        if not stat.S_ISDIR(info.st_mode):
            total += max(info.st_size, ENTRY_BYTES)
            continue
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            whole = False
            continue
        with _opened(child):
            size, complete = _sizes(child, set(), depth + 1)
        total += size + ENTRY_BYTES
        whole = whole and complete
    return total, whole
