"""Every commit's guards verdict, as JSON lines, to show two versions of the guards agree.

    .venv/bin/python bench/guards_verdicts.py dump CLONE [CLONE ...] --out FILE
        [--commits 300] [--jobs 2]
    .venv/bin/python bench/guards_verdicts.py compare BEFORE.jsonl AFTER.jsonl

`dump` judges the commits `bench/guards_false_positives.py` surveys (the last `--commits`
non-merge commits of each CLONE, each as a pull request of one commit, with the default
repository config) and writes one line per commit: the repository, the commit, the
conclusion, every violation (rule, path, line, message) in the order the guards report them,
and the error when the guards raised. Run it at two revisions of ourobot (a worktree each)
over the same clones; `compare` then counts the commits compared and the identical ones,
and prints every commit whose line differs, with both versions (exit 1 when any does).

Nothing is written to the clones. Not used by the tests: a refactoring's evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.guards import check_repo  # noqa: E402
from app.repo_config import load_repo_config  # noqa: E402


def _git_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def recent_commits(clone: Path, count: int) -> list[str]:
    """The last `count` commits with exactly one parent, newest first (as the survey)."""
    out = subprocess.run(
        [
            *("git", "-C", str(clone), "rev-list", "--min-parents=1", "--max-parents=1"),
            *(f"--max-count={count}", "HEAD"),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=_git_env(),
    ).stdout
    return out.split()


def name_of(clone: Path) -> str:
    return clone.parent.name if clone.name in ("repo", ".git") else clone.name


def judge(clone: str, commit: str) -> dict[str, Any]:
    config = load_repo_config(None)
    record: dict[str, Any] = {"repo": name_of(Path(clone)), "commit": commit}
    try:
        result = check_repo(Path(clone), f"{commit}^", commit, config, config_source="defaults")
    except Exception as exc:  # one odd commit must not stop the dump
        record["error"] = f"{type(exc).__name__}: {exc}"
        return record
    record["conclusion"] = result.conclusion
    record["violations"] = [[v.rule, v.path, v.line, v.message] for v in result.violations]
    return record


def dump(clones: list[Path], commits: int, jobs: int, out: Path) -> None:
    with ProcessPoolExecutor(max_workers=max(jobs, 1)) as pool, out.open("w") as sink:
        for clone in clones:
            shas = recent_commits(clone, commits)
            for record in pool.map(judge, [str(clone)] * len(shas), shas, chunksize=8):
                sink.write(json.dumps(record, sort_keys=True) + "\n")
            print(f"{name_of(clone)}: {len(shas)} commits", file=sys.stderr)


def _read(path: Path) -> dict[tuple[str, str], str]:
    records: dict[tuple[str, str], str] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        records[record["repo"], record["commit"]] = line
    return records


def compare(before: Path, after: Path) -> int:
    old, new = _read(before), _read(after)
    shared = old.keys() & new.keys()
    same = sum(1 for key in shared if old[key] == new[key])
    print(f"commits: {len(old)} before, {len(new)} after, {len(shared)} in both")
    print(f"identical: {same}; different: {len(shared) - same}")
    for key in sorted(old.keys() ^ new.keys()):
        print(f"only {'before' if key in old else 'after'}: {key[0]} {key[1]}")
    for key in sorted(shared):
        if old[key] != new[key]:
            print(f"- {old[key]}\n+ {new[key]}")
    return 0 if same == len(shared) == len(old) == len(new) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="write every commit's verdict as JSON lines")
    dumping.add_argument("clones", nargs="+", type=Path, help="local git repositories")
    dumping.add_argument("--out", type=Path, required=True, help="the JSON lines file")
    dumping.add_argument("--commits", type=int, default=300, help="non-merge commits per clone")
    dumping.add_argument("--jobs", type=int, default=2)
    comparing = commands.add_parser("compare", help="diff two dumps, commit for commit")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.clones, args.commits, args.jobs, args.out)
    else:
        sys.exit(compare(args.before, args.after))


if __name__ == "__main__":
    main()
