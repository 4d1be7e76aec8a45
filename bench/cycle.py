"""Implementer harness benchmark on a real repository: what one iteration costs the harness
beyond git itself, and what a worktree costs against a fresh clone, same repository, same run.

    .venv/bin/python bench/cycle.py [--repo PATH] [--runs 5]

`--repo` is any git repository (bare or not) of a few thousand files; the default is
`$OUROBOT_BENCH_REPO`, else the `python/mypy` snapshot at /work/.mirror/python+mypy/repo
(1,921 files). Measured, best of `--runs`:

- **iteration**: the harness's non-model, non-test work for one iteration's edits (REPLACE in
  three source files, an APPEND to a document, a new module): parse the reply, validate every
  path, apply, the test-surface check, the guards' iteration check, strip artifacts, commit with
  trailers; against a bare `git add -A && git commit` of the same edits written directly;
- **worktree**: `open_workspace` (stale-state recovery, `git worktree add` of a new branch, and
  the removal in its `finally`) against `git clone --no-local` (a fresh clone: objects copied)
  and `git clone --local` (hard links).

Prints times and ratios. No assertions: the numbers are for the note.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.loop.edits import parse_reply  # noqa: E402
from app.loop.landing import land_edits  # noqa: E402
from app.loop.ticket import Ticket  # noqa: E402
from app.repo_config import load_repo_config  # noqa: E402
from app.workspace.worktree import Trailers, Workspace, open_workspace  # noqa: E402

DEFAULT_REPO = Path("/work/.mirror/python+mypy/repo")
FENCE = "```"


def git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout


def best(runs: int, setup: Callable[[], None], work: Callable[[], None]) -> float:
    times = []
    for _ in range(runs):
        setup()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def pick_edits(ws: Workspace) -> tuple[str, dict[str, str]]:
    """A reply of five edits on real files, and the same files' new contents."""
    sources = []
    for path in sorted(ws.tracked()):
        if path.endswith(".py") and "/tests/" not in path and not path.startswith("tests/"):
            text = (ws.path / path).read_text(encoding="utf-8", errors="replace")
            lines = text.splitlines(keepends=True)
            unique = [ln for ln in lines if len(ln.strip()) > 20 and lines.count(ln) == 1]
            if len(lines) > 100 and unique:
                sources.append((path, text, unique[len(unique) // 2]))
        if len(sources) == 3:
            break
    doc = next(p for p in sorted(ws.tracked()) if p.endswith((".rst", ".md")))
    blocks: list[str] = []
    new: dict[str, str] = {}
    for path, text, line in sources:
        changed = line.rstrip("\n") + "  # touched by the benchmark\n"
        blocks.append(f"### REPLACE: {path}\n{FENCE}\n<<<<<<< SEARCH\n{line}=======\n"
                      f"{changed}>>>>>>> REPLACE\n{FENCE}\n")  # fmt: skip
        new[path] = text.replace(line, changed, 1)
    appended = "\nA paragraph added by the benchmark.\n"
    blocks.append(f"### APPEND: {doc}\n{FENCE}\n{appended.strip()}\n{FENCE}\n")
    doc_text = (ws.path / doc).read_text(encoding="utf-8")
    new[doc] = doc_text + ("" if doc_text.endswith("\n") else "\n") + appended.lstrip("\n")
    module = "def benchmark_helper():\n    return 42\n"
    blocks.append(f"### FILE: _bench_helper.py\n{FENCE}\n{module}{FENCE}\n")
    new["_bench_helper.py"] = module
    return "Five edits.\n\n" + "\n".join(blocks), new


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, default=Path(os.environ.get(
        "OUROBOT_BENCH_REPO", DEFAULT_REPO)))  # fmt: skip
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not (args.repo / "HEAD").exists() and not (args.repo / ".git").exists():
        print(f"bench/cycle.py: {args.repo} is not a git repository (pass --repo)")
        return 2
    with tempfile.TemporaryDirectory(prefix="ourobot-bench-") as scratch:
        root = Path(scratch)
        source = root / "source"
        git(root, "clone", "-q", "--no-local", str(args.repo), str(source))
        base = git(source, "rev-parse", "HEAD").strip()
        files = len(git(source, "ls-files").splitlines())
        config = load_repo_config("version: 1\ntest_command: 'python -m pytest -q'\n")
        ticket = Ticket("bench-1", "local:bench#bench-1", "bench", "Edit five files.\n")
        print(f"repository: {args.repo} at {base[:12]}, {files} files; best of {args.runs}")

        # ---- one iteration ---------------------------------------------------------------
        with open_workspace(source, ticket="bench-1", base_sha=base, root=root) as ws:
            reply, contents = pick_edits(ws)
            parsed = parse_reply(reply)
            assert not parsed.problems, parsed.problems
            assert len(parsed.edits) == 5

            def reset() -> None:
                ws.reset(base)

            def harness() -> None:
                landing = land_edits(ws, config, ticket, parse_reply(reply))
                assert not landing.refusals, landing.refusals
                assert ws.commit("bench: iteration", Trailers("bench-1", 1, "bench:model"))

            def bare() -> None:
                for path, text in contents.items():
                    (ws.path / path).write_text(text, encoding="utf-8")
                git(ws.path, "add", "-A")
                git(ws.path, "commit", "-q", "-m", "bench: bare")

            harness_s = best(args.runs, reset, harness)
            bare_s = best(args.runs, reset, bare)
        print(f"iteration: harness {harness_s * 1000:.0f} ms, bare git add -A && git commit "
              f"{bare_s * 1000:.0f} ms, ratio {harness_s / bare_s:.1f}x")  # fmt: skip

        # ---- worktree against a clone --------------------------------------------------------
        clones = root / "clones"

        def clean() -> None:
            shutil.rmtree(clones, ignore_errors=True)
            clones.mkdir()

        def worktree() -> None:
            with open_workspace(source, ticket="bench-2", base_sha=base, root=clones):
                pass

        def clone(mode: str) -> Callable[[], None]:
            return lambda: git(root, "clone", "-q", mode, str(source), str(clones / "c"))

        worktree_s = best(args.runs, clean, worktree)
        fresh_s = best(args.runs, clean, clone("--no-local"))
        local_s = best(args.runs, clean, clone("--local"))
    print(
        f"worktree: open_workspace (add + remove) {worktree_s * 1000:.0f} ms; "
        f"git clone --no-local {fresh_s * 1000:.0f} ms (ratio {worktree_s / fresh_s:.2f}x); "
        f"git clone --local {local_s * 1000:.0f} ms (ratio {worktree_s / local_s:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
