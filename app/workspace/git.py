"""Running git for ourobot: no shell, no host config, and tokens only in a one-command header.

`run_git` is the one place ourobot starts git (the workspace's mirrors and worktrees, the
guards' reads of a change, the reviewers' diffs): an argv list, never a shell, an environment
the caller builds from `isolated_env`, a timeout, and one way of saying that git is missing or
did not finish. What a non-zero exit means is the caller's to say.

A token goes to git as an `http.extraHeader` passed through `GIT_CONFIG_*` environment
variables of that one process: never in a remote URL (which git stores in .git/config and
prints in errors), never in argv (visible to every user in `ps`), never in a config file.

Every git ourobot runs is hardened the same way, whatever the caller passed: the settings a
repository's own config (or a test that wrote into one) could use to make git start a program
on this host — hooks, an fsmonitor, signing — are overridden on the command line, which wins
over every config file. Where a repository lives is never discovered from a directory code
under test could write: callers that work in a worktree name it (`repo_env`).
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


# Settings that would run a program of the repository's choosing, pinned for every git run.
# (Filter drivers and diff programs need a definition in config, which code under test can
# never write: the cage mounts no git directory writable, and host-side git never finds its
# repository through the worktree.)
HARDENING: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.splitIndex", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)


def config_env(
    pairs: Sequence[tuple[str, str]], env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`env` with `pairs` added as command-line config (`GIT_CONFIG_KEY_n`), after any it holds."""
    out = dict(env or {})
    start = int(out.get("GIT_CONFIG_COUNT", "0") or 0)
    for offset, (key, value) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{start + offset}"] = key
        out[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(pairs))
    return out


def repo_env(
    git_dir: Path, work_tree: Path | None = None, *, index: Path | None = None
) -> dict[str, str]:
    """Name the repository (and its work tree) for git instead of letting it look: a `.git`
    file or directory in a worktree is written by whatever ran there last."""
    env = {"GIT_DIR": str(git_dir), "GIT_CEILING_DIRECTORIES": "/"}
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


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


def hardened(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with `HARDENING` last, so it wins over the caller's config and the repository's."""
    return config_env(HARDENING, {k: v for k, v in env.items() if k != "GIT_CONFIG_PARAMETERS"})


def token_env(token: str, *, key: str = "http.extraHeader") -> dict[str, str]:
    """`token` as an HTTP Basic header for the one git process given this environment."""
    credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return config_env([(key, f"Authorization: Basic {credentials}")])


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
        env = merge_env(env, token_env(token))
    return merge_env(env, extra or {})


def merge_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """`base` updated by `extra`, the command-line config of both kept (`extra`'s after)."""
    plain = {k: v for k, v in {**base, **extra}.items() if not k.startswith("GIT_CONFIG_")}
    return config_env([*config_pairs(base), *config_pairs(extra)], plain)


def config_pairs(env: Mapping[str, str]) -> list[tuple[str, str]]:
    count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    return [
        (env[f"GIT_CONFIG_KEY_{n}"], env.get(f"GIT_CONFIG_VALUE_{n}", "")) for n in range(count)
    ]


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
    """Run `git <args>` once with `env` (hardened); its exit code is the caller's to judge.

    Raises `UserError` when git is not installed, `GitError` when it does not finish within
    `timeout_s` or the system refuses to start it (an argument over the system's size limit).
    """
    try:
        return subprocess.run(
            ["git", *args],
            input=stdin,
            cwd=cwd,
            env=hardened(env),
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
