"""When a proposal repeats an open issue: the thresholds against the near misses they must
let through and the rewordings they must catch."""

from __future__ import annotations

import pytest

from app.loop.similarity import (
    BODY_CLOSE,
    BODY_SAME,
    TITLE_CLOSE,
    TITLE_SAME,
    IssueText,
    duplicate_of,
    jaccard,
    likeness,
    words,
)

DIVIDE = IssueText(
    12,
    "Add a divide operation to calc",
    "calc/ops.py has add but no way to divide two numbers. Add divide(a, b) returning a float "
    "and raise ZeroDivisionError with a clear message when b is zero.",
)


def issue(title: str, body: str) -> IssueText:
    return IssueText(None, title, body)


def test_words_ignore_case_punctuation_filler_and_plurals():
    assert words("The Tests, for THE parser!") == {"test", "parser"}
    assert words("class names") == {"class", "name"}  # 'ss' is not a plural
    assert jaccard(words(""), words("")) == 0.0


def test_the_same_title_with_a_reworded_body_is_a_duplicate():
    reworded = issue(
        "Add a divide operation to calc",
        "We need division. Please implement it in the ops module with tests for zero.",
    )
    match = duplicate_of(reworded, [DIVIDE])
    assert match is not None and match.other.number == 12
    assert match.title == 1.0


def test_the_same_title_reordered_is_a_duplicate():
    assert duplicate_of(issue("calc: add divide operation", "Division."), [DIVIDE]) is not None


def test_the_same_request_under_a_new_title_is_a_duplicate():
    retitled = issue("Support division", DIVIDE.body)
    match = duplicate_of(retitled, [DIVIDE])
    assert match is not None and match.body == 1.0


def test_a_different_operation_on_the_same_module_is_not_a_duplicate():
    multiply = issue(
        "Add a multiply operation to calc",
        "calc/ops.py can add but cannot multiply. Add multiply(a, b) returning the product, "
        "with tests for negative numbers and for zero.",
    )
    found = likeness(multiply, DIVIDE)
    assert found.title >= 0.5  # a near miss on the title ...
    assert not found.duplicate, found.describe()  # ... that must still open
    assert duplicate_of(multiply, [DIVIDE]) is None


def test_a_different_issue_about_the_same_file_is_not_a_duplicate():
    docs = issue(
        "Document the calc operations in the README",
        "The README says nothing about calc/ops.py. List each operation with an example.",
    )
    assert duplicate_of(docs, [DIVIDE]) is None


def test_the_most_alike_open_issue_is_named():
    other = IssueText(3, "Divide by zero crashes", "divide(1, 0) raises a bare error")
    match = duplicate_of(issue(DIVIDE.title, DIVIDE.body), [other, DIVIDE])
    assert match is not None and match.other.number == 12


@pytest.mark.parametrize(
    ("title", "body", "duplicate"),
    [(TITLE_SAME, 0.0, True), (TITLE_SAME - 0.01, 0.0, False), (0.0, BODY_SAME, True),
     (0.0, BODY_SAME - 0.01, False), (TITLE_CLOSE, BODY_CLOSE, True),
     (TITLE_CLOSE - 0.01, BODY_CLOSE, False), (TITLE_CLOSE, BODY_CLOSE - 0.01, False)],
)  # fmt: skip
def test_the_thresholds_are_inclusive_and_each_one_decides(title, body, duplicate):
    from app.loop.similarity import Likeness

    assert Likeness(DIVIDE, title, body).duplicate is duplicate


def test_short_bodies_are_not_compared_so_the_title_decides():
    from app.loop.similarity import MIN_BODY_WORDS

    short = issue("Rename the helper", "Tests pass.")
    other = IssueText(5, "Speed up the parser", "Tests pass.")
    assert len(words(short.body)) < MIN_BODY_WORDS
    assert likeness(short, other).body == 0.0
    assert duplicate_of(short, [other]) is None
