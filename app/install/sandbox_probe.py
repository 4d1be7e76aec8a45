"""`ourobot doctor`'s sandbox check: the cage tried from inside, end to end.

A probe runs in the cage exactly as a test would and must fail at everything that matters: to
reach a port this process opened on loopback, to read the App's key and the data directory, to
hold a capability. Whatever it manages is a FAIL naming it; a machine without bubblewrap is a
FAIL too unless the operator allowed unsandboxed runs.
"""

from __future__ import annotations

import socket
import sys
import tempfile
from pathlib import Path

from app.loop.caging import limits_of
from app.settings import Settings
from app.workspace.cage.entry import Cage, CageJob

PROBE = """
import socket, sys
port, targets = int(sys.argv[1]), sys.argv[2:]
try:
    socket.create_connection(("127.0.0.1", port), timeout=2)
    print("REACHED loopback")
except OSError:
    pass
for target in targets:
    try:
        open(target, "rb").read(1)
        print("READ", target)
    except OSError:
        pass
caps = open("/proc/self/status").read().split("CapEff:")[1].split()[0]
if caps.strip("0"):
    print("CAPABILITIES", caps)
"""


def sandbox_end_to_end(settings: Settings) -> tuple[str, str]:
    """(status, detail) of the cage on this machine, probed from inside."""
    cage = Cage.for_host("auto", limits=limits_of(settings))
    if cage.isolation != "bwrap":
        status = "ok" if settings.allow_unsandboxed else "FAIL"
        return status, f"{cage.warning} (OUROBOT_ALLOW_UNSANDBOXED is {settings.allow_unsandboxed})"
    targets = [str(p) for p in (settings.private_key_path, settings.env_file) if p is not None]
    targets.append(str(settings.data_dir))
    with socket.socket() as listener, tempfile.TemporaryDirectory() as scratch:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        Path(scratch, "probe.py").write_text(PROBE)
        command = " ".join([sys.executable, "probe.py", str(port), *map(_quote, targets)])
        run = cage.run(CageJob(command, Path(scratch), timeout_s=30, what="the probe"))
    escaped = [line for line in run.output_tail.splitlines() if line.split(" ")[0] in
               ("REACHED", "READ", "CAPABILITIES")]  # fmt: skip
    if escaped:
        return "FAIL", "the sandbox let a probe through: " + "; ".join(escaped)
    if run.exit_code != 0:
        return "FAIL", f"the probe did not run in the sandbox: {run.summary()}"
    missing = (
        f"; unbounded: {', '.join(cage.enforcement.missing)}" if cage.enforcement.missing else ""
    )
    return "ok", (
        "bubblewrap holds: loopback unreachable, the key and data directory unreadable, no "
        f"capability; limits by {cage.enforcement.how()}{missing}"
    )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
