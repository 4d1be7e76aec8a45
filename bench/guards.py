"""Guards benchmark: `ourobot guards check --repo` against `git diff --numstat`, same commits,
same run.

    .venv/bin/python bench/guards.py [--files 40] [--lines 1000] [--changed 250] [--runs 5]

Builds a temporary repository whose head differs from its base by about 20,000 diff lines
(each of `--files` files of `--lines` lines has `--changed` lines replaced: that many removed
plus that many added), then times, best of `--runs`:

- `git diff --numstat base head` (a subprocess: git's own C line counting, the floor),
- the guards engine in-process (`check_repo`: raw diff, blobs, line counts, every rule),
- the real `ourobot guards check --repo ... --json` console script (adds interpreter start-up).

Prints the times and the ratios guards/numstat. No assertions: the numbers are for the note.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.guards import check_repo  # noqa: E402

OUROBOT = REPO / ".venv" / "bin" / "ourobot"


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }


def git(repo: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def build(
    root: Path, files: int, lines: int, changed: int
) -> tuple[Path, str, str, dict[str, str]]:
    rng = random.Random(7)
    env = git_env(root)
    repo = root / "repo"
    repo.mkdir()
    git(repo, env, "init", "-q", "-b", "main")
    texts = []
    for number in range(files):
        body = [
            f"def function_{number}_{line}(x): return x * {rng.randint(1, 999)}"
            for line in range(lines)
        ]
        texts.append(body)
        (repo / "src").mkdir(exist_ok=True)
        (repo / "src" / f"module_{number}.py").write_text("\n".join(body) + "\n")
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "base")
    base = git(repo, env, "rev-parse", "HEAD")
    for number, body in enumerate(texts):
        start = rng.randint(0, lines - changed)
        for line in range(start, start + changed):
            body[line] = f"def rewritten_{number}_{line}(y): return y + {rng.randint(1, 999)}"
        (repo / "src" / f"module_{number}.py").write_text("\n".join(body) + "\n")
    git(repo, env, "commit", "-q", "-am", "head")
    head = git(repo, env, "rev-parse", "HEAD")
    return repo, base, head, env


def best_of(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=250)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ourobot-bench-guards-") as tmp:
        repo, base, head, env = build(Path(tmp), args.files, args.lines, args.changed)
        numstat = git(repo, env, "diff", "--numstat", base, head)
        added = sum(int(row.split("\t")[0]) for row in numstat.splitlines())
        deleted = sum(int(row.split("\t")[1]) for row in numstat.splitlines())
        result = check_repo(repo, base, head)
        stats = result.stats
        print(
            f"diff: {args.files} files, git numstat +{added} -{deleted} ({added + deleted} lines);"
        )
        print(
            f"      guards  +{stats['added_lines']} -{stats['deleted_lines']}, "
            f"{stats['diff_bytes']} bytes, {len(result.violations)} violations (default limits)"
        )
        t_numstat = best_of(args.runs, lambda: git(repo, env, "diff", "--numstat", base, head))
        t_engine = best_of(args.runs, lambda: check_repo(repo, base, head))
        cli = [
            str(OUROBOT),
            "guards",
            "check",
            "--repo",
            str(repo),
            "--base",
            base,
            "--head",
            head,
            "--json",
        ]
        t_cli = best_of(
            args.runs, lambda: subprocess.run(cli, capture_output=True, check=False, env=env)
        )
        rows = (
            ("git diff --numstat", t_numstat),
            ("guards engine (in-process)", t_engine),
            ("ourobot guards check --repo", t_cli),
        )
        for name, seconds in rows:
            ratio = f"ratio {seconds / t_numstat:5.1f}x" if seconds is not t_numstat else ""
            print(f"{name:<30}{seconds * 1000:8.1f} ms   {ratio}")


if __name__ == "__main__":
    main()
