"""Red team, pass 2: a tree nested deeper than Python's stack (a command or a test can make one
in a few milliseconds) is measured as not measurable and removed whole, never a crash."""

from __future__ import annotations

import os
from pathlib import Path

from app.workspace.tree_files import remove_tree, walk_sizes


def _deep(root: Path, depth: int) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as handle:
        handle.write(b"x" * 10)
    os.close(fd)


def test_a_tree_deeper_than_the_stack_is_not_measured_and_is_removed(tmp_path: Path):
    root = tmp_path / "tree"
    root.mkdir()
    _deep(root, 1500)
    size, whole = walk_sizes(root)
    assert not whole  # not measured, so never counted as fine
    assert size == 256 * 4096  # the folders it could measure, a block each
    assert remove_tree(root) == []
    assert not root.exists()
