"""A job that only end-to-end tests load (OUROBOT_EXTRA_JOB_MODULES): work in flight.

It writes to GitHub again and again and never checks the halt itself, so what stops it is the
GitHub client's write guard: the proof that no code path can forget to ask.
"""

from __future__ import annotations

import time

from app.jobs.context import JobContext
from app.jobs.registry import job


@job("e2e.busy_writer")
def busy_writer(
    ctx: JobContext, *, installation_id: int, repo: str, number: int, writes: int
) -> None:
    github = ctx.github.installation(installation_id)
    owner, name = repo.split("/", 1)
    for index in range(writes):
        github.rest.issues.create_comment(owner, name, number, body=f"busy write {index}")
        time.sleep(0.1)
