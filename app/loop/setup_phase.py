"""The setup phase: the project's own environment, prepared once and reused.

`setup.command` runs before the baseline on a fresh checkout of the base, in the cage with one
difference: outbound connections to the hosts of `setup.network` go through the filtering proxy
(`app.workspace.cage.network`); nothing else is reachable and no secret is there. What it wrote
(every path the base does not track: a virtualenv, `node_modules`) is kept in the repository's
setup cache and shown, read-only and at the same path, to every later run of the cycle: the
baseline, the model's commands, each test run. It is never staged or committed: it is not the
model's work. The project is at the same path (`/workspace`) in every run, so a virtualenv's
absolute paths and an editable install stay true for whatever commit is being judged.

The result is reused while the inputs that decide it are unchanged: the command, the network,
the toolchain and the contents of the files `setup.cache_key` names at the base.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.guards.paths import ProtectedPaths
from app.loop.caging import is_secret_file
from app.repo_config import RepoConfig
from app.settings import Settings
from app.workspace.cage.entry import Cage, CageJob, CageRun
from app.workspace.cage.limits import MiB
from app.workspace.cage.network import NetworkUnavailable, filtering_proxy
from app.workspace.setup_cache import SetupCache
from app.workspace.tree_files import remove_tree, write_beneath
from app.workspace.worktree import Workspace

Overlays = tuple[tuple[Path, str], ...]


@dataclass(frozen=True)
class SetupResult:
    overlays: Overlays = ()
    cached: bool = False
    elapsed_s: float = 0.0
    failed: str | None = None  # why the cycle cannot go on
    note: str = ""

    def line(self) -> str:
        return self.note or "setup: none (no setup.command)"


def setup_key(config: RepoConfig, cage: Cage, inputs: dict[str, str]) -> str:
    """What decides the setup's result, as one digest."""
    decided = {
        "command": config.setup.command,
        "network": sorted(config.setup.network),
        "toolchain": cage.toolchain.path,
        "inputs": inputs,
    }
    return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()[:24]


def key_inputs(workspace: Workspace, patterns: Sequence[str]) -> dict[str, str]:
    """path -> blob id at the base of every tracked file the patterns name."""
    if not patterns:
        return {}
    wanted = ProtectedPaths(tuple(patterns))
    _, out = workspace.git_raw("ls-tree", "-r", "-z", "--full-tree", workspace.base_sha)
    found = {}
    for record in out.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        path = raw.decode("utf-8", "surrogateescape")
        if path and wanted.match(path) is not None:
            found[path] = meta.split()[2].decode()
    return found


def prepare(
    workspace: Workspace,
    config: RepoConfig,
    cage: Cage,
    settings: Settings,
    repository: str,
    *,
    cancel: Callable[[], bool] | None = None,
) -> SetupResult:
    """The setup's result for this cycle: from the cache, or by running the command."""
    command = config.setup.command
    if command is None:
        return SetupResult()
    if cage.isolation != "bwrap":
        return SetupResult(failed=(
            "setup.command needs the bubblewrap sandbox (its network goes through a filtering "
            "proxy, and its result is shown to every run at the same path): install bubblewrap"
        ))  # fmt: skip
    started = time.monotonic()
    key = setup_key(config, cage, key_inputs(workspace, config.setup.cache_key))
    cache = SetupCache(settings.data_dir, repository, settings.setup_cache_mb * MiB)
    found = cache.lookup(key)
    if found is not None:
        elapsed = time.monotonic() - started
        return SetupResult(tuple(found), True, elapsed,
                           note=f"setup: cached ({key[:12]}), {elapsed:.1f}s")  # fmt: skip
    try:
        run, outputs = _run(workspace, config, cage, settings, cancel)
    except NetworkUnavailable as exc:
        return SetupResult(failed=str(exc))
    elapsed = time.monotonic() - started
    if not run.passed:
        tail = "\n".join(run.output_tail.splitlines()[-20:])
        return SetupResult(failed=f"setup.command {run.summary()}:\n{tail}", elapsed_s=elapsed)
    links = sorted(relative for relative, path in outputs.items() if path.is_symlink())
    if links:
        # Shown to later runs by a bind, which resolves a link on this machine, not inside.
        for path in outputs.values():
            remove_tree(path)
        return SetupResult(failed=(
            f"setup.command left a link at {', '.join(links[:5])}: what setup writes is shown "
            "to later runs by binding it, which would follow a link out of the sandbox, so a "
            "link may be inside what setup wrote (.venv/bin/python) but not be one of its "
            "top-level outputs"
        ), elapsed_s=elapsed)  # fmt: skip
    stored = cache.store(key, outputs)
    return SetupResult(tuple(stored), False, elapsed,
                       note=f"setup: ran in {elapsed:.1f}s, cached as {key[:12]}")  # fmt: skip


def _run(
    workspace: Workspace,
    config: RepoConfig,
    cage: Cage,
    settings: Settings,
    cancel: Callable[[], bool] | None,
) -> tuple[CageRun, dict[str, Path]]:
    """Run the command on a fresh checkout of the base; the run and what it wrote. The
    checkout is kept until the outputs are moved into the cache, then removed."""
    roomy = Cage(mode=cage.mode, bwrap=cage.bwrap_path, toolchain=cage.toolchain,
                 limits=replace(cage.limits, disk_bytes=settings.cage_setup_disk_mb * MiB),
                 enforcement=cage.enforcement)  # fmt: skip
    tracked = workspace.tracked(workspace.base_sha)
    secret = is_secret_file(config)
    with (
        workspace.checkout(workspace.base_sha) as tree,
        filtering_proxy(config.setup.network) as socket,
    ):
        for path in (p for p in tracked if secret(p)):
            write_beneath(tree, path, b"")  # no secret in the setup either
        run = roomy.run(CageJob(
            config.setup.command or "", tree, timeout_s=config.setup.timeout_s, what="setup",
            proxy=socket, cancel=cancel,
        ))  # fmt: skip
        outputs = written(tree, tracked) if run.passed else {}
        if outputs:
            # Moved out of the checkout before it is removed; the cache takes them from here.
            holding = workspace.scratch / f"setup-{os.getpid()}-{time.monotonic_ns()}"
            holding.mkdir()
            moved = {}
            for relative, source in outputs.items():
                target = holding / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
                moved[relative] = target
            outputs = moved
    return run, outputs


def written(tree: Path, tracked: Sequence[str]) -> dict[str, Path]:
    """The topmost paths under `tree` that the base does not track: what setup wrote."""
    folders = {"/".join(p.split("/")[:n]) for p in tracked for n in range(1, p.count("/") + 1)}
    files = set(tracked)
    found: dict[str, Path] = {}

    def visit(relative: str) -> None:
        for entry in sorted(
            os.scandir(tree / relative if relative else tree), key=lambda e: e.name
        ):
            path = f"{relative}/{entry.name}" if relative else entry.name
            if path in files:
                continue
            if path in folders and entry.is_dir(follow_symlinks=False):
                visit(path)
            else:
                found[path] = tree / path

    visit("")
    return found
