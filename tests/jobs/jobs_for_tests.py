"""Jobs that exist only in tests, loaded into real workers through OUROBOT_EXTRA_JOB_MODULES.

They follow the documented run-once pattern (`app.jobs.context` module doc): a keyed effect recorded
with `once`, and a check-then-act on a marker where "GitHub" can see it. Here "GitHub" is a
file in the data directory, `github-effects.log`; every start of a job is appended to
`job-starts.log` with the process id, so tests can see reruns and kill the right process.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from githubkit import GitHub

from app.jobs.context import JobContext, once
from app.jobs.registry import job

GITHUB_LOG = "github-effects.log"
STARTS_LOG = "job-starts.log"


def append_line(path: Path, line: str) -> None:
    with path.open("a") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def marker(key: str) -> str:
    return f"<!-- ourobot:{key} -->"


@job("tests.post_once")
def post_once(ctx: JobContext, *, key: str, hold_s: int = 0, die_after_write: bool = False) -> None:
    """Post `key` to "GitHub" once, after `hold_s` seconds of work (the window for a kill)."""
    data = ctx.settings.data_dir
    append_line(data / STARTS_LOG, f"{key} {os.getpid()}")
    time.sleep(hold_s)
    with once(ctx, f"tests:{key}") as first:
        if not first:
            return
        if marker(key) in read_lines(data / GITHUB_LOG):
            return  # written by a run that died before recording it
        append_line(data / GITHUB_LOG, marker(key))
        died = data / f"died-{key}"
        if die_after_write and not died.exists():
            died.touch()
            os.kill(os.getpid(), signal.SIGKILL)  # between the GitHub write and the record


@job("tests.call_github")
def call_github(ctx: JobContext, *, key: str, path: str) -> None:
    """GET `path` anonymously on the configured GitHub API (no inline retries), then record
    `key` once. A failure GitHub answers with propagates, for the task layer to retry."""
    client = GitHub(base_url=ctx.settings.github_api_url, auto_retry=False, http_cache=False)
    append_line(ctx.settings.data_dir / STARTS_LOG, f"{key} {os.getpid()}")
    with once(ctx, f"tests:{key}") as first:
        if first:
            client.request("GET", path)
            append_line(ctx.settings.data_dir / GITHUB_LOG, marker(key))
