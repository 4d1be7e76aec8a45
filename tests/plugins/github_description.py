"""GitHub's own OpenAPI description, as the suite checks the sandbox against it.

It comes from the npm package `@octokit/openapi` (`generated/api.github.com.json`, GitHub's
description with its webhook schemas), at a pinned version whose tarball must match a pinned
SHA-256. It is fetched once with npm, the registry's own client, and kept in the user's cache
directory (`$XDG_CACHE_HOME/ourobot/`, else `~/.cache/ourobot/`): it survives between runs,
is never in git, and a clone without npm or without network gets `Unavailable` with one line.

The description is written for 2022-11-28 and carries each later version's changes as
`x-github-breaking-changes` entries (a JSON Merge Patch, or a JSON Patch list, per changeset
and version) on the operations and schemas they change; `for_version` applies them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import json_merge_patch
import jsonpatch

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
TARBALL_SHA256 = "71a18407dd5e8464f4e0525daf03deabbe65abd9287d6adc7b5d98f516cd0d0c"
MEMBER = "package/generated/api.github.com.json"
FETCH_TIMEOUT_S = 180
BREAKING = "x-github-breaking-changes"


class Unavailable(Exception):
    """Why the description cannot be had here; one line."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ourobot" / f"octokit-openapi-{VERSION}"


def description_path() -> Path:
    """The cached description, fetched and checked first if it is not there yet."""
    target = cache_dir() / "api.github.com.json"
    if target.is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"npm is not installed, so {PACKAGE}@{VERSION} cannot be fetched")
    with tempfile.TemporaryDirectory(prefix="octokit-openapi-") as tmp:
        tarball = _pack(npm, Path(tmp))
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if digest != TARBALL_SHA256:
            raise Unavailable(f"{tarball.name} has SHA-256 {digest}, not the pinned one")
        target.parent.mkdir(parents=True, exist_ok=True)
        # Whole or not at all, for a killed run or a second process fetching at the same time.
        partial = target.with_name(f".{target.name}.{os.getpid()}.part")
        partial.write_bytes(_member(tarball))
        partial.replace(target)
    return target


def _pack(npm: str, into: Path) -> Path:
    argv = [npm, "pack", "--silent", "--pack-destination", str(into), f"{PACKAGE}@{VERSION}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S,
                              check=False, cwd=into)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm could not fetch {PACKAGE}@{VERSION} in time") from None
    found = sorted(into.glob("*.tgz"))
    if done.returncode != 0 or not found:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"npm could not fetch {PACKAGE}@{VERSION}: {last}")
    return found[0]


def _member(tarball: Path) -> bytes:
    with tarfile.open(tarball, "r:gz") as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            raise Unavailable(f"{tarball.name} has no {MEMBER}")
        return member.read()


def load(version: str) -> dict[str, Any]:
    """The description as `version` answers: every breaking change up to it applied."""
    document: dict[str, Any] = json.loads(description_path().read_bytes())
    _apply(document, version)
    _nullable_as_written(document)
    return document


def _apply(node: Any, version: str) -> None:
    if isinstance(node, list):
        for item in node:
            _apply(item, version)
        return
    if not isinstance(node, dict):
        return
    for change in node.pop(BREAKING, []):
        if change["version"] <= version:
            _patch(node, change["patch"])
    for value in node.values():
        _apply(value, version)


def _patch(node: dict[str, Any], patch: Any) -> None:
    if isinstance(patch, list):
        result = jsonpatch.apply_patch(node, patch)
    else:
        result = json_merge_patch.merge(node, patch)
    if result is not node:  # either library may answer with a new object or the same one
        node.clear()
        node.update(result)


def _nullable_as_written(node: Any) -> None:
    """GitHub writes `nullable: true` to mean "or null" on any schema, also beside `enum`
    (without listing null) and beside `oneOf`/`allOf` (without a `type`); OpenAPI 3.0.3, which
    the validator follows to the letter, gives it that meaning only next to a `type`. Say it
    the way both read alike: null joins the enum, or the schema becomes "null, or it"."""
    if isinstance(node, list):
        for item in node:
            _nullable_as_written(item)
        return
    if not isinstance(node, dict):
        return
    for value in node.values():
        _nullable_as_written(value)
    if node.get("nullable") is not True:
        return
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    elif "type" in node or "enum" in node:
        return
    elif "anyOf" in node or "oneOf" in node:
        key = "anyOf" if "anyOf" in node else "oneOf"
        node[key] = [{"enum": [None]}, *node[key]]
    else:
        rest = {k: v for k, v in node.items() if k != "nullable"}
        node.clear()
        node["anyOf"] = [{"enum": [None]}, rest]
