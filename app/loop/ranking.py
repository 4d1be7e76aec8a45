"""Which files a ticket is most likely about: a lexical ranking combined with the import graph.

Each file is scored against the ticket with BM25 (`bm25s`) on three fields: its path, the
names it defines (functions, classes, module-level names) and its whole text. Code and prose
are cut into the same terms: identifiers are split at underscores and case changes
(`get_hookcallers`, `HookCaller` -> `get`, `hookcal`, ...), stemmed (`PyStemmer`), and a
compound identifier also counts whole, so a ticket that names `sign_timestamp` matches the
file that defines it more strongly than files that merely say "sign". Each field's scores are
scaled to the best file's, then weighted; the import graph
(`reviewers.connectivity.ImportGraph`) then lends each file a share of its best-scored
neighbour's score, so the caller or callee of the file the ticket is about rises with it.

Everything here is a pure function over plain data (paths, texts, a graph): no git, no I/O.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import bm25s
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from app.loop.suite_files import language_of_test
from reviewers.connectivity import ImportGraph

# Words that say nothing about which file a ticket is about, in prose or in code.
_NOISE = frozenset({
    *STOPWORDS_EN, "http", "https", "www", "com", "org", "github", "self", "cls", "none",
    "true", "false", "return", "def", "import", "from", "class", "pass", "lambda", "we",
    "you", "can", "should", "would", "also", "when", "now", "so", "do", "does", "its",
})  # fmt: skip
# Field weights: what a file defines says most about it, its path next; the text is the
# largest field and also the noisiest. Scaled so the best file of each field scores 1.
PATH_WEIGHT = 1.0
SYMBOL_WEIGHT = 0.4
TEXT_WEIGHT = 1.0
# A compound identifier in the ticket (`sign_timestamp`, `HookCaller`) is rarer and more
# telling than any one of its words.
COMPOUND_WEIGHT = 2.0
# How much of its best neighbour's score a file borrows through the import graph.
GRAPH_SHARE = 0.5
# Tests, docs and data are shown when they match, but code of the same score comes first.
TEST_FACTOR = 0.4
PROSE_FACTOR = 0.3
CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".pyx", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".rb",
    ".java", ".kt", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".php",
    ".sh", ".lua", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart", ".m", ".r", ".jl",
})  # fmt: skip
TEST_FOLDERS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})

# Identifiers, and numbers of two digits or more: a version, a status code or an RFC number
# in a ticket is as telling as a name.
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[0-9]{2,}")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_DEFINITION = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:pub(?:\([^)]*\))?[ \t]+)?(?:async[ \t]+)?"
    r"(?:def|class|function|func|fn|struct|enum|trait|interface|type|module|macro_rules!)"
    r"[ \t]+(?:\([^)]*\)[ \t]*)?([A-Za-z_][A-Za-z0-9_]*)"
    r"|^(?:export[ \t]+)?(?:const|let|var)[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*[=:]"
    r"|^([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[^=\n]*)?=(?!=)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Ranked:
    """One file's place: its score and the ticket's terms it matched (for its excerpts)."""

    path: str
    score: float
    terms: frozenset[str]


@dataclass(frozen=True)
class Query:
    """The ticket as weighted terms."""

    weights: Mapping[str, float]


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _split(identifier: str) -> tuple[tuple[str, ...], str | None]:
    """An identifier's stemmed words, and the identifier lowercased when it is compound."""
    words = [w.lower() for piece in identifier.split("_") for w in _HUMP.findall(piece)]
    kept = [w for w in words if len(w) > 1 and w not in _NOISE]
    stems = tuple(_stemmer().stemWords(kept)) if kept else ()
    return stems, (identifier.strip("_").lower() if len(words) > 1 else None)


def identifier_terms(identifier: str) -> tuple[str, ...]:
    """The terms of one identifier: its stemmed words, and itself lowercased when compound."""
    stems, whole = _split(identifier)
    return (*stems, whole) if whole else stems


def text_terms(text: str) -> list[str]:
    """Every term of a text, repeated as often as it occurs (counted once per identifier)."""
    counts = Counter(_IDENTIFIER.findall(text))
    return [term for name, n in counts.items() for term in identifier_terms(name) for _ in range(n)]


def line_terms(line: str) -> set[str]:
    return {term for name in _IDENTIFIER.findall(line) for term in identifier_terms(name)}


