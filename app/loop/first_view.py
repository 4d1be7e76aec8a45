"""The first view: which files the implementer's first message shows, and how much of each.

The files the branch changed and the ones the ticket, plan or feedback name come first
(`pinned`), then the ranking (`app.loop.ranking`). Walking that order within the files budget,
a file is shown whole when it fits the room left, otherwise by its relevant parts with line
numbers (`app.loop.excerpts`), so a large file the ticket is about is never simply dropped.
(Capping a whole file at half the budget showed more files in part but fewer whole: on the
benchmark's held-out commits, 35% of the changed files whole against 46% without the cap.)

Pure functions over paths and texts: the caller reads git, withholds protected and secret
files, and fences what is shown.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.loop.excerpts import Excerpt, excerpt
from app.loop.ranking import Query, Ranked, rank, ticket_query
from reviewers.connectivity import ImportGraph

# What a shown file costs beyond its text: its header line and the fence around it.
FILE_OVERHEAD = 160
# An excerpt is at most this long, and none is started with less room than the minimum.
EXCERPT_MAX_CHARS = 4_000
EXCERPT_MIN_CHARS = 600
# What is never worth indexing: larger files, and files that are generated rather than written.
INDEX_MAX_BYTES = 1_000_000
GENERATED = ("*.lock", "*-lock.json", "*.lock.json", "*.min.js", "*.min.css", "*.map", "*.svg")


@dataclass(frozen=True)
class Shown:
    """One file of the first view: whole (`excerpt` is None) or by its parts."""

    path: str
    text: str  # the whole text, or the numbered excerpt
    lines: int
    excerpt: Excerpt | None = None

    @property
    def whole(self) -> bool:
        return self.excerpt is None


@dataclass(frozen=True)
class Ranking:
    """The ticket's terms and the files it ranked, best first."""

    query: Query
    ranked: tuple[Ranked, ...]

    def scores(self) -> dict[str, float]:
        return {r.path: r.score for r in self.ranked}

    def order(self, pinned: Sequence[str] = ()) -> list[str]:
        """The pinned paths, then the ranked ones."""
        return list(dict.fromkeys([*pinned, *(r.path for r in self.ranked)]))


@dataclass(frozen=True)
class FirstView:
    ranking: Ranking
    shown: tuple[Shown, ...]


def indexable(path: str, size: int) -> bool:
    """Worth reading and ranking: not too large, not generated."""
    name = path.rsplit("/", 1)[-1].lower()
    return size <= INDEX_MAX_BYTES and not any(fnmatch.fnmatch(name, g) for g in GENERATED)


def rank_files(ticket: str, texts: Mapping[str, str], graph: ImportGraph) -> Ranking:
    query = ticket_query(ticket)
    return Ranking(query, tuple(rank(ticket, texts, graph, query=query)))


def first_view(
    ticket: str,
    texts: Mapping[str, str],
    graph: ImportGraph,
    *,
    pinned: Sequence[str] = (),
    budget: int,
) -> FirstView:
    """Rank `texts` against the ticket and choose what to show of them within `budget`."""
    ranking = rank_files(ticket, texts, graph)
    order = ranking.order([p for p in pinned if p in texts])
    return FirstView(ranking, tuple(choose(ranking, order, texts, budget)))


def choose(
    ranking: Ranking, order: Iterable[str], texts: Mapping[str, str], budget: int
) -> list[Shown]:
    """Walk `order` and show each file whole or by its parts until the budget is spent."""
    terms = {r.path: r.terms for r in ranking.ranked}
    weights = ranking.query.weights
    shown: list[Shown] = []
    room = budget
    for path in order:
        text = texts[path]
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        cost = len(text) + FILE_OVERHEAD
        if cost <= room:
            shown.append(Shown(path, text, lines))
            room -= cost
            continue
        if room < EXCERPT_MIN_CHARS + FILE_OVERHEAD:
            continue
        matched = {t: weights[t] for t in terms.get(path, weights) if t in weights}
        part = excerpt(text, matched, min(EXCERPT_MAX_CHARS, room - FILE_OVERHEAD))
        if part is not None:
            shown.append(Shown(path, part.text, lines, part))
            room -= len(part.text) + FILE_OVERHEAD
    return shown
