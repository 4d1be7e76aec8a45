"""Commands that run the suite, changed so the run passes whatever the tests say: no test is
removed or skipped, the command that would report them is told to ignore them.

Read on the lines a change adds to the files that say how the suite is run: a package.json, a
Makefile (`*.mk`, a justfile), a shell script, tox.ini, a noxfile. A line counts when it runs
a test runner (pytest, `python -m unittest`, Jest, Vitest, Mocha, AVA, tap, `node --test`,
`go test`, RSpec, `rake test`, `npm test` and its kin, tox, nox) and no line the change
removes was the same (a command restated or moved passes):

- **its failure swallowed**: `|| true`, `|| exit 0`, `|| :`, `|| echo ...`, `; true`,
  `; exit 0` after it; a Makefile or justfile recipe line that starts with `-` (make ignores
  its exit status); tox's `- pytest` (the same), or an added `ignore_outcome = true` or
  `ignore_errors = true`; `set +e` added to a script that runs a runner;
- **narrowed by the runner's own options**: `go test -run <pattern>` or `-skip <pattern>`
  (not a benchmark run's `-run=- -bench=.`, nor a selection a removed line already made),
  `node --test` with `--test-name-pattern`, `--test-skip-pattern` or `--test-only` (Jest's,
  Vitest's, Mocha's and AVA's are read in `runners.runner_config`, pytest's in
  `rule`);
- **replaced by nothing**: a package.json `test` script that ran something and now only
  echoes, exits 0 or runs `true` (`"test": "echo ok"`).

Not read: a runner started through a variable (`$(PYTEST)`), a script's own wrapper around the
runner, a Makefile target renamed away from the CI's call: the protected workflows say what CI
runs, and those stay protected.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence

from app.guards.changes import FileChange, Line
from app.guards.trees import TreeView

_RUNNER = re.compile(
    r"(?<![\w@./-])(?:py\.test|pytest|jest|vitest|mocha|ava|tap|rspec|tox|nox)(?![\w-])"
    r"|\bpython[\d.]*\s+-m\s+(?:pytest|unittest)\b|\bnode\s+(?:[^|;&]*\s)?--test\b"
    r"|\bgo\s+test\b|\brake\s+(?:test|spec)\b"
    r"|\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b"
    r"|\bsession\.run\s*\(\s*['\"](?:pytest|python)\b"
)
_SWALLOWED = re.compile(r"\|\|\s*(?:true|:|exit\s+0|echo\b)|;\s*(?:true|exit\s+0)\s*(?:['\"]|$)")
_IGNORED_RECIPE = re.compile(r"^\s+[@+]*-")
_RECIPE_PREFIX = re.compile(r"^\s+[@+-]+")
_TOX_IGNORED = re.compile(r"^\s*(?:commands\s*=\s*)?-\s+\S")
_TOX_OUTCOME = re.compile(r"^\s*(?:ignore_outcome|ignore_errors)\s*=\s*(?:true|1|yes)\b", re.I)
_SET_E_OFF = re.compile(r"^\s*set\s+\+e\b|^\s*set\s+\+o\s+errexit\b")
_GO_TEST = re.compile(r"\bgo\s+test\b")
# `-run Pattern`, `-skip=Pattern`, `--run "A|B"`: the option with its value.
_GO_SELECT = re.compile(r"\s-(?:-)?(?P<o>run|skip)(?:=|\s+)(?P<v>\"[^\"]*\"|'[^']*'|\S+)")
_GO_BENCH = re.compile(r"\s-(?:-)?bench(?:=|\s)")
_NODE_NARROW = re.compile(
    r"\bnode\s+(?:[^|;&]*\s)?--test\b.*--test-(?:name-pattern|skip-pattern|only)\b"
    r"|\bnode\s+(?:[^|;&]*\s)?--test-(?:name-pattern|skip-pattern|only)\b.*--test\b"
)
_MAKEFILES = re.compile(r"^(?:Makefile|GNUmakefile|makefile|justfile|Justfile)$|\.mk$")
_SCRIPTS = re.compile(r"\.(?:sh|bash)$")
_NO_OP = re.compile(r"^\s*(?:echo\b[^;&|]*|printf\b[^;&|]*|true|:|exit\s+0|)\s*$")

SWALLOWED = "test command made to pass whatever the tests say"
NARROWED = "test collection narrowed ({what})"
REPLACED = "test script no longer runs the tests"


def runner_commands(
    files: Sequence[FileChange], trees: TreeView | None
) -> list[tuple[str, int, str]]:
    """(path, line, message) for each command that runs the suite made to pass regardless."""
    removed = {line.text.strip() for change in files for line in change.removed}
    selections = {
        item for change in files for line in change.removed for item in _go_selects(line.text)
    }
    found: list[tuple[str, int, str]] = []
    for change in files:
        path = change.new_path
        if path is None or change.status == "deleted" or not _runs_suite(path):
            continue
        # Whether the script runs a runner matters only to a `set +e` it gains: read then.
        turned_off = any(_SET_E_OFF.match(line.text) for line in change.added)
        runs = turned_off and bool(_SCRIPTS.search(path)) and _script_runs_suite(change, trees)
        for line in change.added:
            if line.text.strip() in removed:
                continue
            message = _judged(line, path, runs, selections)
            if message is not None:
                found.append((path, line.number, message))
        found.extend((path, number, REPLACED) for number in _test_script_emptied(change))
    return found


def _script_runs_suite(change: FileChange, trees: TreeView | None) -> bool:
    """Whether the file runs a test runner anywhere: the whole new file where the repository
    is read, the lines the diff shows otherwise."""
    text = trees.text("head", change.new_path or "") if trees is not None else None
    lines = (
        text.splitlines()
        if text is not None
        else [line.text for line in (*change.added, *change.removed, *change.context)]
    )
    return any(_RUNNER.search(line) for line in lines)


def _runs_suite(path: str) -> bool:
    name = posixpath.basename(path)
    return (
        name in ("package.json", "tox.ini", "noxfile.py")
        or bool(_MAKEFILES.search(name))
        or bool(_SCRIPTS.search(name))
    )


def _go_selects(text: str) -> set[str]:
    """The `-run`/`-skip` selections of a `go test` command that runs tests: not a benchmark
    run (`-run=- -bench=.`), which leaves the tests out on purpose and runs none of them."""
    if not _GO_TEST.search(text) or _GO_BENCH.search(text):
        return set()
    return {f"-{m['o']} {m['v'].strip(chr(34) + chr(39))}" for m in _GO_SELECT.finditer(text)}


def _judged(line: Line, path: str, runs: bool, selections: set[str]) -> str | None:
    text = line.text
    name = posixpath.basename(path)
    if name == "tox.ini" and _TOX_OUTCOME.match(text):
        return SWALLOWED
    if _SCRIPTS.search(name) and _SET_E_OFF.match(text) and runs:
        return SWALLOWED
    # A recipe's own prefixes (`@` silent, `-` errors ignored) are make's, not the command's.
    make = bool(_MAKEFILES.search(name))
    recipe = _RECIPE_PREFIX.sub("", text) if make else text
    runner = _RUNNER.search(recipe)
    if runner is None:
        return None
    if _SWALLOWED.search(recipe[runner.start() :]):
        return SWALLOWED
    if make and _IGNORED_RECIPE.match(text):
        return SWALLOWED
    if name == "tox.ini" and _TOX_IGNORED.match(text):
        return SWALLOWED
    if _go_selects(text) - selections:
        return NARROWED.format(what="go test -run/-skip")
    if _NODE_NARROW.search(text):
        return NARROWED.format(what="node --test")
    return None


def _test_script_emptied(change: FileChange) -> list[int]:
    """The line of a package.json's `test` script that ran something at the base and at the
    head only echoes or exits 0, read from the added and removed lines of that script."""
    if posixpath.basename(change.new_path or "") != "package.json":
        return []
    old = _test_script(change.removed)
    new = _test_script(change.added)
    if old is None or new is None:
        return []
    old_value, _ = old
    new_value, number = new
    if _no_op(old_value) or not _no_op(new_value):
        return []
    return [number]


def _test_script(lines: Sequence[Line]) -> tuple[str, int] | None:
    for line in lines:
        try:
            entry = json.loads("{" + line.text.strip().rstrip(",") + "}")
        except ValueError:
            continue
        value = entry.get("test") if isinstance(entry, dict) else None
        if isinstance(value, str):
            return value, line.number
    return None


def _no_op(command: str) -> bool:
    return all(_NO_OP.match(part) for part in re.split(r"&&|\|\||;", command))
