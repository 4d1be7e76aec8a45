"""How many real commits one implementer iteration may make whole (issue 26: guards that stop
destruction, not work).

    .venv/bin/python bench/iteration_deletions.py CLONE [CLONE ...] [--commits 300] [--jobs 2]

Each commit (the last `--commits` non-merge commits of each CLONE, as
`bench/guards_false_positives.py` picks them) is taken as one iteration an honest model
proposes: the change from its parent, judged by the `deletions` rule with the default config.
Two measures over the same changes: every removed line counted (what the iteration guard
measured before) and what the iteration destroys now (`app.guards.destruction`: lines removed
without replacement, files shrunk or rewritten). Prints, per repository and overall, how many
commits each lets through, for all commits and for those changing more than 60 lines, and every
commit the rewrite measure refuses.

Nothing is written to the clones. Not used by the tests: the numbers are for the docs.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.guards import evaluate  # noqa: E402
from app.guards.repo import changes_between, isolated_git  # noqa: E402
from app.repo_config import load_repo_config  # noqa: E402
from bench.guards_false_positives import recent_commits  # noqa: E402

# A change of more than this many lines could never land under the old count (12 x 5).
LARGE = 60


@dataclass(frozen=True)
class Judged:
    commit: str
    changed: int  # lines added + deleted
    counted: bool  # passes when every removed line counts
    destroyed: bool  # passes when only what is destroyed counts
    rewrites: tuple[str, ...]  # "path: message" of the rewrite findings
    error: str | None = None


def judge(clone: str, commit: str) -> Judged:
    config = load_repo_config(None)
    try:
        with isolated_git(Path(clone)) as git:
            changes = changes_between(git, f"{commit}^", commit, load_limit=50_000_000)
    except Exception as exc:  # one odd commit must not stop the survey
        return Judged(commit, 0, False, False, (), f"{type(exc).__name__}: {exc}")
    old = evaluate(changes, config).violations  # a pull request: every removed line counts
    new = evaluate(changes, config, iteration=True).violations
    limit = config.guards.max_deletions_per_iteration or 0
    counted = changes.deleted_lines <= limit and not any(
        v.rule == "deletions" and v.path is not None for v in old
    )
    return Judged(
        commit,
        changes.added_lines + changes.deleted_lines,
        counted,
        not any(v.rule == "deletions" for v in new),
        tuple(f"{v.path}: {v.message}" for v in new if v.message.startswith("rewritten:")),
    )


def report(name: str, judged: list[Judged]) -> None:
    large = [j for j in judged if j.changed > LARGE]
    print(
        f"{name}: {len(judged)} commits; every removed line counted: "
        f"{sum(j.counted for j in judged)} pass ({sum(j.counted for j in large)} of "
        f"{len(large)} over {LARGE} lines); destroyed lines counted: "
        f"{sum(j.destroyed for j in judged)} pass ({sum(j.destroyed for j in large)} of "
        f"{len(large)})"
    )
    for j in judged:
        for rewrite in j.rewrites:
            print(f"  rewrite {j.commit[:10]} {rewrite}")
        if j.error:
            print(f"  error {j.commit[:10]} {j.error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", nargs="+", type=Path, help="local git repositories")
    parser.add_argument("--commits", type=int, default=300, help="non-merge commits per clone")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    everything: list[Judged] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for clone in args.clones:
            commits = recent_commits(clone, args.commits)
            judged = list(pool.map(judge, [str(clone)] * len(commits), commits, chunksize=8))
            name = clone.parent.name if clone.name in ("repo", ".git") else clone.name
            report(name, judged)
            everything += judged
    report("overall", everything)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
