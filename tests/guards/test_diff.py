"""Reading unified diffs (`--diff`): git's extended headers, quoting, and crafted input."""

from __future__ import annotations

import pytest

from app.errors import UserError
from app.guards.diff import parse_diff, unquote_git_path
from tests.guards.conftest import by_rule, config, diff_result, rules

RENAME_AND_MODES = """\
diff --git a/old name.txt b/new name.txt
similarity index 100%
rename from old name.txt
rename to new name.txt
diff --git a/copy-src.txt b/copy-dst.txt
similarity index 90%
copy from copy-src.txt
copy to copy-dst.txt
--- a/copy-src.txt
+++ b/copy-dst.txt
@@ -1 +1 @@
-one
+two
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/link b/link
new file mode 120000
index 0000000..1111111
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+docs/target.md
\\ No newline at end of file
diff --git a/vendor/lib b/vendor/lib
new file mode 160000
index 0000000..2222222
--- /dev/null
+++ b/vendor/lib
@@ -0,0 +1 @@
+Subproject commit 2222222222222222222222222222222222222222
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/logo.png differ
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
"""


def test_git_extended_headers_are_read():
    changes = parse_diff(RENAME_AND_MODES.encode())
    files = {change.path: change for change in changes.files}
    rename = files["new name.txt"]
    assert (rename.status, rename.old_path, rename.removed_count) == ("renamed", "old name.txt", 0)
    copy = files["copy-dst.txt"]
    assert (copy.status, copy.old_path) == ("copied", "copy-src.txt")
    mode = files["run.sh"]
    assert mode.mode_changed
    assert (mode.old_mode, mode.new_mode) == ("100644", "100755")
    link = files["link"]
    assert link.is_symlink
    assert link.link_target == "docs/target.md"
    assert files["vendor/lib"].touches_gitlink
    assert files["logo.png"].binary
    gone = files["gone.txt"]
    assert (gone.status, gone.removed_count, gone.old_line_count) == ("deleted", 2, 2)
    assert changes.diff_bytes == len(RENAME_AND_MODES.encode())


def test_quoted_paths_are_unquoted_like_git_writes_them():
    assert unquote_git_path('"a/\\303\\244.txt"') == "a/ä.txt"
    assert unquote_git_path('"a/tab\\there"') == "a/tab\there"
    assert unquote_git_path("plain") == "plain"
    text = (
        'diff --git "a/\\342\\200\\213.github/workflows/x.yml" '
        '"b/\\342\\200\\213.github/workflows/x.yml"\n'
        "new file mode 100644\n"
        "--- /dev/null\n"
        '+++ "b/\\342\\200\\213.github/workflows/x.yml"\n'
        "@@ -0,0 +1 @@\n"
        "+on: push\n"
    )
    result = diff_result(text)
    assert by_rule(result, "protected-path")[0][0] == "\u200b.github/workflows/x.yml"
    assert "unsafe-path" in rules(result)


def test_crafted_dotdot_paths_in_a_diff_are_unsafe():
    text = (
        "diff --git a/../../etc/cron.d/x b/../../etc/cron.d/x\n"
        "new file mode 100644\n"
        "--- /dev/null\n"
        "+++ b/../../etc/cron.d/x\n"
        "@@ -0,0 +1 @@\n"
        "+* * * * * root sh\n"
    )
    result = diff_result(text)
    assert by_rule(result, "unsafe-path") == [
        ("../../etc/cron.d/x", None, "unsafe path: '..' component")
    ]


def test_plain_diff_u_output_is_read():
    text = "--- a.txt\t2024-01-01\n+++ a.txt\t2024-01-02\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n"
    changes = parse_diff(text.encode())
    assert [(c.path, c.added_count, c.removed_count) for c in changes.files] == [("a.txt", 1, 1)]


@pytest.mark.parametrize(
    "text",
    [
        "this is not a diff\n",
        "--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n+b\n",  # hunk shorter than its header says
    ],
)
def test_an_unreadable_diff_is_bad_input(text: str):
    with pytest.raises(UserError, match="unreadable diff"):
        parse_diff(text.encode())


def test_an_empty_diff_passes():
    result = diff_result("")
    assert result.conclusion == "success"
    assert result.stats["files"] == 0


