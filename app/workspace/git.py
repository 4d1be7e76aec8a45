"""Running git for ourobot: no shell, no host config, and tokens only in a one-command header.

A token goes to git as an `http.extraHeader` passed through `GIT_CONFIG_*` environment
variables of that one process: never in a remote URL (which git stores in .git/config and
prints in errors), never in argv (visible to every user in `ps`), never in a config file.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError

GIT_TIMEOUT_S = 300.0
IDENTITY = ("ourobot", "ourobot@users.noreply.github.com")


class GitError(Exception):
    """A git command failed; the message carries git's stderr with any token redacted."""


@dataclass(frozen=True)
class GitResult:
    stdout: str
    stderr: str


def _isolated_env(token: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "GIT_AUTHOR_NAME": IDENTITY[0],
        "GIT_AUTHOR_EMAIL": IDENTITY[1],
        "GIT_COMMITTER_NAME": IDENTITY[0],
        "GIT_COMMITTER_EMAIL": IDENTITY[1],
        "HOME": os.devnull,
    }
    if token is not None:
        credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "http.extraHeader",
                "GIT_CONFIG_VALUE_0": f"Authorization: Basic {credentials}",
            }
        )
    if extra:
        env.update(extra)
    return env


def redact(text: str, token: str | None) -> str:
    if not token:
        return text
    encoded = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return text.replace(token, "***").replace(encoded, "***")


def git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
) -> GitResult:
    """Run `git <args>`; raise GitError (redacted) on failure or timeout."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=_isolated_env(token, env),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise UserError("git is not installed: install git and retry") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} timed out after {timeout_s:.0f}s") from None
    if proc.returncode != 0:
        lines = redact(proc.stderr.strip() or proc.stdout.strip(), token).splitlines()
        # git's own verdict is the fatal/error line; hints around it only add noise.
        reason = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
        reason = reason or (lines[-1] if lines else "")
        raise GitError(f"git {args[0]} failed ({proc.returncode}): {reason}")
    return GitResult(stdout=proc.stdout, stderr=redact(proc.stderr, token))