def path_terms(path: str) -> list[str]:
    return [term for part in re.split(r"[/.\-]", path) for term in identifier_terms(part)]


def defined_names(text: str) -> list[tuple[str, int]]:
    """(name, line number) of what a file defines, by the definition forms common languages
    share; a heuristic: a language it does not know simply defines nothing."""
    found: list[tuple[str, int]] = []
    for match in _DEFINITION.finditer(text):
        name = next(group for group in match.groups() if group)
        found.append((name, text.count("\n", 0, match.start()) + 1))
    return found


def ticket_query(text: str) -> Query:
    """The ticket's terms, each weighted by how often it occurs (dampened) and how telling
    its form is: a compound identifier counts more than a word."""
    counts: Counter[str] = Counter()
    compounds: set[str] = set()
    for name in _IDENTIFIER.findall(text):
        stems, whole = _split(name)
        counts.update(stems)
        if whole:
            counts[whole] += 1
            compounds.add(whole)
    weights = {
        term: (COMPOUND_WEIGHT if term in compounds else 1.0) * (1.0 + math.log(n))
        for term, n in counts.items()
    }
    return Query(weights)


def rank(
    ticket: str,
    texts: Mapping[str, str],
    graph: ImportGraph,
    *,
    query: Query | None = None,
) -> list[Ranked]:
    """Every file of `texts` that matches the ticket, or neighbours one that does, best first."""
    query = query or ticket_query(ticket)
    paths = list(texts)
    if not paths or not query.weights:
        return []
    fields = (
        (PATH_WEIGHT, [path_terms(p) for p in paths]),
        (SYMBOL_WEIGHT, [_symbol_terms(texts[p]) for p in paths]),
        (TEXT_WEIGHT, [path_terms(p) + text_terms(texts[p]) for p in paths]),
    )
    lexical = [0.0] * len(paths)
    matched: list[set[str]] = [set() for _ in paths]
    for weight, documents in fields:
        scores = _field_scores(documents, query, matched)
        top = max(scores, default=0.0)
        if top > 0:
            lexical = [
                total + weight * score / top for total, score in zip(lexical, scores, strict=True)
            ]
    by_path = {path: lexical[i] * kind_factor(path) for i, path in enumerate(paths)}
    combined = with_neighbours(by_path, graph)
    ranked = [
        Ranked(path, combined[path], frozenset(matched[i]))
        for i, path in enumerate(paths)
        if combined[path] > 0
    ]
    return sorted(ranked, key=lambda r: (-r.score, r.path.count("/"), r.path))


def _symbol_terms(text: str) -> list[str]:
    return [term for name, _ in defined_names(text) for term in identifier_terms(name)]


def _field_scores(
    documents: Sequence[list[str]], query: Query, matched: list[set[str]]
) -> list[float]:
    """BM25 of each document against the weighted query terms; records which terms matched."""
    if not any(documents):
        return [0.0] * len(documents)
    index = bm25s.BM25()
    index.index(documents, show_progress=False)
    totals = [0.0] * len(documents)
    for term, weight in query.weights.items():
        scores = index.get_scores([term])
        for i in scores.nonzero()[0]:
            totals[i] += weight * float(scores[i])
            matched[i].add(term)
    return totals


def kind_factor(path: str) -> float:
    """Code first: tests and prose of the same lexical score come after it."""
    if is_test_path(path):
        return TEST_FACTOR
    suffix = path[path.rfind(".") :] if "." in path.rsplit("/", 1)[-1] else ""
    return 1.0 if suffix.lower() in CODE_SUFFIXES else PROSE_FACTOR


def is_test_path(path: str) -> bool:
    folders = path.lower().split("/")[:-1]
    return language_of_test(path) is not None or any(f in TEST_FOLDERS for f in folders)


def is_code_path(path: str) -> bool:
    return kind_factor(path) == 1.0


def with_neighbours(scores: Mapping[str, float], graph: ImportGraph) -> dict[str, float]:
    """Each file's score plus a share of its best neighbour's: the files that import, or are
    imported by, the file the ticket is about are where a change to it usually lands too."""
    combined = dict(scores)
    for path, own in scores.items():
        best = max((scores.get(n, 0.0) for n in graph.neighbours(path)), default=0.0)
        combined[path] = own + GRAPH_SHARE * best * kind_factor(path)
    return combined


def ranked_paths(ranked: Iterable[Ranked]) -> list[str]:
    return [r.path for r in ranked]
