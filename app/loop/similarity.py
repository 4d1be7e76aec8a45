"""Whether a proposed issue says what an open issue already says: measured, never guessed.

Two texts are compared as sets of words (lower-cased, punctuation and a short list of filler
words removed, a plural `s` dropped), by Jaccard's index: shared words over all words. It is
deterministic, order-blind (a reworded title with the same words is the same title) and
explainable in a status comment ("titles 0.83 alike").

A proposal duplicates an open issue when
- the titles are alike at `TITLE_SAME` or more (a retitled body is no new idea, and a
  different body under the same title would still confuse a maintainer), or
- the bodies are alike at `BODY_SAME` or more (the same request under a new title), or
- both are alike at `TITLE_CLOSE` and `BODY_CLOSE` (a rephrasing of both).

Bodies of fewer than `MIN_BODY_WORDS` words are not compared (their likeness is 0): the title
alone decides then.

The thresholds live here and nowhere else; tests/loop/test_similarity.py holds the near misses
they were chosen against (a different operation on the same module must still open).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

TITLE_SAME = 0.7
BODY_SAME = 0.6
TITLE_CLOSE = 0.5
BODY_CLOSE = 0.5
# Bodies shorter than this (in comparable words) say too little to be compared: a one-line
# body shares half its words with any other one-liner.
MIN_BODY_WORDS = 8

_WORD = re.compile(r"[a-z0-9]+")
# Words that carry no request of their own; kept short on purpose (a domain word is never here).
_FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "for",
        "from",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "should",
        "so",
        "that",
        "the",
        "this",
        "to",
        "we",
        "when",
        "which",
        "will",
        "with",
        "without",
    ]
)


def words(text: str) -> frozenset[str]:
    """The comparable words of `text`."""
    found = set()
    for word in _WORD.findall(text.casefold()):
        if word in _FILLER:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.add(word)
    return frozenset(found)


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Shared words over all words; two empty texts are not alike (nothing was said)."""
    union = left | right
    return len(left & right) / len(union) if union else 0.0


@dataclass(frozen=True)
class IssueText:
    """An issue as compared: its number (None for one not opened yet), title and body."""

    number: int | None
    title: str
    body: str


@dataclass(frozen=True)
class Likeness:
    other: IssueText
    title: float
    body: float

    @property
    def duplicate(self) -> bool:
        return (
            self.title >= TITLE_SAME
            or self.body >= BODY_SAME
            or (self.title >= TITLE_CLOSE and self.body >= BODY_CLOSE)
        )

    def describe(self) -> str:
        return f"titles {self.title:.2f} alike, bodies {self.body:.2f}"


def likeness(issue: IssueText, other: IssueText) -> Likeness:
    body, other_body = words(issue.body), words(other.body)
    short = min(len(body), len(other_body)) < MIN_BODY_WORDS
    return Likeness(
        other,
        jaccard(words(issue.title), words(other.title)),
        0.0 if short else jaccard(body, other_body),
    )


def duplicate_of(issue: IssueText, others: Iterable[IssueText]) -> Likeness | None:
    """The open issue `issue` repeats (the most alike one), or None."""
    found = [match for other in others if (match := likeness(issue, other)).duplicate]
    return max(found, key=lambda m: (m.title + m.body, -(m.other.number or 0)), default=None)
