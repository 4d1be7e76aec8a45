"""First-view recall on real commits: does the implementer's first message show the files a
human actually changed? The first view against plain BM25, same commits, same budget, same run.

    .venv/bin/python -m bench.first_view_recall [REPO ...] [--commits 15] [--budget 60000]

Each REPO is a git repository (bare or not); without one, `$OUROBOT_BENCH_VIEW_REPOS`
(paths separated by `:`); with neither, it says so in one line and exits 0. For each
repository it takes the `--commits` most recent non-merge commits that change between one and
`--max-files` source files (code, not tests) that exist at the commit's parent. For each commit:

- the repository is the commit's parent, read from git objects; the ticket is the commit
  message (its trailers such as `Co-authored-by:` dropped: an issue has none);
- **first view**: `app.loop.first_view` as the implementer's context runs it (the ranking with
  the import graph, whole files and excerpts within the budget);
- **BM25 alone**: `bm25s` with its own tokenizer over each file's path and text, the files
  taken whole in that order while they fit the same budget.

Recall is the share of the human's changed source files the first message shows: whole, and
(for the first view) by excerpts. Prints one line per repository and the totals, with the
ratio of the first view's recall to BM25's. No assertions: the numbers are for the note.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import bm25s

from app.loop.context import FILES_MAX_CHARS
from app.loop.first_view import FILE_OVERHEAD, first_view, indexable
from app.loop.head_files import GitRaw, read_texts, tree_blobs
from app.loop.ranking import is_code_path, is_test_path
from reviewers.connectivity import ImportGraph, build_graph, import_lines

MAX_SOURCE_FILES = 8
ENV_REPOS = "OUROBOT_BENCH_VIEW_REPOS"
_TRAILER = re.compile(r"^[A-Za-z][A-Za-z-]*-by: .*$|^(Closes|Fixes|Refs|See): .*$", re.MULTILINE)


@dataclass
class Tally:
    """Changed source files, and how many of them each view showed."""

    commits: int = 0
    changed: int = 0
    view_whole: int = 0
    view_excerpt: int = 0
    bm25_whole: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.commits += other.commits
        self.changed += other.changed
        self.view_whole += other.view_whole
        self.view_excerpt += other.view_excerpt
        self.bm25_whole += other.bm25_whole
        self.seconds += other.seconds


@dataclass(frozen=True)
class Commit:
    sha: str
    ticket: str
    changed: tuple[str, ...]  # source files at the parent that the commit changed


def git_raw_for(repo: Path) -> GitRaw:
    """A `head_files.GitRaw` over a plain git command in `repo`."""

    def git_raw(
        *args: str, ok: Sequence[int] = (0,), stdin: bytes | None = None
    ) -> tuple[int, bytes]:
        proc = subprocess.run(
            ["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False
        )
        if proc.returncode not in ok:
            raise RuntimeError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace')}")
        return proc.returncode, proc.stdout

    return git_raw


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def is_source(path: str) -> bool:
    return is_code_path(path) and not is_test_path(path)


def changed_sources(repo: Path, sha: str) -> list[str]:
    """Source files of the parent that `sha` modified, deleted or renamed away."""
    out = git(repo, "diff-tree", "-r", "-M", "--no-commit-id", "--name-status", f"{sha}^", sha)
    found: list[str] = []
    for line in out.splitlines():
        status, *paths = line.split("\t")
        if status[:1] in ("M", "D", "R") and is_source(paths[0]):
            found.append(paths[0])
    return found


def sample_commits(repo: Path, count: int, *, max_files: int = MAX_SOURCE_FILES) -> list[Commit]:
    """The `count` most recent non-merge commits with a parent that change 1..max_files
    source files of their parent."""
    found: list[Commit] = []
    for sha in git(repo, "rev-list", "--no-merges", "--max-count=2000", "HEAD").split():
        if len(found) >= count:
            break
        if not git(repo, "rev-list", "--parents", "-n1", sha).split()[1:]:
            continue
        changed = changed_sources(repo, sha)
        if 1 <= len(changed) <= max_files:
            message = git(repo, "log", "-1", "--format=%B", sha)
            found.append(Commit(sha, ticket_of(message), tuple(changed)))
    return found


def ticket_of(message: str) -> str:
    return _TRAILER.sub("", message).strip()


def read_parent(repo: Path, sha: str) -> tuple[dict[str, str], ImportGraph]:
    git_raw = git_raw_for(repo)
    blobs = tree_blobs(git_raw, f"{sha}^")
    texts = read_texts(git_raw, blobs, lambda blob: indexable(blob.path, blob.size))
    lines = {path: import_lines(path, text) for path, text in texts.items()}
    return texts, build_graph(lines, [blob.path for blob in blobs])


def bm25_alone(ticket: str, texts: dict[str, str], budget: int) -> set[str]:
    """Plain BM25 (bm25s's tokenizer and English stop words) over path and text, the files
    taken whole, best first, while they fit."""
    paths = list(texts)
    corpus = bm25s.tokenize(
        [f"{path}\n{texts[path]}" for path in paths], stopwords="en", show_progress=False
    )
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    query = bm25s.tokenize(ticket, stopwords="en", show_progress=False, return_ids=False)
    scores = index.get_scores(query[0]) if query and query[0] else [0.0] * len(paths)
    order = sorted(
        (i for i in range(len(paths)) if scores[i] > 0), key=lambda i: (-scores[i], paths[i])
    )
    shown: set[str] = set()
    room = budget
    for i in order:
        cost = len(texts[paths[i]]) + FILE_OVERHEAD
        if cost <= room:
            shown.add(paths[i])
            room -= cost
    return shown


def measure(repo: Path, commit: Commit, budget: int) -> Tally:
    texts, graph = read_parent(repo, commit.sha)
    started = time.perf_counter()
    view = first_view(commit.ticket, texts, graph, budget=budget)
    seconds = time.perf_counter() - started
    whole = {s.path for s in view.shown if s.whole}
    parts = {s.path for s in view.shown if not s.whole}
    baseline = bm25_alone(commit.ticket, texts, budget)
    changed = set(commit.changed)
    tally = Tally(
        commits=1,
        changed=len(changed),
        view_whole=len(changed & whole),
        view_excerpt=len(changed & parts),
        bm25_whole=len(changed & baseline),
        seconds=seconds,
    )
    tally.misses = sorted(changed - whole - parts)
    return tally


def share(part: int, whole: int) -> str:
    return f"{part / whole:6.1%}" if whole else "     -"


def row(label: str, tally: Tally) -> str:
    seen = tally.view_whole + tally.view_excerpt
    ratios = [
        f"{part / tally.bm25_whole:.2f}x" if tally.bm25_whole else "-"
        for part in (tally.view_whole, seen)
    ]
    per_commit = tally.seconds / max(1, tally.commits)
    shares = [tally.view_whole, tally.view_excerpt, seen, tally.bm25_whole]
    return (
        f"{label:<28} {tally.commits:>7} {tally.changed:>7}  "
        + "  ".join(share(part, tally.changed) for part in shares)
        + f"  {ratios[0]:>10}  {ratios[1]:>11}  {per_commit:7.2f}s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=Path)
    parser.add_argument("--commits", type=int, default=15, help="commits per repository")
    parser.add_argument("--max-files", type=int, default=MAX_SOURCE_FILES)
    parser.add_argument("--budget", type=int, default=FILES_MAX_CHARS)
    parser.add_argument("--verbose", action="store_true", help="one line per commit")
    args = parser.parse_args(argv)
    repos = args.repos or [Path(p) for p in os.environ.get(ENV_REPOS, "").split(":") if p]
    if not repos:
        print(f"first-view recall: no repository given (arguments or ${ENV_REPOS}); skipped")
        return 0
    print(
        f"{'repository':<28} {'commits':>7} {'changed':>7}  {'whole':>6}  {'excerpt':>6}"
        f"  {'either':>6}  {'BM25':>6}  {'whole/BM25':>6}  {'either/BM25':>6}  {'s/commit':>6}"
    )
    total = Tally()
    for repo in repos:
        tally = Tally()
        for commit in sample_commits(repo, args.commits, max_files=args.max_files):
            one = measure(repo, commit, args.budget)
            tally.add(one)
            if args.verbose:
                subject = commit.ticket.splitlines()[0][:50]
                print(f"  {commit.sha[:8]} {subject:<50} missed: {', '.join(one.misses) or '-'}")
        total.add(tally)
        print(row(repo_label(repo), tally))
    print(row("all", total))
    print("whole, excerpt, either: the first view's recall; BM25: plain BM25's (whole files)")
    return 0


def repo_label(repo: Path) -> str:
    name = repo.resolve().name
    return repo.resolve().parent.name if name in ("repo", ".git") else name


if __name__ == "__main__":
    sys.exit(main())
