"""What an iteration destroys, on plain data: hunks as `git diff` shows them, lines replaced in
their hunk or moved anywhere in the iteration, and the share of a file's telling lines kept."""

from __future__ import annotations

from app.guards.changes import ChangeSet, FileChange, Line
from app.guards.destruction import Loss, hunks, losses
from app.guards.lines import line_delta


def change(old: list[str] | None, new: list[str] | None, path: str = "f.py") -> FileChange:
    def blob(lines: list[str] | None) -> bytes | None:
        return None if lines is None else "".join(f"{line}\n" for line in lines).encode()

    delta = line_delta(blob(old), blob(new))
    status = "added" if old is None else "deleted" if new is None else "modified"
    return FileChange(
        status, None if old is None else path, None if new is None else path,
        added=delta.added, removed=delta.removed, old_line_count=delta.old_count,
        new_line_count=delta.new_count, old_telling_count=delta.old_telling,
    )  # fmt: skip


def lost(*changes: FileChange) -> dict[str, tuple[int, int | None]]:
    """path -> (lines removed without replacement, percent of telling lines kept)."""
    found: list[Loss] = losses(ChangeSet(changes, "repo", 0))
    return {loss.change.path: (loss.unreplaced, loss.kept_percent) for loss in found}


def text(count: int, template: str = "statement_{} = compute({}, factor=2)") -> list[str]:
    return [template.format(n, n) for n in range(count)]


def shape(change: FileChange) -> list[tuple[int, int]]:
    return [(len(hunk.removed), len(hunk.added)) for hunk in hunks(change)]


def test_changes_fewer_than_seven_lines_apart_are_one_hunk_as_git_shows_them():
    old = text(40)
    near = [*old[:10], "changed a", *old[11:17], "changed b", *old[18:]]  # 6 lines between
    far = [*old[:10], "changed a", *old[11:18], "changed b", *old[19:]]  # 7 lines between
    assert shape(change(old, near)) == [(2, 2)]
    assert shape(change(old, far)) == [(1, 1), (1, 1)]
    removed_then_added = [*old[:10], *old[13:16], "new 1", "new 2", *old[16:]]
    assert shape(change(old, removed_then_added)) == [(3, 2)]


def test_the_walk_pairs_the_unchanged_lines_of_both_sides_whatever_the_offsets():
    old = text(60)
    new = ["header 1", "header 2", *old[:20], *old[25:50], "tail"]
    assert shape(change(old, new)) == [(0, 2), (5, 0), (10, 1)]
    # Numbers that do not follow on, as a hand-made diff may give: every line still counted.
    odd = FileChange("modified", "x", "x", removed=(Line(0, "a", 1), Line(0, "b", 1)))
    assert [len(hunk.removed) for hunk in hunks(odd)] == [2]


def test_a_modified_line_replaces_and_destroys_nothing():
    old = text(100)
    new = [
        line.replace("factor=2", "factor=3") if n % 3 == 0 else line for n, line in enumerate(old)
    ]
    assert lost(change(old, new)) == {"f.py": (0, 66)}


def test_lines_removed_beyond_those_their_hunk_adds_are_destroyed():
    old = text(100)
    new = [*old[:40], "one line for three", *old[43:]]
    assert lost(change(old, new)) == {"f.py": (2, 97)}
    # Far from the removal, an added line replaces nothing there.
    new = [*old[:40], *old[43:90], "unrelated", *old[90:]]
    assert lost(change(old, new)) == {"f.py": (3, 97)}


def test_a_block_moved_in_its_file_or_to_another_is_kept():
    old = text(100)
    moved_down = [*old[:10], *old[40:], *old[10:40]]
    assert lost(change(old, moved_down)) == {}
    extracted = change(old, [*old[:10], *old[40:]])
    module = change(None, ["import x", "", *("    " + line for line in old[10:40])], "g.py")
    assert lost(extracted, module) == {}


def test_a_block_re_indented_under_a_new_line_is_kept():
    old = text(50)
    new = [*old[:10], "with lock:", *("    " + line for line in old[10:30]), *old[30:]]
    assert lost(change(old, new)) == {}


def test_an_added_line_stands_for_one_removed_line_only():
    old = ["same line repeated here"] * 3 + text(40)
    new = ["same line repeated here", *text(40)]
    # Two copies gone: the one left stands for one of the three, not for all of them.
    assert lost(change(old, new)) == {"f.py": (2, 95)}
    # A line moved from where something else took its place: the other hunk loses its line.
    old = text(60)
    new = [old[0], "brand new", *old[2:30], old[1], *old[30:45], *old[46:]]
    # Line 1 moved down (kept) and was replaced by a new line; line 45 went without trace.
    assert lost(change(old, new)) == {"f.py": (1, 98)}


def test_a_rewrite_keeps_its_length_and_loses_its_lines():
    old = text(300)
    new = text(300, "rewritten_{} = guess({})")
    assert lost(change(old, new)) == {"f.py": (0, 0)}
    # Blank lines and braces say nothing: they are not counted as kept.
    old = [line for n in range(100) for line in (f"paragraph {n} says something", "", "}")]
    new = [line for n in range(100) for line in (f"para {n}: other words", "", "}")]
    assert lost(change(old, new)) == {"f.py": (0, 0)}


def test_the_share_kept_is_unknown_where_the_old_file_was_not_read_whole():
    partial = FileChange("modified", "x", "x", removed=(Line(3, "a removed line", 3),))
    assert lost(partial) == {"x": (1, None)}


def test_a_deleted_file_destroys_every_line_unless_they_went_elsewhere():
    old = text(30)
    assert lost(change(old, None)) == {"f.py": (30, 0)}
    assert lost(change(old, None), change(None, old, "moved.py")) == {}
