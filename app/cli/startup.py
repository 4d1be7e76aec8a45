"""What a long-running process (`serve`, `worker`, `beat`) checks before it starts anything.

A process never starts half-configured: a setting that is wrong is one line naming the
variable and the fix (exit 2), found before a socket is bound or a worker forked, rather than a
traceback in the log the first time a job needs it. The App's credentials are checked by
`app.install.credentials` (shared with `ourobot doctor`).
"""

from __future__ import annotations

from pathlib import Path

from app.errors import ConfigError
from app.install.credentials import check_app_credentials
from app.settings import Settings
from app.workspace.cage.entry import bwrap_problem, find_bwrap
from app.workspace.cage.mounts import mount_sources
from app.workspace.cage.toolchain import Toolchain

__all__ = [
    "check_app_credentials",
    "require_sandbox",
    "require_unexposed",
    "require_webhook_secret",
]


def require_webhook_secret(settings: Settings) -> None:
    if settings.webhook_secret is None or not settings.webhook_secret.get_secret_value():
        raise ConfigError(
            "OUROBOT_WEBHOOK_SECRET is not set: ourobot serve refuses to accept unsigned webhooks"
        )


def require_unexposed(settings: Settings) -> None:
    """The App's key, the env file and the data directory must lie where no caged run can
    see them: under none of the paths the sandbox mounts (the system's folders, the allowed
    parts of /etc, the toolchains on PATH)."""
    watched = {
        "OUROBOT_PRIVATE_KEY_PATH": settings.private_key_path,
        "OUROBOT_ENV_FILE": settings.env_file,
        "OUROBOT_DATA_DIR": settings.data_dir,
    }
    sources = mount_sources(Toolchain.for_host().binds)
    for name, path in watched.items():
        if path is None:
            continue
        real = Path(path).expanduser().resolve()
        exposed = next((s for s in sources if real == s or real.is_relative_to(s)), None)
        if exposed is not None:
            raise ConfigError(
                f"{name} ({path}) lies under {exposed}, which the sandbox shows to the code it "
                "runs: move it outside (e.g. /etc/ourobot or /var/lib/ourobot)"
            )


def require_sandbox(settings: Settings, who: str) -> str | None:
    """Server mode runs repository code only in bubblewrap: refuse to start without it unless
    the operator allowed it (then the warning to print)."""
    bwrap = find_bwrap()
    problem = "bubblewrap (bwrap) is not installed" if bwrap is None else bwrap_problem(bwrap)
    if problem is None:
        return None
    if not settings.allow_unsandboxed:
        raise ConfigError(
            f"{who} runs repository code only in the bubblewrap sandbox, and {problem}: "
            "install bubblewrap (see docs/deployment.md), or set OUROBOT_ALLOW_UNSANDBOXED=1"
        )
    return (
        f"warning: {problem}; OUROBOT_ALLOW_UNSANDBOXED=1: code from repositories runs "
        "unsandboxed, and every cycle's record and pull request say so"
    )
