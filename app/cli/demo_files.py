"""Where `ourobot demo` writes: the kept folder (`--keep DIR`) or a temporary one, and the record
folder (`--record DIR`), each checked and made absolute before anything starts.

Paths are absolute from the start because the demo's children (`ourobot serve`, git, the cage)
run in other working directories: a relative `--keep` once sent a cycle's git to a folder that
did not exist from where it ran. A kept folder is marked as the demo's (`MARKER`), so a second
`--keep` into it replaces the earlier demo's files, and only those; a folder that is not empty
and not a demo's is refused rather than written into. The temporary folder holds the sandbox
App's private key, so it is removed however the demo ends (`Workdir.remove`).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError

MARKER = ".ourobot-demo"
# What a demo writes at the top of its folder: replaced by the next demo kept there.
DEMO_ENTRIES = (
    "sandbox",
    "seed",
    "ourobot-data",
    "demo-client",
    "app.pem",
    "ourobot-serve.log",
    "ourobot-worker.log",
    MARKER,
)


@dataclass(frozen=True)
class Workdir:
    """The demo's folder: kept (the user's) or temporary (removed at the end)."""

    path: Path
    kept: bool

    def remove(self) -> None:
        if not self.kept:
            shutil.rmtree(self.path, ignore_errors=True)


def check_keep(keep: Path | None) -> Path | None:
    """`--keep DIR` as an absolute path, or a `UserError`; nothing is written yet."""
    if keep is None:
        return None
    path = keep.expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise UserError(f"--keep {keep}: exists and is not a folder")
    if path.is_dir() and any(path.iterdir()) and not (path / MARKER).is_file():
        raise UserError(
            f"--keep {keep}: the folder is not empty and holds no earlier demo; "
            "name a new or empty folder"
        )
    return path


def check_record(record: Path | None) -> Path | None:
    """`--record DIR` as an absolute path, or a `UserError`; nothing is written yet."""
    if record is None:
        return None
    path = record.expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise UserError(f"--record {record}: exists and is not a folder (the record is a folder)")
    return path


def make_workdir(keep: Path | None) -> Workdir:
    """The checked `--keep` folder, an earlier demo's files in it replaced; else a new
    temporary folder."""
    if keep is None:
        return Workdir(Path(tempfile.mkdtemp(prefix="ourobot-demo-")), kept=False)
    keep.mkdir(parents=True, exist_ok=True)
    for name in DEMO_ENTRIES:
        entry = keep / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        elif entry.exists() or entry.is_symlink():
            entry.unlink()
    (keep / MARKER).write_text("a folder `ourobot demo --keep` wrote; the next one replaces it\n")
    return Workdir(keep, kept=True)
