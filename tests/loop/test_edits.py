"""The edit protocol: blocks and tool calls read strictly; garbage is a problem, not a crash."""

from __future__ import annotations

import pytest

from app.loop.edits import EDIT_TOOLS, Edit, Hunk, parse_reply
from reviewers.model_client import ToolCall

FENCE = "```"


def test_the_four_blocks_are_read_in_order():
    reply = f"""I will add the helper and tidy up.

### FILE: app/new.py
{FENCE}python
def helper():
    return 1
{FENCE}

### APPEND: `docs/INSTALL.md`
{FENCE}
## Upgrading
{FENCE}

### REPLACE: app/core.py
{FENCE}python
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE
{FENCE}

### DELETE: old.txt
"""
    parsed = parse_reply(reply)
    assert parsed.problems == ()
    assert parsed.edits == (
        Edit("file", "app/new.py", content="def helper():\n    return 1\n"),
        Edit("append", "docs/INSTALL.md", content="## Upgrading\n"),
        Edit(
            "replace",
            "app/core.py",
            hunks=(Hunk("    return a - b\n", "    return a + b\n", lines=True),),
        ),
        Edit("delete", "old.txt"),
    )
    assert not parsed.satisfied


def test_a_markdown_file_keeps_its_own_fences():
    reply = f"""### FILE: README.md
{FENCE}markdown
# Title

{FENCE}bash
make test
{FENCE}
{FENCE}

That is the README.
"""
    parsed = parse_reply(reply)
    assert parsed.edits[0].content == f"# Title\n\n{FENCE}bash\nmake test\n{FENCE}\n"


def test_several_hunks_in_one_replace_block_and_an_empty_replacement():
    reply = f"""### REPLACE: a.py
{FENCE}
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
<<<<<<< SEARCH
y = 1
=======
>>>>>>> REPLACE
{FENCE}
"""
    (edit,) = parse_reply(reply).edits
    assert edit.hunks == (Hunk("x = 1\n", "x = 2\n", True), Hunk("y = 1\n", "", True))


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("### FILE: a.py\nno fence here\n", "must be followed by a fenced block"),
        (f"### FILE: a.py\n{FENCE}\nnever closed\n", "never closed"),
        (f"### REPLACE: a.py\n{FENCE}\nold\n{FENCE}\n", "expected '<<<<<<< SEARCH'"),
        (
            f"### REPLACE: a.py\n{FENCE}\n<<<<<<< SEARCH\nold\n>>>>>>> REPLACE\n{FENCE}\n",
            "in order",
        ),
        (
            f"### REPLACE: a.py\n{FENCE}\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n{FENCE}\n",
            "SEARCH text is empty",
        ),
        ("### FILE:\n", "names no path"),
        (f"### FILE a.py\n{FENCE}\nx\n{FENCE}\n", "unreadable header"),
    ],
)
def test_a_malformed_block_is_a_problem_never_an_exception(reply, reason):
    parsed = parse_reply(reply)
    assert parsed.edits == ()
    assert len(parsed.problems) == 1
    assert reason in parsed.problems[0].reason
    assert not parsed.proposes_nothing


def test_one_bad_block_does_not_hide_the_good_ones():
    reply = f"### FILE: a.py\nnot fenced\n### FILE: b.py\n{FENCE}\nok\n{FENCE}\n"
    parsed = parse_reply(reply)
    assert [edit.path for edit in parsed.edits] == ["b.py"]
    assert [problem.path for problem in parsed.problems] == ["a.py"]


@pytest.mark.parametrize(
    "reply",
    [
        "The function already handles empty lists.\n\nALREADY SATISFIED\n",
        "Nothing to do.\n**ALREADY SATISFIED.**\n\n",
    ],
)
def test_already_satisfied_is_the_last_line_of_a_reply_without_blocks(reply):
    assert parse_reply(reply).satisfied


def test_already_satisfied_with_a_block_or_in_the_middle_is_not_satisfaction():
    with_block = "### DELETE: x.py\nALREADY SATISFIED\n"
    assert not parse_reply(with_block).satisfied
    assert not parse_reply("ALREADY SATISFIED\nbut let me change one thing\n").satisfied
    assert not parse_reply("ALREADY SATISFIED", [ToolCall("delete_file", {"path": "x"})]).satisfied


def test_a_reply_without_blocks_proposes_nothing():
    parsed = parse_reply("I think the best approach is to refactor the module.")
    assert parsed.proposes_nothing


def test_tool_calls_are_the_same_four_edits():
    calls = [
        ToolCall("write_file", {"path": "a.py", "content": "x = 1\n"}),
        ToolCall("append_file", {"path": "b.md", "content": "more\n"}),
        ToolCall("replace_in_file", {"path": "c.py", "search": "a", "replace": "b"}),
        ToolCall("delete_file", {"path": "d.txt"}),
    ]
    parsed = parse_reply("", calls)
    assert [edit.kind for edit in parsed.edits] == ["file", "append", "replace", "delete"]
    assert parsed.edits[2].hunks == (Hunk("a", "b"),)
    assert {tool.name for tool in EDIT_TOOLS} == {call.name for call in calls}


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (ToolCall("run_shell", {"command": "rm -rf /"}), "unknown tool"),
        (ToolCall("write_file", {"path": "a.py"}), "content is missing"),
        (ToolCall("write_file", {"path": "a.py", "content": 3}), "content must be a string"),
        (ToolCall("replace_in_file", {"path": "a", "search": "", "replace": "x"}), "empty"),
        (ToolCall("delete_file", {"path": "  "}), "path is empty"),
    ],
)
def test_a_bad_tool_call_is_a_problem(call, reason):
    parsed = parse_reply("", [call])
    assert parsed.edits == ()
    assert reason in parsed.problems[0].reason


def test_crlf_replies_are_read_like_lf():
    reply = f"### FILE: a.txt\r\n{FENCE}\r\none\r\ntwo\r\n{FENCE}\r\n"
    assert parse_reply(reply).edits[0].content == "one\ntwo\n"
