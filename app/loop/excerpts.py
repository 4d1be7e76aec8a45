"""A large file's relevant parts, with line numbers: what the first view shows of a file too
big to show whole.

The parts are the definitions whose names carry the ticket's terms (each with the lines of its
block), then the lines that mention those terms (with a few lines around each), best first,
within a character budget. A file that matches nothing is shown by its outline: the lines
that define something. Pure functions over a text and the ticket's weighted terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.loop.ranking import defined_names, identifier_terms, line_terms

LINES_BEFORE = 2
LINES_AFTER = 4
MAX_BLOCK_LINES = 40
# A definition whose name carries the ticket's terms tells more than a line that uses them.
DEFINITION_BONUS = 2.0


@dataclass(frozen=True)
class Excerpt:
    """Line spans of one file (1-based, inclusive) and their rendering with line numbers."""

    total_lines: int
    spans: tuple[tuple[int, int], ...]
    text: str
    outline: bool  # nothing matched: the spans are the file's definition lines

    def span_text(self) -> str:
        return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in self.spans)


def excerpt(text: str, weights: Mapping[str, float], max_chars: int) -> Excerpt | None:
    """The parts of `text` that carry the terms of `weights`, rendered within `max_chars`;
    the outline when none does; None when not even one line fits."""
    lines = text.splitlines()
    width = len(str(len(lines)))
    windows = _windows(text, lines, weights)
    outline = not windows
    if outline:
        windows = [(0.0, n, n) for _, n in defined_names(text)] or [(0.0, 1, len(lines))]
    chosen: set[int] = set()
    used = 0
    for _, first, last in windows:
        new = [n for n in range(first, last + 1) if n not in chosen]
        cost = sum(_cost(lines[n - 1], width) for n in new) + len(new) // 4 + 8
        if used + cost > max_chars:
            if outline:
                break
            continue
        chosen.update(new)
        used += cost
    if not chosen:
        return None
    spans = _spans(sorted(chosen))
    return Excerpt(len(lines), spans, _render(lines, spans, width), outline)


def _windows(
    text: str, lines: list[str], weights: Mapping[str, float]
) -> list[tuple[float, int, int]]:
    """(score, first, last) line windows, best first: definitions named with the ticket's
    terms (their whole block), then the lines that mention them."""
    if not weights:
        return []
    found: list[tuple[float, int, int]] = []
    for name, number in defined_names(text):
        score = sum(weights.get(term, 0.0) for term in set(identifier_terms(name)))
        if score > 0:
            found.append((DEFINITION_BONUS * score, number, _block_end(lines, number)))
    for number, line in enumerate(lines, start=1):
        score = sum(weights.get(term, 0.0) for term in line_terms(line))
        if score > 0:
            first = max(1, number - LINES_BEFORE)
            found.append((score, first, min(len(lines), number + LINES_AFTER)))
    return sorted(found, key=lambda w: (-w[0], w[1]))


def _block_end(lines: list[str], first: int) -> int:
    """The last line of the block a definition opens: up to the next line indented no deeper
    than the definition, at most `MAX_BLOCK_LINES` long."""
    head = lines[first - 1]
    indent = len(head) - len(head.lstrip())
    last = first
    for number in range(first + 1, min(len(lines), first + MAX_BLOCK_LINES - 1) + 1):
        line = lines[number - 1]
        dedented = line.strip() and len(line) - len(line.lstrip()) <= indent
        if dedented and not line.lstrip().startswith((")", "]", "}")):  # a closing bracket stays
            break
        last = number
    return last


def _cost(line: str, width: int) -> int:
    return width + 3 + len(line)


def _spans(numbers: list[int]) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    return tuple(spans)


def _render(lines: list[str], spans: tuple[tuple[int, int], ...], width: int) -> str:
    parts: list[str] = []
    for index, (first, last) in enumerate(spans):
        if index or first > 1:
            parts.append(f"{'':>{width}}  ...\n")
        parts.extend(f"{n:>{width}}| {lines[n - 1]}\n" for n in range(first, last + 1))
    if spans and spans[-1][1] < len(lines):
        parts.append(f"{'':>{width}}  ...\n")
    return "".join(parts)
