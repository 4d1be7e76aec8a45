"""ourobot's own writes and removals in trees code under test has touched: never through a link,
whatever the run left (links, unlistable folders, paths beyond PATH_MAX)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.workspace.tree_files import OutsideTree, remove_tree, walk_sizes, write_beneath


def test_a_write_replaces_a_link_in_its_place_and_never_follows_one_on_the_way(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deploy.pem").write_text("host file")
    tree = tmp_path / "tree"
    (tree / "ops").mkdir(parents=True)
    (tree / "ops" / "deploy.pem").symlink_to(outside / "deploy.pem")
    (tree / "linked").symlink_to(outside)
    write_beneath(tree, "ops/deploy.pem", b"")
    assert (outside / "deploy.pem").read_text() == "host file"
    assert not (tree / "ops" / "deploy.pem").is_symlink()
    with pytest.raises(OutsideTree):
        write_beneath(tree, "linked/deploy.pem", b"x")
    assert (outside / "deploy.pem").read_text() == "host file"


def test_removal_gets_through_unlistable_folders_and_leaves_what_links_point_at(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    tree = tmp_path / "tree"
    hidden = tree / "a" / "hidden"
    hidden.mkdir(parents=True)
    (hidden / "big.bin").write_bytes(b"x" * 1024)
    (tree / "a" / "link").symlink_to(outside)
    hidden.chmod(0o300)
    (tree / "a").chmod(0o500)
    assert remove_tree(tree) == []
    assert not tree.exists() and (outside / "keep.txt").read_text() == "keep"


def test_sizes_are_measured_beyond_path_max_without_following_links(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
    for n in range(60):  # about 6,000 characters of path: more than PATH_MAX
        name = f"d{n:02d}" + "x" * 95
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    file = os.open("file", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(file, b"y" * 4096)
    os.close(file)
    os.close(fd)
    (tree / "link").symlink_to("/usr")
    size, whole = walk_sizes(tree)
    # 60 folders and the file at a block each, and the link as one entry, not what it names.
    assert size == 60 * 4096 + 4096 + 4096 and whole
    assert remove_tree(tree) == [] and not tree.exists()
