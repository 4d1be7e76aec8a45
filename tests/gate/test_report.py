"""The `ourobot/gate` check run's words: success only when everything holds, every condition
listed with its reason, untrusted names inert."""

from __future__ import annotations

from app.gate import decide
from app.gate.report import gate_output
from tests.gate.states import edit, good


def test_ready_is_success_and_lists_every_condition() -> None:
    out = gate_output(decide(good()), number=7)
    assert out.conclusion == "success"
    assert "**merge**" in out.summary and "#7" in out.summary
    assert out.summary.count("✅") == 11 and "❌" not in out.summary


def test_waiting_is_failure_naming_what_is_missing() -> None:
    state = edit(edit(good(), "reviews", []), "pr.behind_by", 2)
    out = gate_output(decide(state), number=7, notes=("Updated the branch.",))
    assert out.conclusion == "failure"
    assert out.title == "Not mergeable yet: approval, up-to-date"
    assert out.summary.count("❌") == 2 and "Updated the branch." in out.summary


def test_a_reason_reads_as_written_without_html_entities() -> None:
    """`ourobot's` once reached a summary as `ourobot&#x27;s`."""
    state = edit(good(), "statuses.0.context", 'ourobot\'s "ci" & co')
    state = edit(state, "statuses.0.state", "failure")
    row = next(line for line in gate_output(decide(state), number=7).summary.splitlines()
               if "`ci`" in line)  # fmt: skip
    assert 'ourobot\'s "ci" \\& co' in row and "&#" not in row


def test_reasons_quoting_names_are_inert_markdown() -> None:
    state = edit(good(), "statuses.0.context", "[x](http://evil) <img src=x> | y")
    state = edit(state, "statuses.0.state", "failure")
    summary = gate_output(decide(state), number=7).summary
    assert "[x](http" not in summary
    assert "<img" not in summary.replace("\\<img", "")  # escaped: text, not a tag
    assert "&lt;" not in summary and "&#" not in summary  # Markdown escapes, no entities
    row = next(line for line in summary.splitlines() if "`ci`" in line)
    assert row.count(" | ") == 2  # the name's pipe did not open a cell
