"""Where a repository's prepared environments are kept between cycles, within a disk budget.

An entry is what one run of the setup phase wrote into a checkout (a virtualenv, a
`node_modules`), stored under `<data_dir>/setup-cache/<repository>-<digest>/<key>/files/` at
the paths it had in the checkout, with a `done` marker written last: an entry without it is a
setup that did not finish and is never used. A later cycle whose key is the same (the setup
command and the files it depends on unchanged) reuses it; every use touches the marker, and
when the repository's entries outgrow the budget the least recently used go first (the newest
is kept).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import time
from pathlib import Path

from app.workspace.tree_files import remove_tree, walk_sizes

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
DONE = "done"
OUTPUTS = "outputs.json"
STALE_PARTIAL_S = 6 * 3600


class SetupCache:
    """One repository's entries."""

    def __init__(self, data_dir: Path, repository: str, budget_bytes: int) -> None:
        # Readable, and made unique by a digest of the name: folding alone would give
        # alice_acme/tools and alice/acme_tools one folder, each seeing the other's entries.
        name = repository.lower()
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        self.root = data_dir / "setup-cache" / f"{_SAFE.sub('_', name)[:80] or 'repo'}-{digest}"
        self.budget = budget_bytes

    def lookup(self, key: str) -> list[tuple[Path, str]] | None:
        """What the finished entry for `key` holds (stored file, its path in the project),
        or None."""
        entry = self.root / key
        marker = entry / DONE
        if not marker.is_file():
            return None
        listed = _listed(entry)
        if any(stored.is_symlink() for stored, _ in listed):
            return None  # stored before links were refused: never shown, set up again
        marker.touch()
        return listed

    def store(self, key: str, outputs: dict[str, Path]) -> list[tuple[Path, str]]:
        """Move `outputs` (relative path -> what setup wrote) into a new entry for `key`;
        what it holds, as `lookup` says it."""
        self.root.mkdir(parents=True, exist_ok=True)
        partial = self.root / f".{key}.{secrets.token_hex(4)}"
        files = partial / "files"
        try:
            for relative, source in outputs.items():
                target = files / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(source), str(target))
            (partial / OUTPUTS).write_text(json.dumps(sorted(outputs)))
            (partial / DONE).write_text(key + "\n")
            final = self.root / key
            remove_tree(final)
            os.replace(partial, final)
        finally:
            remove_tree(partial)
        self.evict(keep=key)
        return _listed(self.root / key)

    def evict(self, *, keep: str) -> list[str]:
        """Remove the least recently used entries until the rest fit the budget; their keys."""
        entries = []
        for entry in self.root.iterdir() if self.root.is_dir() else []:
            marker = entry / DONE
            if entry.name.startswith("."):
                if time.time() - entry.stat().st_mtime > STALE_PARTIAL_S:
                    remove_tree(entry)  # a setup that never finished (not one running now)
            elif marker.is_file():
                entries.append((marker.stat().st_mtime, entry, walk_sizes(entry)[0]))
        total = sum(size for _, _, size in entries)
        removed = []
        for _, entry, size in sorted(entries, key=lambda e: e[0]):
            if total <= self.budget:
                break
            if entry.name == keep:
                continue
            remove_tree(entry)
            total -= size
            removed.append(entry.name)
        return removed


def _listed(entry: Path) -> list[tuple[Path, str]]:
    """(stored path, path in the project) of each output, exactly where setup wrote it."""
    try:
        outputs = json.loads((entry / OUTPUTS).read_text())
    except (OSError, ValueError):
        return []
    return [(entry / "files" / relative, relative) for relative in outputs]
