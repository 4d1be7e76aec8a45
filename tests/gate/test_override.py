"""Parsing `/ourobot override` and what the re-posted check says."""

from __future__ import annotations

import pytest

from app.gate.override import OverrideRefused, override_summary, parse_override


def test_an_override_names_a_check_and_a_reason() -> None:
    override = parse_override(["guards", "the", "deletion", "is", "a", "planned", "removal"])
    assert override.check_name == "ourobot/guards"
    assert override.reason == "the deletion is a planned removal"
    assert parse_override(["Review", "ok"]).check_name == "ourobot/review"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "say which check"),
        (["guards"], "needs a reason"),
        (["guards", "  "], "needs a reason"),
        (["ci", "because"], "only `guards` or `review`"),
        (["gate", "because"], "only `guards` or `review`"),
    ],
)
def test_refused_overrides_say_why(args: list[str], message: str) -> None:
    with pytest.raises(OverrideRefused, match=message):
        parse_override(args)


def test_the_summary_names_who_why_and_the_one_commit() -> None:
    override = parse_override(["review", "<b>fine</b>", "[x](http://e)"])
    text = override_summary(override, login="maint", head_sha="a" * 40, number=3)
    assert "@maint" in text and "a" * 40 in text and "A push" in text
    assert "<b>" not in text and "[x](http" not in text