def test_a_diff_over_max_diff_bytes_is_not_evaluated_and_fails():
    text = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+" + "b" * 5000 + "\n"
    result = diff_result(text, config("guards:\n  max_diff_bytes: 1000\n"))
    assert result.conclusion == "failure"
    assert by_rule(result, "size") == [
        (None, None, f"{len(text)} bytes of diff (too large to evaluate), over the limit of 1000")
    ]
    assert result.stats["files"] == 0


def test_the_shrink_rule_uses_the_file_length_only_when_the_diff_proves_it():
    middle_edit = "--- a/doc.md\n+++ b/doc.md\n@@ -10,36 +10,6 @@\n c\n c\n c\n"
    middle_edit += "".join("-x\n" for _ in range(30)) + " c\n c\n c\n"
    assert "deletions" not in rules(diff_result(middle_edit))
    whole = "--- a/INSTALL.md\n+++ b/INSTALL.md\n@@ -1,256 +1,36 @@\n"
    whole += "".join(f"-old {n}\n" for n in range(256)) + "".join(f"+new {n}\n" for n in range(36))
    found = by_rule(diff_result(whole), "deletions")
    assert (
        "INSTALL.md",
        1,
        "file shrinks from 256 to 36 lines (85%), over the 50% shrink limit",
    ) in found


def _new_file(header: str, target: str) -> str:
    return f"{header}new file mode 100644\n--- /dev/null\n+++ {target}\n@@ -0,0 +1 @@\n+on: push\n"


@pytest.mark.parametrize(
    "text",
    [
        # git apply -p1 strips the first component whatever its letters.
        _new_file(
            "diff --git s/.github/workflows/ci.yml d/.github/workflows/ci.yml\n",
            "d/.github/workflows/ci.yml",
        ),
        _new_file(
            "diff --git x/.github/workflows/ci.yml y/.github/workflows/ci.yml\n",
            "y/.github/workflows/ci.yml",
        ),
        # a traditional diff: the same, and an empty first component too.
        "--- /dev/null\n+++ s/.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n",
        "--- /dev/null\n+++ /.github/workflows/ci.yml\n@@ -0,0 +1 @@\n+on: push\n",
    ],
)
def test_paths_are_read_as_git_apply_p1_writes_them(text: str):
    result = diff_result(text)
    assert by_rule(result, "protected-path")[0][0] == ".github/workflows/ci.yml"
    assert "unsafe-path" not in rules(result)


def test_a_traditional_diff_of_two_names_lands_where_git_apply_writes():
    # git apply writes one file: the new name, or the old one when the new only extends it.
    onto = "--- docs/notes.md\n+++ x/.github/workflows/ci.yml\n@@ -1 +1 @@\n-a\n+b\n"
    assert [c.path for c in parse_diff(onto.encode()).files] == [".github/workflows/ci.yml"]
    backup = "--- a/ci.yml\n+++ b/ci.yml.orig\n@@ -1 +1 @@\n-a\n+b\n"
    change = parse_diff(backup.encode()).files[0]
    assert (change.status, change.path) == ("modified", "ci.yml")


@pytest.mark.parametrize(
    "text",
    [
        # a git diff's name with no component to strip: git apply refuses it
        _new_file("diff --git ci.yml ci.yml\n", "ci.yml"),
        # the +++ line names another path than the `diff --git` line as git reads it
        _new_file("diff --git a/notes.md b/notes.md\n", "b/notes.md").replace(
            "diff --git a/notes.md b/notes.md", "diff --git a/x b/.github/x b/notes.md"
        ),
        # spaces leave the two names of the header ambiguous, and nothing else names them
        "diff --git s/a b d/a b s/a b\nold mode 100644\nnew mode 100755\n",
    ],
)
def test_an_ambiguous_git_header_is_bad_input(text: str):
    with pytest.raises(UserError, match=r"ambiguous diff|inconsistent diff|unreadable diff"):
        parse_diff(text.encode())


def test_paths_with_spaces_and_quoted_names_still_read():
    spaced = _new_file("diff --git a/my file.txt b/my file.txt\n", "b/my file.txt")
    assert [c.path for c in parse_diff(spaced.encode()).files] == ["my file.txt"]
    mode = "diff --git s/run me.sh d/run me.sh\nold mode 100644\nnew mode 100755\n"
    assert [c.path for c in parse_diff(mode.encode()).files] == ["run me.sh"]
