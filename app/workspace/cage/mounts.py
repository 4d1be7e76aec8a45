"""What a caged run sees of this machine: an allow-list, read-only, and an `/etc` of its own.

The root is bubblewrap's empty tmpfs, remounted read-only at the end, so nothing is there that
was not put there on purpose:

- the system's programs and libraries (`/usr` and the links or folders beside it);
- from `/etc`, only what toolchains read (`ETC_ALLOWED`: certificates, the dynamic linker's
  cache, alternatives, time zones, ...), and a synthesized `passwd`, `group`, `hosts`,
  `hostname`, `resolv.conf` and `nsswitch.conf` — never the host's `/etc` as a whole, where
  deployments keep the App's key and env file (`/etc/ourobot/`);
- the toolchains on the harness's PATH, read-only (`app.workspace.cage.toolchain`);
- the project at `PROJECT_ROOT`, the one writable project path; its secret files masked by an
  empty file; the repository's git objects read-only where git inside needs them;
- a `/tmp` and `/dev/shm` of fixed sizes, a `/proc` of the run's own PID namespace, a
  minimal `/dev`.

Everything else — `/home`, `/root`, `/opt` and `/srv` as wholes, `/var`, ourobot's data
directory and other repositories' mirrors and worktrees — is simply not there.
`mount_sources` lists every host path a run may see, for the startup check that refuses a key
or data directory lying under one of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What toolchains read from /etc; nothing else of the host's /etc is mounted. Certificates,
# never the folders beside them where a host keeps its private keys (/etc/ssl/private).
ETC_ALLOWED = (
    "alternatives",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "pki/tls/certs",
    "pki/tls/cert.pem",
    "pki/ca-trust",
    "crypto-policies",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "host.conf",
    "gai.conf",
    "protocols",
    "services",
    "mime.types",
    "magic",
    "mailcap",
    "os-release",
    "debian_version",
    "lsb-release",
    "locale.alias",
    "locale.conf",
    "perl",
    "fonts",
    "xml",
)
# Toolchains that keep their configuration in /etc (a JDK's security policy, Python's).
ETC_ALLOWED_PREFIXES = ("java-", "python3")
PROJECT_ROOT = "/workspace"
SANDBOX_TMP = "/tmp"  # noqa: S108 (the sandbox's own tmpfs, never the host's)


@dataclass(frozen=True)
class Bind:
    """A host path shown at `target` inside the sandbox."""

    source: Path
    target: str
    writable: bool = False

    def args(self) -> list[str]:
        return ["--bind" if self.writable else "--ro-bind", str(self.source), self.target]


def system_args() -> list[str]:
    """The system's program folders, read-only (links such as /bin -> usr/bin kept as links)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def etc_entries(etc: Path = Path("/etc")) -> list[Path]:
    """The host's /etc entries a run may read."""
    found = [etc / name for name in ETC_ALLOWED if os.path.lexists(etc / name)]
    try:
        names = sorted(os.listdir(etc))
    except OSError:
        return found
    return found + [etc / name for name in names if name.startswith(ETC_ALLOWED_PREFIXES)]


def write_etc(folder: Path, *, uid: int, gid: int, network: bool) -> dict[str, Path]:
    """The synthesized /etc files, written under `folder`: name -> host path."""
    folder.mkdir(parents=True, exist_ok=True)
    users = ["root:x:0:0:root:/tmp:/bin/sh", "nobody:x:65534:65534:nobody:/nonexistent:/bin/false"]
    groups = ["root:x:0:", "nogroup:x:65534:"]
    if uid not in (0, 65534):
        users.append(f"ourobot:x:{uid}:{gid}:ourobot:/tmp:/bin/sh")
    if gid not in (0, 65534):
        groups.append(f"ourobot:x:{gid}:")
    files = {
        "passwd": "\n".join(users) + "\n",
        "group": "\n".join(groups) + "\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost\n",
        "hostname": "sandbox\n",
        "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
        "resolv.conf": _resolv_conf() if network else "",
    }
    written = {}
    for name, text in files.items():
        path = folder / name
        path.write_text(text)
        written[name] = path
    return written


def _resolv_conf() -> str:
    try:
        return Path("/etc/resolv.conf").read_text()
    except OSError:
        return ""


def etc_args(synthesized: dict[str, Path]) -> list[str]:
    args = ["--dir", "/etc"]
    for entry in etc_entries():
        if entry.name not in synthesized:
            args += ["--ro-bind", str(entry), str(entry)]
    for name, path in synthesized.items():
        args += ["--ro-bind", str(path), f"/etc/{name}"]
    return args


def mask_args(project: Path, masked: Iterable[str], empty: Path) -> list[str]:
    """An empty, read-only file (`empty`) over each of the project's secret files (a folder
    gets an empty tmpfs); a path that is not there, or is a link, is left alone (nothing to
    hide, and a link is never followed out of the project)."""
    args: list[str] = []
    for relative in masked:
        host = project / relative
        target = f"{PROJECT_ROOT}/{relative}"
        if host.is_symlink() or not host.exists():
            continue
        if host.is_dir():
            args += ["--tmpfs", target, "--remount-ro", target]
        else:
            args += ["--ro-bind", str(empty), target]
    return args


def mount_sources(toolchains: Sequence[Path]) -> list[Path]:
    """Every host path a run may see (for the startup check of the key and data directory)."""
    sources = [Path(p).resolve() for p in SYSTEM_DIRS if os.path.isdir(p)]
    sources += [entry.resolve() for entry in etc_entries()]
    sources += [Path(t).resolve() for t in toolchains]
    return list(dict.fromkeys(sources))
