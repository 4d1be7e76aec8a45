"""A JavaScript test suite moved to TypeScript as a whole (ky's "Move to TypeScript": every
`test/*.js` renamed `test/*.ts`).

A test file renamed from `.js` to `.ts` may leave the runner's reach: a runner set up for
JavaScript alone does not run `.ts` files. Such a rename is reported as a test file moved
out of the test paths, unless, read with both trees:

- no file a runner would collect as JavaScript tests (`app.guards.suite.collects_tests`)
  is left at the head: the whole suite moved, so a runner that cannot read the new files
  finds no test at all, and AVA, Jest, Mocha and Vitest then fail the run;
- and the head's root `package.json` says its runner reads TypeScript: AVA's `extensions`
  naming `ts` (and its `files` globs, when set, taking the file in), Jest's `preset` being
  `ts-jest` or a `transform` for `.ts` (with no `testMatch`, `testRegex` or `roots` of its
  own), Mocha's `extension` naming `ts` (its `spec`, when set, taking the file in), or a
  `test` script that runs Vitest. Node's own runner passes when it finds no test file,
  so without such a declaration the rename is still reported.

A runner configured in a file of its own (`ava.config.js`, `jest.config.ts`) is not read,
and the rename stays reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from app.guards.globs import globbed
from app.guards.suite import collects_tests
from app.guards.trees import TreeView

_JAVASCRIPT = re.compile(r"\.[cm]?jsx?$")
_TYPESCRIPT = re.compile(r"\.[cm]?tsx?$")
_TS_EXTENSIONS = frozenset({"ts", "tsx", "mts", "cts"})
_OWN_CONFIG = re.compile(r"^(?:ava|jest|vitest|vite)\.config\.[cm]?[jt]s$|^\.mocharc\.")


def js_to_ts(old: str, new: str) -> bool:
    return bool(_JAVASCRIPT.search(old) and _TYPESCRIPT.search(new))


def suite_retyped(trees: TreeView | None) -> Callable[[str], bool]:
    """Whether the renamed test file at `path` (a `.js` made `.ts`) moved with its whole
    suite, to a runner the head declares reads TypeScript."""
    head = _HeadSuite(trees)
    return head.reaches


class _HeadSuite:
    def __init__(self, trees: TreeView | None) -> None:
        self._trees = trees
        self._read = False
        self._manifest: dict[str, Any] | None = None
        self._javascript_left = True

    def reaches(self, path: str) -> bool:
        if not self._read:
            self._load()
        manifest = self._manifest
        if manifest is None or self._javascript_left:
            return False
        return any(
            reads(manifest, path) for reads in (_ava_reads, _jest_reads, _mocha_reads, _vitest)
        )

    def _load(self) -> None:
        self._read = True
        if self._trees is None:
            return
        listing = self._trees.listing("head", ".")
        if any(_OWN_CONFIG.search(p) for p in listing if "/" not in p):
            return  # a runner configured where we do not read
        self._javascript_left = any(_JAVASCRIPT.search(p) and collects_tests(p) for p in listing)
        try:
            manifest = json.loads(self._trees.text("head", "package.json") or "")
        except ValueError:
            return
        self._manifest = manifest if isinstance(manifest, dict) else None


def _section(manifest: dict[str, Any], key: str) -> dict[str, Any]:
    section = manifest.get(key)
    return section if isinstance(section, dict) else {}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [k for k in value if isinstance(k, str)]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _ava_reads(manifest: dict[str, Any], path: str) -> bool:
    return _extension_reads(_section(manifest, "ava"), "extensions", "files", path)


def _jest_reads(manifest: dict[str, Any], path: str) -> bool:
    jest = _section(manifest, "jest")
    if {"testMatch", "testRegex", "roots"} & jest.keys():
        return False
    preset = jest.get("preset") == "ts-jest"
    transform = any("ts" in key for key in _strings(jest.get("transform")))
    return preset or transform


def _mocha_reads(manifest: dict[str, Any], path: str) -> bool:
    return _extension_reads(_section(manifest, "mocha"), "extension", "spec", path)


def _extension_reads(section: dict[str, Any], extensions: str, files: str, path: str) -> bool:
    """A runner given a TypeScript extension (AVA's `extensions`, Mocha's `extension`) whose
    file globs, when set, take `path` in."""
    if not _TS_EXTENSIONS & set(_strings(section.get(extensions))):
        return False
    return files not in section or globbed(_strings(section[files]), path)


def _vitest(manifest: dict[str, Any], path: str) -> bool:
    test = _section(manifest, "scripts").get("test")
    return isinstance(test, str) and re.search(r"(?<![\w-])vitest(?![\w-])", test) is not None
