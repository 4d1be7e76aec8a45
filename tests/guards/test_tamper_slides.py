"""A run of lines only added (or only removed) that could sit lower is read where git shows it.

gorilla/mux moved `TestNativeContextMiddleware` from `context_test.go` to the end of a function
in `mux_test.go` as `TestContextMiddleware`, body unchanged. The line diff aligned the added
run one function up (from the `}` closing the function before it down to the new test's last
statement), so the new test's body was not whole in the change, the rename was not seen, and
the deleted file was reported. Sliding the run down, as git does, shows the test whole.
"""

from __future__ import annotations

from app.guards.lines import line_delta
from tests.guards.conftest import GitRepo, tamper

HELPER_GO = """\
package mux

func NewRouter() *Router { return &Router{} }

type Router struct{ n int }

func (r *Router) Handle(n int) { r.n = n }
"""

MUX_TEST = """\
package mux

import "testing"

func TestRouter(t *testing.T) {
	r := NewRouter()
	if r == nil {
		t.Fatal("no router")
	}
}

func mapToPairs(m map[string]string) []string {
	return nil
}
"""

CONTEXT_TEST = """\
package mux

import "testing"

func TestNativeContextMiddleware(t *testing.T) {
	r := NewRouter()
	r.Handle(1)
	if r.n != 1 {
		t.Fatal("Expected n to be set")
	}
}
"""

MOVED = """\
func TestContextMiddleware(t *testing.T) {
	r := NewRouter()
	r.Handle(1)
	if r.n != 1 {
		t.Fatal("Expected n to be set")
	}
}
"""


def with_moved(body: str) -> str:
    """MUX_TEST with `body` added after `TestRouter`, before `mapToPairs`, and a comment
    added at the top: the common prefix then stops there, and the common suffix takes the `}`
    and blank line that close the new test, as in mux (an import added above)."""
    head, tail = MUX_TEST.split("func mapToPairs")
    head = head.replace("package mux\n", "package mux\n\n// Router tests.\n", 1)
    return head + body + "\nfunc mapToPairs" + tail


def test_an_added_function_is_slid_down_to_its_own_closing_brace():
    old = b"package a\n\nfunc a() {\n\tx()\n}\n\nfunc z() {\n}\n"
    new = b"package b\n\nfunc a() {\n\tx()\n}\n\nfunc b() {\n\ty()\n}\n\nfunc z() {\n}\n"
    added = [(line.number, line.text) for line in line_delta(old, new).added]
    assert added == [(1, "package b"), (7, "func b() {"), (8, "\ty()"), (9, "}"), (10, "")]


def test_a_deleted_function_is_slid_down_the_same_way():
    old = b"package a\n\nfunc a() {\n\tx()\n}\n\nfunc b() {\n\ty()\n}\n\nfunc z() {\n}\n"
    new = b"package b\n\nfunc a() {\n\tx()\n}\n\nfunc z() {\n}\n"
    delta = line_delta(old, new)
    assert [line.number for line in delta.removed] == [1, 7, 8, 9, 10]
    assert [line.anchor for line in delta.removed][1:] == [7, 7, 7, 7]


def test_a_slide_stops_at_the_next_change_and_keeps_the_counts():
    old = b"}\n\nA\n}\n\nB\n"
    new = b"}\n\nX\n}\n\nA\n}\n\nC\n"
    delta = line_delta(old, new)
    assert sorted(line.text for line in delta.added) == ["", "C", "X", "}"]
    assert [line.text for line in delta.removed] == ["B"]


def test_a_go_test_renamed_into_another_file_with_its_body_unchanged_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("context_test.go")
        r.write("mux_test.go", with_moved(MOVED))

    files = {"mux.go": HELPER_GO, "mux_test.go": MUX_TEST, "context_test.go": CONTEXT_TEST}
    assert tamper(repo, files, change) == []


def test_a_go_test_moved_without_its_check_is_still_reported(repo: GitRepo):
    """The same move, the new test's check dropped on the way: not the same body, so the
    removed test is gone (the new one pays for it only by count, and the file lost it)."""
    gutted = MOVED.replace('\tif r.n != 1 {\n\t\tt.Fatal("Expected n to be set")\n\t}\n', "")

    def change(r: GitRepo) -> None:
        r.remove("context_test.go")
        r.write("mux_test.go", with_moved(gutted))

    files = {"mux.go": HELPER_GO, "mux_test.go": MUX_TEST, "context_test.go": CONTEXT_TEST}
    assert tamper(repo, files, change) == ["context_test.go:None test file deleted"]


def test_a_go_test_deleted_with_nothing_added_is_still_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("context_test.go")

    files = {"mux.go": HELPER_GO, "mux_test.go": MUX_TEST, "context_test.go": CONTEXT_TEST}
    assert tamper(repo, files, change) == ["context_test.go:None test file deleted"]
