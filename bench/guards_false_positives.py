"""How often the content rules flag ordinary commits of real projects (issue 4: at most 1%).

    .venv/bin/python bench/guards_false_positives.py CLONE [CLONE ...] [--commits 300]
        [--examples 3] [--details] [--jobs 2]

Each CLONE is a local git repository (bare or not). For each one, the last `--commits`
non-merge commits reachable from HEAD that have a parent are judged one by one, as a pull
request of one commit would be: `app.guards.check_repo(clone, commit^, commit)` with the default
repository config (never the clone's own). Prints, per repository and overall, how many commits
each content rule (`secret`, `test-tamper`) flags, with a few example commit ids per rule;
`--details` also prints every content-rule violation of every flagged commit, to classify them.

Nothing is written to the clones. Not used by the tests: the numbers are for the report.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.guards import check_repo  # noqa: E402
from app.repo_config import load_repo_config  # noqa: E402

CONTENT_RULES = ("secret", "test-tamper")


@dataclass(frozen=True)
class Verdict:
    commit: str
    # rule -> ["path:line message", ...] for the content rules that fired
    flagged: dict[str, list[str]]
    error: str | None = None


@dataclass
class Tally:
    name: str
    commits: int = 0
    errors: list[str] = field(default_factory=list)
    flagged: dict[str, list[Verdict]] = field(
        default_factory=lambda: {rule: [] for rule in CONTENT_RULES}
    )

    def add(self, verdict: Verdict) -> None:
        self.commits += 1
        if verdict.error is not None:
            self.errors.append(f"{verdict.commit[:12]} {verdict.error}")
        for rule in verdict.flagged:
            self.flagged[rule].append(verdict)


def recent_commits(clone: Path, count: int) -> list[str]:
    """The last `count` commits with exactly one parent (no merges, no roots), newest first."""
    out = subprocess.run(
        [
            "git",
            "-C",
            str(clone),
            "rev-list",
            "--min-parents=1",
            "--max-parents=1",
            f"--max-count={count}",
            "HEAD",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=_git_env(),
    ).stdout
    return out.split()


def _git_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def judge(clone: str, commit: str) -> Verdict:
    config = load_repo_config(None)
    try:
        result = check_repo(Path(clone), f"{commit}^", commit, config, config_source="defaults")
    except Exception as exc:  # one odd commit must not stop the survey
        return Verdict(commit, {}, f"{type(exc).__name__}: {exc}")
    flagged: dict[str, list[str]] = {}
    for violation in result.violations:
        if violation.rule in CONTENT_RULES:
            where = f"{violation.path}:{violation.line}" if violation.path else "(change)"
            flagged.setdefault(violation.rule, []).append(f"{where} {violation.message}")
    return Verdict(commit, flagged)


def survey(clone: Path, count: int, pool: ProcessPoolExecutor) -> Tally:
    name = clone.parent.name if clone.name in ("repo", ".git") else clone.name
    tally = Tally(name)
    commits = recent_commits(clone, count)
    for verdict in pool.map(judge, [str(clone)] * len(commits), commits, chunksize=8):
        tally.add(verdict)
    return tally


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "n/a"


def report(tallies: Sequence[Tally], examples: int, details: bool) -> None:
    width = max([len(t.name) for t in tallies] + [len("overall")])
    header = f"{'repository':<{width}}  {'commits':>7}" + "".join(
        f"  {rule:>18}" for rule in CONTENT_RULES
    )
    print(header)
    for tally in tallies:
        cells = "".join(
            f"  {len(tally.flagged[r]):>5} ({percent(len(tally.flagged[r]), tally.commits):>7})"
            for r in CONTENT_RULES
        )
        print(f"{tally.name:<{width}}  {tally.commits:>7}{cells}")
    total = sum(t.commits for t in tallies)
    cells = ""
    for rule in CONTENT_RULES:
        hits = sum(len(t.flagged[rule]) for t in tallies)
        cells += f"  {hits:>5} ({percent(hits, total):>7})"
    print(f"{'overall':<{width}}  {total:>7}{cells}")
    for rule in CONTENT_RULES:
        for tally in tallies:
            flagged = tally.flagged[rule]
            if flagged:
                ids = " ".join(v.commit[:12] for v in flagged[:examples])
                print(f"{rule} examples, {tally.name}: {ids}")
            if details:
                for verdict in flagged:
                    for line in verdict.flagged[rule]:
                        print(f"  {tally.name} {verdict.commit[:12]} {rule} {line}")
    for tally in tallies:
        for error in tally.errors:
            print(f"error, {tally.name}: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("clones", nargs="+", type=Path, help="local git repositories")
    parser.add_argument("--commits", type=int, default=300, help="non-merge commits per clone")
    parser.add_argument("--examples", type=int, default=3, help="commit ids shown per rule")
    parser.add_argument("--details", action="store_true", help="print every flagged violation")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        tallies = [survey(clone, args.commits, pool) for clone in args.clones]
    report(tallies, args.examples, args.details)


if __name__ == "__main__":
    main()
