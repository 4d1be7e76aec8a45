"""The result object the check run will publish: JSON document, Markdown summary, annotations."""

from __future__ import annotations

import pytest

from app.guards import GuardResult, Violation
from app.guards.result import markdown_cell

STATS = {
    "source": "repo",
    "base": "a" * 40,
    "head": "b" * 40,
    "config": ".github/ourobot.yml@aaaaaaaaaaaa",
    "mode": "advanced",
    "files": 2,
    "added_lines": 3,
    "deleted_lines": 250,
    "diff_bytes": 900,
    "rules": ["deletions", "protected-path"],
    "rules_off": ["binary"],
}


def result() -> GuardResult:
    return GuardResult(
        (
            Violation("deletions", None, None, "250 lines deleted, over the limit of 200"),
            Violation("protected-path", ".github/workflows/ci.yml", None, "modifies a protected"),
            Violation("secret", "app/x.py", 7, "possible GitHub token added (value not shown)"),
        ),
        STATS,
    )


def test_the_json_document_has_exactly_the_contract_keys():
    document = result().to_dict()
    assert list(document) == ["conclusion", "violations", "stats"]
    assert document["conclusion"] == "failure"
    assert document["violations"][2] == {
        "rule": "secret",
        "path": "app/x.py",
        "line": 7,
        "message": "possible GitHub token added (value not shown)",
    }
    assert GuardResult((), STATS).to_dict()["conclusion"] == "success"


def test_annotations_point_at_files_and_lines():
    assert result().annotations() == [
        {
            "path": ".github/workflows/ci.yml",
            "start_line": 1,
            "end_line": 1,
            "annotation_level": "failure",
            "message": "modifies a protected",
            "title": "protected-path",
        },
        {
            "path": "app/x.py",
            "start_line": 7,
            "end_line": 7,
            "annotation_level": "failure",
            "message": "possible GitHub token added (value not shown)",
            "title": "secret",
        },
    ]


def test_the_summary_says_what_was_evaluated_on_which_commits():
    summary = result().summary_markdown()
    assert summary.startswith("## ourobot/guards: failure\n")
    assert "from `aaaaaaaaaaaa` to `bbbbbbbbbbbb`" in summary
    assert "2 file(s), +3 −250 lines, 900 bytes" in summary
    assert "Rules evaluated: `deletions`, `protected-path`." in summary
    assert "Switched off by the config: `binary`." in summary
    assert "| `secret` | app/x.py | 7 |" in summary
    assert "(whole change)" in summary
    assert "No violations." in GuardResult((), STATS).summary_markdown()


def test_hostile_text_is_inert_markdown():
    cell = markdown_cell("x](https://evil) | <img src=x onerror=alert(1)> `code`\n| new row")
    unescaped = cell.replace("\\\\", "").replace("\\", "\0")  # what an escape leaves live
    assert "<" not in unescaped.replace("\0<", "")
    assert "](" not in cell.replace("\\](", "")
    assert "\n" not in cell
    assert "`" not in unescaped.replace("\0`", "")
    assert "|" not in unescaped.replace("\0|", "")
    assert markdown_cell("app/my_module.py") == "app/my\\_module.py"
    # A backslash of the text's own cannot undo an escape: `\<` stays text.
    assert markdown_cell("\\<b>") == "\\\\\\<b\\>"


@pytest.mark.parametrize("text", ["ourobot's own App", 'a "quoted" & <tagged> `name`'])
def test_markdown_cells_carry_no_html_entities(text):
    """An entity reads as `&#x27;` wherever a summary is shown as text; a backslash escape
    renders as the character and reads as one."""
    cell = markdown_cell(text)
    assert "&#" not in cell and "&lt;" not in cell and "&quot;" not in cell
    assert cell.replace("\\", "") == text
