"""The repository map a model is shown: every tracked path counts, none is cut by depth.

Paths are listed most relevant first (the ranking's score, then the shallowest, each folder
taking its turn) as long as
the listing fits its budget; every path left out is counted under its folder (folders rolled
up into their parents when there are too many to name), and the map ends by saying how many
paths it did not list. Pure functions over paths, sizes and scores.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

MAP_MAX_CHARS = 10_000
# At most this share of the map goes to counting what it does not list.
SUMMARY_SHARE = 0.3


def repo_map(sizes: Mapping[str, int], scores: Mapping[str, float], max_chars: int) -> str:
    """The map of `sizes` (path -> bytes) within about `max_chars`, `scores` deciding what is
    listed first; an empty repository says so."""
    if not sizes:
        return "(The repository has no files.)\n"
    order = sorted(sizes, key=_priority(sizes, scores))
    low, high = 0, min(len(order), max_chars // 10 + 1)  # a listed line is longer than 10
    while low < high:  # the longest prefix of `order` whose map fits
        middle = (low + high + 1) // 2
        if len(_render(order[:middle], order[middle:], sizes, max_chars)) <= max_chars:
            low = middle
        else:
            high = middle - 1
    return _render(order[:low], order[low:], sizes, max_chars)


def _priority(
    sizes: Mapping[str, int], scores: Mapping[str, float]
) -> Callable[[str], tuple[float, int, int, str]]:
    """Best score first; among equals the shallowest, and each folder's first files before
    any folder's later ones, so a map that cannot list everything still shows every corner."""
    place: dict[str, int] = {}
    seen: Counter[str] = Counter()
    for path in sorted(sizes):
        folder = posixpath.dirname(path)
        place[path] = seen[folder]
        seen[folder] += 1
    return lambda p: (-scores.get(p, 0.0), p.count("/"), place[p], p)


def _render(listed: Sequence[str], omitted: Sequence[str], sizes: Mapping[str, int],
            max_chars: int) -> str:  # fmt: skip
    lines = [f"{path} ({sizes[path]:,} bytes)\n" for path in sorted(listed)]
    if omitted:
        room = int(max_chars * SUMMARY_SHARE)
        lines.append("Not listed (the map's budget), files per folder:\n")
        lines.extend(folder_counts(omitted, room))
        lines.append(f"{len(omitted):,} of {len(sizes):,} paths are not listed above.\n")
    return "".join(lines)


def folder_counts(paths: Sequence[str], max_chars: int) -> list[str]:
    """`folder/: N files` for the folders of `paths`; the deepest folders are rolled up into
    their parents until the lines fit `max_chars` (or only top-level folders are left)."""
    counts = Counter(posixpath.dirname(path) for path in paths)
    while True:
        lines = [f"{folder or '.'}/: {n:,} file{'s' if n > 1 else ''}\n"
                 for folder, n in sorted(counts.items())]  # fmt: skip
        deepest = max(folder.count("/") + 1 if folder else 0 for folder in counts)
        if sum(map(len, lines)) <= max_chars or deepest <= 1:
            return _fit(lines, max_chars)
        rolled: Counter[str] = Counter()
        for folder, n in counts.items():
            depth = folder.count("/") + 1 if folder else 0
            rolled[posixpath.dirname(folder) if depth == deepest else folder] += n
        counts = rolled


def _fit(lines: list[str], max_chars: int) -> list[str]:
    """The lines that fit, and a count of the folders that did not."""
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        if used + len(line) > max_chars:
            kept.append(f"... and {len(lines) - index:,} more folders\n")
            break
        kept.append(line)
        used += len(line)
    return kept
