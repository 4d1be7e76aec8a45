"""The cage a cycle runs in: built from the repository's config and the operator's settings.

- the sandbox mode is the repository's (`sandbox: auto | required | off`), but server mode
  (`serve`, `worker`, the Action) runs nothing outside bubblewrap unless the operator set
  `OUROBOT_ALLOW_UNSANDBOXED=1`; then every cycle's record and pull request say so;
- the limits are the operator's (`OUROBOT_CAGE_*`);
- the repository's secret files (`.env`, `.env.*`, `secrets/**`, `*.pem`, `*.key`, and the
  repository's own `guards.extra_protected_paths`) are masked in every run, so redaction of
  what a run prints is a second line, not the only one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.errors import ConfigError
from app.guards.paths import ProtectedPaths
from app.repo_config import RepoConfig
from app.settings import Settings
from app.workspace.cage.entry import Cage, SandboxUnavailable, find_bwrap
from app.workspace.cage.limits import Limits, MiB
from app.workspace.cage.toolchain import Toolchain
from app.workspace.suite import SuiteRunner

SECRET_FILE_PATTERNS = (".env", ".env.*", "secrets/**", "*.pem", "*.key")
UNSANDBOXED = (
    "this cycle ran without the bubblewrap sandbox (OUROBOT_ALLOW_UNSANDBOXED=1): the code it "
    "ran could read this machine's files and reach its network"
)


def limits_of(settings: Settings) -> Limits:
    return Limits(
        processes=settings.cage_processes,
        memory_bytes=settings.cage_memory_mb * MiB,
        tmp_bytes=settings.cage_tmp_mb * MiB,
        disk_bytes=settings.cage_disk_mb * MiB,
    )


def cycle_cage(config: RepoConfig, settings: Settings, *, server: bool) -> Cage:
    """The cage for `config` on this machine; `SandboxUnavailable` (one line) when server mode
    may not run without the sandbox and cannot run with it."""
    if config.toolchain_path is not None:
        missing = [d for d in config.toolchain_path if not Path(d).is_dir()]
        if missing:
            raise ConfigError(
                f"toolchain_path: {missing[0]} is not a folder on this machine; name folders "
                "that exist here (e.g. a Python installation's bin)"
            )
        toolchain = Toolchain.named(config.toolchain_path)
        cage = Cage(mode=config.sandbox, bwrap=find_bwrap(), toolchain=toolchain,
                    limits=limits_of(settings))  # fmt: skip
    else:
        cage = Cage.for_host(config.sandbox, limits=limits_of(settings))
    if server and cage.isolation != "bwrap" and not settings.allow_unsandboxed:
        why = cage.warning or f"the repository's config says sandbox: {config.sandbox}"
        raise SandboxUnavailable(
            f"ourobot runs repository code only in the bubblewrap sandbox in server mode ({why}); "
            "install bubblewrap, or set OUROBOT_ALLOW_UNSANDBOXED=1 to run it unsandboxed"
        )
    if server and cage.isolation != "bwrap":
        cage.warning = UNSANDBOXED + (f"; {cage.warning}" if cage.warning else "")
    return cage


def is_secret_file(config: RepoConfig) -> Callable[[str], bool]:
    patterns = ProtectedPaths((*SECRET_FILE_PATTERNS, *config.guards.extra_protected_paths))
    return lambda path: patterns.match(path) is not None


def suite_runner(config: RepoConfig, cage: Cage) -> SuiteRunner:
    return SuiteRunner(
        cage,
        config.test_command,
        timeout_s=config.budgets.test_timeout_s,
        is_secret=is_secret_file(config),
    )
