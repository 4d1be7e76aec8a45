"""A JavaScript test suite moved to TypeScript as a whole (every `test/*.js` renamed
`test/*.ts`).

A test file renamed from `.js` to `.ts` may leave the runner's reach: a runner set up for
JavaScript alone does not run `.ts` files. Such a rename is reported as a test file moved
out of the test paths, unless, read with both trees:

- no file a runner would collect as JavaScript tests (`test_files.collects_tests`)
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

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from app.guards.tamper.runners.globs import globbed
from app.guards.tamper.runners.package_json import manifest, section, strings
from app.guards.tamper.test_files import collects_tests
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

    @cache
    def settings() -> dict[str, Any] | None:
        # The head's package.json, when no JavaScript test file is left and no runner is
        # configured where we do not read.
        if trees is None:
            return None
        listing = trees.listing("head", ".")
        if any(_OWN_CONFIG.search(p) for p in listing if "/" not in p):
            return None
        if any(_JAVASCRIPT.search(p) and collects_tests(p) for p in listing):
            return None
        return manifest(trees, "head")

    def reaches(path: str) -> bool:
        found = settings()
        readers = (_ava_reads, _jest_reads, _mocha_reads, _vitest)
        return found is not None and any(reads(found, path) for reads in readers)

    return reaches


def _ava_reads(package: dict[str, Any], path: str) -> bool:
    return _extension_reads(section(package, "ava"), "extensions", "files", path)


def _jest_reads(package: dict[str, Any], path: str) -> bool:
    jest = section(package, "jest")
    if {"testMatch", "testRegex", "roots"} & jest.keys():
        return False
    preset = jest.get("preset") == "ts-jest"
    transform = any("ts" in key for key in strings(jest.get("transform")))
    return preset or transform


def _mocha_reads(package: dict[str, Any], path: str) -> bool:
    return _extension_reads(section(package, "mocha"), "extension", "spec", path)


def _extension_reads(runner: dict[str, Any], extensions: str, files: str, path: str) -> bool:
    """A runner given a TypeScript extension (AVA's `extensions`, Mocha's `extension`) whose
    file globs, when set, take `path` in."""
    if not _TS_EXTENSIONS & set(strings(runner.get(extensions))):
        return False
    return files not in runner or globbed(strings(runner[files]), path)


def _vitest(package: dict[str, Any], path: str) -> bool:
    test = section(package, "scripts").get("test")
    return isinstance(test, str) and re.search(r"(?<![\w-])vitest(?![\w-])", test) is not None
