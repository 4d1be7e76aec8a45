"""Line counting from blob bytes: the classic diff, and the linear fallback for huge rewrites."""

from __future__ import annotations

from app.guards.lines import is_binary, line_delta


def numbered(count: int) -> list[bytes]:
    return [f"line {n}".encode() for n in range(count)]


def test_a_local_edit_has_exact_positions():
    old = b"a\nb\nc\nd\n"
    delta = line_delta(old, b"a\nB\nc\nd\ne\n")
    assert [(line.number, line.text) for line in delta.added] == [(2, "B"), (5, "e")]
    assert [(line.number, line.text, line.anchor) for line in delta.removed] == [(2, "b", 2)]
    assert (delta.old_count, delta.new_count) == (4, 5)


def test_added_and_deleted_files():
    assert len(line_delta(None, b"x\ny\n").added) == 2
    gone = line_delta(b"x\ny\nz", None)
    assert [line.text for line in gone.removed] == ["x", "y", "z"]
    assert gone.new_count == 0


def test_binary_sides_add_no_lines_and_lose_none():
    assert is_binary(b"PNG\0data")
    assert not is_binary(b"text\n" * 10)
    text_to_binary = line_delta(b"a\nb\n", b"\0a\nb\n")
    assert (len(text_to_binary.added), len(text_to_binary.removed)) == (0, 1)
    assert text_to_binary.new_count is None
    binary_to_text = line_delta(b"\0\1\2", b"a\n")
    assert (len(binary_to_text.added), len(binary_to_text.removed)) == (1, 0)
    assert binary_to_text.old_count is None


def test_a_huge_rewrite_is_counted_by_content_and_moves_lose_nothing():
    lines = numbered(5000)
    old = b"\n".join(lines) + b"\n"
    reversed_text = b"\n".join(reversed(lines)) + b"\n"
    moved = line_delta(old, reversed_text)
    assert (len(moved.added), len(moved.removed)) == (0, 0)
    shortened = b"\n".join(reversed(lines[:4900])) + b"\n"
    assert len(line_delta(old, shortened).removed) == 100
