"""Bare mirrors of the repositories ourobot judges: one per repository, fetched over HTTP.

A mirror lives at `<data_dir>/mirrors/<owner>/<name>.git` (names lower-cased: GitHub's are
case-insensitive) and holds only what was asked for: base branches under `refs/heads/` and pull
request heads under `refs/pull/<n>/head`. Fetches go through `app.workspace.git.git`, so the token
travels in a one-command header and never lands in the mirror's config or in an error.

One job at a time fetches into a mirror (a file lock beside it); reading objects by SHA while
another job fetches is safe, so callers resolve what they need under the lock and read after.
Automatic gc is off in a mirror: a commit fetched by SHA (an old PR head after a force-push) is
referenced by nothing, and a gc during another job's evaluation must not prune it.
"""

from __future__ import annotations

import fcntl
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.workspace.git import GitError, GitResult, git, is_object_id

LOCK_TIMEOUT_S = 600.0
_LOCK_POLL_S = 0.05
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
# Only these transports may be named by a clone URL (never file://, ext:: or ssh from an API
# answer we did not choose).
_ALLOWED_PROTOCOLS = "https:http"
_MIRROR_CONFIG = (
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("fetch.writeCommitGraph", "false"),
    ("core.logAllRefUpdates", "false"),
)


class MirrorError(Exception):
    """The mirror could not be brought up to date; one line, no token."""


class RepoMirror:
    """The bare mirror of one repository under `data_dir`."""

    def __init__(self, data_dir: Path, full_name: str) -> None:
        owner, _, name = full_name.partition("/")
        for part in (owner, name):
            if not _NAME.match(part) or part in (".", ".."):
                raise MirrorError(f"invalid repository name {full_name!r}")
        self.full_name = full_name
        self.path = data_dir / "mirrors" / owner.lower() / f"{name.lower()}.git"
        self._lock_path = self.path.with_name(self.path.name + ".lock")

    # ---- fetching (under the lock) ----------------------------------------------------------

    def fetch_branch(
        self, clone_url: str, branch: str, *, token: str, lock_timeout_s: float = LOCK_TIMEOUT_S
    ) -> str:
        """Bring `refs/heads/<branch>` up to date; return the SHA it now points at."""
        ref = f"refs/heads/{branch}"
        self._check_ref(ref)
        with self.locked(lock_timeout_s):
            self._fetch(clone_url, [f"+{ref}:{ref}"], token)
            sha = self.resolve(ref)
        if sha is None:
            raise MirrorError(f"branch {branch!r} is not in {self.full_name}")
        return sha

    def fetch_pull_head(
        self,
        clone_url: str,
        number: int,
        head_sha: str,
        *,
        token: str,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
    ) -> None:
        """Make sure the commit `head_sha` of pull request `number` is in the mirror.

        The pull ref is fetched first (it usually holds `head_sha` or a descendant of it); a
        head that has since been force-pushed away is then fetched by its SHA, as GitHub allows.
        """
        if not is_object_id(head_sha):
            raise MirrorError(f"invalid head SHA {head_sha!r}")
        ref = f"refs/pull/{int(number)}/head"
        with self.locked(lock_timeout_s):
            if self.has_commit(head_sha):
                return
            self._fetch(clone_url, [f"+{ref}:{ref}"], token)
            if not self.has_commit(head_sha):
                self._fetch(clone_url, [head_sha], token)
        if not self.has_commit(head_sha):
            raise MirrorError(f"commit {head_sha[:12]} is not in {self.full_name}")

    @contextmanager
    def locked(self, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold this mirror's file lock (creating the mirror if needed) for the block."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + timeout_s
        with self._lock_path.open("a") as handle:
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise MirrorError(
                            f"the mirror of {self.full_name} stayed locked for {timeout_s:.0f} s"
                        ) from None
                    time.sleep(_LOCK_POLL_S)
            try:
                self._ensure()
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # ---- reading ----------------------------------------------------------------------------

    def resolve(self, ref: str) -> str | None:
        """The commit `ref` points at in the mirror, or None."""
        try:
            out = self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").stdout
        except GitError:
            return None
        sha = out.strip()
        return sha if is_object_id(sha) else None

    def has_commit(self, sha: str) -> bool:
        if not self.path.joinpath("HEAD").is_file():
            return False
        try:
            self._git("cat-file", "-e", f"{sha}^{{commit}}")
        except GitError:
            return False
        return True

    # ---- internals --------------------------------------------------------------------------

    def _ensure(self) -> None:
        if self.path.joinpath("HEAD").is_file():
            return
        try:
            git(["init", "--bare", "--quiet", str(self.path)])
            for key, value in _MIRROR_CONFIG:
                self._git("config", key, value)
        except GitError as exc:
            raise MirrorError(f"cannot create the mirror of {self.full_name}: {exc}") from None

    def _fetch(self, clone_url: str, refspecs: list[str], token: str) -> None:
        if not clone_url.startswith(("https://", "http://")):
            raise MirrorError(f"refusing to fetch {self.full_name} from {clone_url!r}")
        try:
            git(
                [
                    "fetch",
                    "--quiet",
                    "--no-tags",
                    "--no-recurse-submodules",
                    "--no-write-fetch-head",
                    clone_url,
                    *refspecs,
                ],
                token=token,
                env=self._env(),
            )
        except GitError as exc:
            raise MirrorError(f"cannot fetch {self.full_name}: {exc}") from None

    def _check_ref(self, ref: str) -> None:
        try:
            git(["check-ref-format", ref])
        except GitError:
            raise MirrorError(f"invalid branch name {ref.removeprefix('refs/heads/')!r}") from None

    def _git(self, *args: str) -> GitResult:
        return git(list(args), env=self._env())

    def _env(self) -> dict[str, str]:
        return {"GIT_DIR": str(self.path), "GIT_ALLOW_PROTOCOL": _ALLOWED_PROTOCOLS}
