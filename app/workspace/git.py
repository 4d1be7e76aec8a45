"""Running git for ourobot: no shell, no host config, and tokens only in a one-command header.

`run_git` is the one place ourobot starts git (the workspace's mirrors and worktrees, the
guards' reads of a change, the reviewers' diffs): an argv list, never a shell, an environment
the caller builds from `isolated_env`, a timeout, and one way of saying that git is missing or
did not finish. What a non-zero exit means is the caller's to say.

A token goes to git as an `http.extraHeader` passed through `GIT_CONFIG_*` environment
variables of that one process: never in a remote URL (which git stores in .git/config and
prints in errors), never in argv (visible to every user in `ps`), never in a config file.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError

GIT_TIMEOUT_S = 300.0
IDENTITY = ("ourobot", "ourobot@users.noreply.github.com")
# A full object name: SHA-1 (40 hex digits) or SHA-256 (64). GitHub's head SHAs are these too.
OBJECT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class GitError(Exception):
    """A git command failed; the message carries git's stderr with any token redacted."""


@dataclass(frozen=True)
class GitResult:
    stdout: str
    stderr: str


def is_object_id(text: str) -> bool:
    """Whether `text` is a full commit (or any object) name, as git and GitHub print one."""
    return OBJECT_ID.match(text) is not None


def isolated_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git ourobot runs gets: no system, global or user configuration,
    no replace objects, no system attributes, no prompts, no optional locks; then `extra`."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        # A `refs/replace` ref would make git show other content than the commit holds.
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    env.update(extra or {})
    return env


def token_env(token: str, *, key: str = "http.extraHeader") -> dict[str, str]:
    """`token` as an HTTP Basic header for the one git process given this environment."""
    credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": key,
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {credentials}",
    }


def _workspace_env(token: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    env = isolated_env(
        {
            "GIT_AUTHOR_NAME": IDENTITY[0],
            "GIT_AUTHOR_EMAIL": IDENTITY[1],
            "GIT_COMMITTER_NAME": IDENTITY[0],
            "GIT_COMMITTER_EMAIL": IDENTITY[1],
        }
    )
    if token is not None:
        env.update(token_env(token))
    env.update(extra or {})
    return env


def redact(text: str, token: str | None) -> str:
    if not token:
        return text
    encoded = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return text.replace(token, "***").replace(encoded, "***")


def run_git(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None = None,
    stdin: bytes | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git <args>` once with exactly `env`; its exit code is the caller's to judge.

    Raises `UserError` when git is not installed, `GitError` when it does not finish within
    `timeout_s` or the system refuses to start it (an argument over the system's size limit).
    """
    try:
        return subprocess.run(
            ["git", *args],
            input=stdin,
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        if cwd is not None and not cwd.is_dir():
            raise GitError(f"git {args[0]}: no such directory {cwd}") from None
        raise UserError("git is not installed: install git and retry") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} timed out after {timeout_s:g}s") from None
    except OSError as exc:
        raise GitError(f"git {args[0]} could not run: {exc.strerror or exc}") from None


def git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
) -> GitResult:
    """Run `git <args>` as ourobot (its identity, `token` if given); raise GitError (redacted)
    on failure or timeout."""
    proc = run_git(args, env=_workspace_env(token, env), cwd=cwd, timeout_s=timeout_s)
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise _failed(args, proc.returncode, redact(stderr.strip() or stdout.strip(), token))
    return GitResult(stdout=stdout, stderr=redact(stderr, token))


def git_bytes(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    ok: Sequence[int] = (0,),
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
) -> subprocess.CompletedProcess[bytes]:
    """`git <args>` as ourobot with bytes in and out (exact file contents, NUL-separated
    lists); an exit code outside `ok` raises GitError (one line)."""
    proc = run_git(args, env=_workspace_env(None, env), cwd=cwd, stdin=stdin, timeout_s=timeout_s)
    if proc.returncode not in ok:
        raise _failed(args, proc.returncode, proc.stderr.decode("utf-8", "replace").strip())
    return proc


def _failed(args: Sequence[str], code: int, output: str) -> GitError:
    lines = output.splitlines()
    # git's own verdict is the fatal/error line; hints around it only add noise.
    reason = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
    reason = reason or (lines[-1] if lines else "")
    return GitError(f"git {args[0]} failed ({code}): {reason}")
