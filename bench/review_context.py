"""Review context benchmark: the panel's bounded prompt against a naive whole-diff prompt, on
large real diffs.

    .venv/bin/python bench/review_context.py [--repo DIR] [--range BASE..HEAD ...]
                                             [--largest 3] [--max-diff-chars 30000]

Without `--range`, the diffs are this repository's own history: the whole of it (first commit
to HEAD) and its `--largest` commits by changed lines. For each diff it builds, with the same
reviewer prompt:

- the naive prompt: the system prompt plus the raw `git diff` of the change, whole;
- ourobot's prompt: the system prompt plus the diff in connectivity order, bounded by
  `--max-diff-chars` (`review.max_diff_chars`), with the list of what was left out.

Prints prompt bytes, the ratio naive/bounded, what the bounded prompt showed, the estimated
input cost of one call at the price of `anthropic:claude-sonnet-4-5` (about four characters a
token; a cached re-read costs a tenth), and the time to build the bounded prompt.
No assertions: the numbers are for the note.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.controls.pricing import PriceTable  # noqa: E402
from reviewers.context import ReviewInputs, build_review_prompt  # noqa: E402
from reviewers.git_source import read_change  # noqa: E402
from reviewers.prompts import load_template  # noqa: E402

PRICE_MODEL = "anthropic:claude-sonnet-4-5"
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Row:
    label: str
    files: int
    lines: int
    naive: int
    bounded: int
    shown: str
    build_s: float


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def largest_commits(repo: Path, count: int) -> list[tuple[str, str, str]]:
    """(base, head, label) of the `count` commits with the most changed lines (with a parent)."""
    sizes: dict[str, int] = {}
    subjects: dict[str, str] = {}
    current = ""
    for line in git(repo, "log", "--no-merges", "--numstat", "--format=@%H %s").splitlines():
        if line.startswith("@"):
            current, _, subject = line[1:].partition(" ")
            sizes[current], subjects[current] = 0, subject
        elif line.strip() and current:
            added, removed, _ = line.split("\t", 2)
            if added.isdigit() and removed.isdigit():
                sizes[current] += int(added) + int(removed)
    with_parent = [
        sha for sha in sizes if git(repo, "rev-list", "--parents", "-n1", sha).split()[1:]
    ]
    top = sorted(with_parent, key=lambda sha: sizes[sha], reverse=True)[:count]
    return [(f"{sha}^", sha, f"{sha[:8]} {subjects[sha][:40]}") for sha in top]


def whole_history(repo: Path) -> tuple[str, str, str]:
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").split()[-1]
    return root, "HEAD", f"{root[:8]}..HEAD (all history)"


def measure(repo: Path, base: str, head: str, label: str, max_chars: int) -> Row:
    template = load_template("reviewer")
    started = time.perf_counter()
    change = read_change(repo, base, head)
    inputs = ReviewInputs(
        change.base_sha, change.head_sha, change.files, change.graph, ticket="(bench)"
    )
    bounded = build_review_prompt(inputs, template=template, max_diff_chars=max_chars)
    build_s = time.perf_counter() - started
    raw = git(repo, "diff", "--no-color", "--no-ext-diff", f"{change.merge_base}", change.head_sha)
    naive = len(bounded.system.encode()) + len(raw.encode())
    selection = bounded.selection
    shown = (
        f"{len(selection.shown)} whole, {len(selection.partial)} part, "
        f"{len(selection.omitted) - len(selection.partial)} left out"
    )
    lines = sum(diff.added + diff.removed for diff in change.files)
    size = len(bounded.system.encode()) + len(bounded.user.encode())
    return Row(label, len(change.files), lines, naive, size, shown, build_s)


def dollars(byte_count: int, per_million: float) -> str:
    return f"${byte_count / CHARS_PER_TOKEN * per_million / 1_000_000:,.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--range", action="append", default=[], metavar="BASE..HEAD")
    parser.add_argument("--largest", type=int, default=3)
    parser.add_argument("--max-diff-chars", type=int, default=30_000)
    args = parser.parse_args()
    targets = []
    for spec in args.range:
        base, _, head = spec.partition("..")
        targets.append((base, head or "HEAD", spec))
    if not targets:
        targets = [whole_history(args.repo), *largest_commits(args.repo, args.largest)]
    price = PriceTable().price(PRICE_MODEL).prices
    print(f"repository {args.repo}; review.max_diff_chars = {args.max_diff_chars:,}")
    print(
        f"input cost per call at {PRICE_MODEL} (${price.input}/M in, "
        f"${price.cache_read}/M cached), ~{CHARS_PER_TOKEN} chars a token\n"
    )
    header = (
        f"{'diff':44} {'files':>5} {'lines':>7} {'naive B':>10} {'ourobot B':>10} "
        f"{'ratio':>6} {'naive $':>8} {'ours $':>7} {'cached $':>8} {'build':>6}  shown"
    )
    print(header)
    print("-" * len(header))
    for base, head, label in targets:
        row = measure(args.repo, base, head, label, args.max_diff_chars)
        print(
            f"{row.label[:44]:44} {row.files:>5} {row.lines:>7,} {row.naive:>10,} "
            f"{row.bounded:>10,} {row.naive / row.bounded:>5.1f}x "
            f"{dollars(row.naive, price.input):>8} {dollars(row.bounded, price.input):>7} "
            f"{dollars(row.bounded, price.cache_read):>8} {row.build_s:>5.2f}s  {row.shown}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
