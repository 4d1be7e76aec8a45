"""Whether the cage can run on this runner, and if not, the one line saying what it needs.

ourobot runs a repository's code only inside bubblewrap in server mode, the Action included
(`app.loop.caging`). On GitHub's Ubuntu 24.04 runners bubblewrap is there but AppArmor lets
only profiled programs create unprivileged user namespaces
(`kernel.apparmor_restrict_unprivileged_userns=1`), so bwrap fails; the action's
`prepare-sandbox` step lifts that restriction on GitHub-hosted runners (throwaway machines).
Where it is still in force, or bwrap is missing, this says so in one line before any cycle.
"""

from __future__ import annotations

from pathlib import Path

from app.workspace.cage.entry import bwrap_problem, find_bwrap

APPARMOR_KNOB = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
LIFT = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"


def restricted_by_apparmor(knob: Path = APPARMOR_KNOB) -> bool:
    try:
        return knob.read_text().strip() == "1"
    except OSError:
        return False


def sandbox_need(*, allow_unsandboxed: bool) -> str | None:
    """What the runner lacks for the sandbox, in one line; None when bwrap works (or the
    operator allowed cycles without it)."""
    if allow_unsandboxed:
        return None
    bwrap = find_bwrap()
    problem = "bubblewrap (bwrap) is not installed" if bwrap is None else bwrap_problem(bwrap)
    if problem is None:
        return None
    return what_it_needs(problem, missing=bwrap is None, restricted=restricted_by_apparmor())


def what_it_needs(problem: str, *, missing: bool, restricted: bool) -> str:
    if missing:
        return (
            "ourobot runs code only in the bubblewrap sandbox, and this runner has no bwrap: "
            "run `sudo apt-get install -y bubblewrap` before ourobot"
        )
    if restricted:
        return (
            f"bubblewrap cannot build its sandbox here ({problem}) because AppArmor restricts "
            f"unprivileged user namespaces (Ubuntu 24.04): run `{LIFT}` before ourobot (the "
            "action's prepare-sandbox does on GitHub-hosted runners)"
        )
    return (
        f"bubblewrap cannot build its sandbox here ({problem}); ourobot runs code only inside "
        "it (OUROBOT_ALLOW_UNSANDBOXED=1 runs cycles without it, and every report says so)"
    )


def annotation(need: str) -> str:
    """`need` as one `::error` workflow command (its data escaped as GitHub asks)."""
    data = need.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::error title=ourobot sandbox::{data}"
