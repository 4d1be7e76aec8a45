"""Which test files AVA runs, on each side of a change, as its `package.json` settings say.

AVA's `files` globs select what runs, so a change to them is judged by what it leaves out,
read with both trees: a narrowing only when a file AVA ran at the base (by its `files`, or
its default globs where none is set, with its `extensions`), still there at the head and
holding a test, is no longer run (`"files": ["test/*", "!test/red.js"]`). ky's
`"files": ["test/*"]`, stated when its tests moved to TypeScript, leaves none of its tests
out. Not read, so always taken to leave something out: an `ava.config.*` file at the root
(code, which only running it tells), a `package.json` that does not parse, a change
without the trees.

AVA never runs `node_modules`, a file or folder whose name starts with `_`, nor the
`helper(s)` and `fixture(s)` folders under a test folder (and `__helper(s)__`,
`__fixture(s)__` under `__tests__`), whatever its globs say.
"""

from __future__ import annotations

import posixpath
import re

from app.guards.tamper.definitions import defines_tests
from app.guards.tamper.lang import reader_for
from app.guards.tamper.runners.globs import globbed
from app.guards.tamper.runners.package_json import manifest, strings
from app.guards.trees import Side, TreeView

# AVA's own defaults, `{ext}` standing for its extensions.
_DEFAULT_FILES = (
    "test.{ext}",
    "src/test.{ext}",
    "source/test.{ext}",
    "**/test-*.{ext}",
    "**/*.spec.{ext}",
    "**/*.test.{ext}",
    "**/test/**/*.{ext}",
    "**/tests/**/*.{ext}",
    "**/__tests__/**/*.{ext}",
)
_DEFAULT_EXTENSIONS = ("js", "cjs", "mjs")
_NEVER_RUN = re.compile(
    r"(?:^|/)node_modules/|(?:^|/)_(?!_)"
    r"|(?:^|/)tests?/(?:.*/)?(?:helpers?|fixtures?)/"
    r"|(?:^|/)__tests__/(?:.*/)?__(?:helpers?|fixtures?)__/"
)
_OWN_CONFIG = re.compile(r"^ava\.config\.[cm]?js$")


def ava_leaves_out(trees: TreeView | None) -> bool:
    """Whether AVA, as the head configures it, leaves out a test file it ran at the base."""
    if trees is None:
        return True
    base, head = _settings(trees, "base"), _settings(trees, "head")
    if base is None or head is None:
        return True
    ran = _runs(trees, "base", base)
    runs = set(_runs(trees, "head", head))
    return any(
        path not in runs and trees.text("head", path) is not None and _holds_tests(trees, path)
        for path in ran
    )


def _settings(trees: TreeView, side: Side) -> tuple[list[str], list[str]] | None:
    """AVA's `files` globs and `extensions` on one side (its defaults where unset); None when
    they cannot be read."""
    if any(_OWN_CONFIG.match(path) for path in trees.listing(side, ".") if "/" not in path):
        return None
    settings = manifest(trees, side)
    ava = settings.get("ava", {}) if settings is not None else None
    if not isinstance(ava, dict):
        return None
    extensions = strings(ava.get("extensions")) or list(_DEFAULT_EXTENSIONS)
    ext = "{" + ",".join(extensions) + "}"
    files = strings(ava.get("files")) or [glob.format(ext=ext) for glob in _DEFAULT_FILES]
    return files, extensions


def _runs(trees: TreeView, side: Side, settings: tuple[list[str], list[str]]) -> list[str]:
    files, extensions = settings
    return [
        path
        for path in trees.listing(side, ".")
        if posixpath.splitext(path)[1].lstrip(".") in extensions
        and not _NEVER_RUN.search(path)
        and globbed(files, path)
    ]


def _holds_tests(trees: TreeView, path: str) -> bool:
    return defines_tests(trees.text("base", path) or "", reader_for(path))
