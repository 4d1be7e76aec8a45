"""JavaScript test runners told to leave tests out: the configuration or the command line of
Jest, Vitest or Mocha narrowing which files or tests run.

Read as narrowing, each with what it narrows by (an "item"):
- Jest (`jest.config.*`, the `"jest"` key of a package.json): `testPathIgnorePatterns`,
  `modulePathIgnorePatterns`, `testNamePattern`, `testMatch`, `testRegex`, `roots`;
- Vitest (`vitest.config.*`, `vite.config.*`, `vitest.workspace.*`): `exclude`, `include` and
  `testNamePattern` directly under `test` (a `coverage.exclude` leaves no test out);
- Mocha (`.mocharc.*`, the `"mocha"` key of a package.json): `ignore`, `exclude`, `spec`,
  `grep`, `fgrep`, `invert`;
- AVA (`ava.config.*`, the `"ava"` key of a package.json): `match`, and `files`, which with
  both trees is judged by the test files it runs (`runners.ava_files`);
- a command that runs one of them (a package.json script, a Makefile, a shell script) with
  `--testPathIgnorePatterns`, `--testPathPattern`, `-t`/`--testNamePattern`,
  `--onlyChanged`, `--changedSince`, `--findRelatedTests`, `--exclude`, `--ignore`,
  `--grep`, `--fgrep`, `--invert`, `--spec`, AVA's `--match`/`-m`.

The setting a value belongs to is read from the whole file when the trees are at hand (a
pattern on its own line of a multi-line list, a list bound to a name the setting is given),
else from the line. Judged as a change: an item the change adds narrows only when no line the
change removes, in any of these files, had it (a setting moved from package.json to
jest.config.js, a script reworded), and it is not the runner's own default
(`/node_modules/`). A setting that selects what runs (`spec`, `testMatch`, `roots`,
`include`) whose values at the head include all it had at the base (or the runner's default)
only adds. Not read: a tsconfig.json's `exclude`, a coverage setting, a timeout; positional
file arguments of a command; a setting given through another file (a preset, a spread).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from itertools import pairwise

from app.guards.changes import FileChange, Line
from app.guards.tamper.runners.ava_files import ava_leaves_out
from app.guards.trees import Side, TreeView

_JEST_KEYS = frozenset(
    {
        "testPathIgnorePatterns",
        "modulePathIgnorePatterns",
        "testNamePattern",
        "testMatch",
        "testRegex",
        "roots",
    }
)
_VITEST_KEYS = frozenset({"exclude", "include", "testNamePattern"})
_MOCHA_KEYS = frozenset({"ignore", "exclude", "spec", "grep", "fgrep", "invert"})
_AVA_KEYS = frozenset({"files", "match"})
# What a runner leaves out by itself: stating it leaves nothing more out.
_DEFAULTS = frozenset(
    {
        ("jest", "testPathIgnorePatterns", "/node_modules/"),
        ("jest", "testPathIgnorePatterns", "<rootDir>/node_modules/"),
        ("vitest", "exclude", "**/node_modules/**"),
        ("vitest", "exclude", "**/dist/**"),
        ("vitest", "exclude", "...configDefaults.exclude"),
        ("vitest", "exclude", "...defaultExclude"),
        ("mocha", "ignore", "node_modules"),
    }
)
# Settings that select what runs, each with what runs when it is not set (each entry a set of
# spellings of one selector): Mocha's `./test/*.{js,cjs,mjs}`, Jest's `testMatch`, Vitest's
# `include`. `testRegex` replaces Jest's `testMatch`, so nothing set stands for it.
_SELECTORS: dict[str, list[set[str]]] = {
    "spec": [{"test", "test/*.{js,cjs,mjs}"}],
    "testMatch": [{"**/__tests__/**/*.[jt]s?(x)"}, {"**/?(*.)+(spec|test).[jt]s?(x)"}],
    "roots": [{"<rootDir>"}],
    "include": [{"**/*.{test,spec}.?(c|m)[jt]s?(x)"}],
    "testRegex": [set()],
}
_JEST_FILE = re.compile(r"^jest\.config\.(?:[cm]?[jt]s|json)$")
_VITEST_FILE = re.compile(r"^(?:vitest|vite)\.config\.[cm]?[jt]s$|^vitest\.workspace\.")
_MOCHA_FILE = re.compile(r"^\.mocharc(?:\.(?:[cm]?js|jsonc?|ya?ml))?$")
_AVA_FILE = re.compile(r"^ava\.config\.[cm]?js$")
_SCRIPT_FILE = re.compile(
    r"^(?:Makefile|GNUmakefile|makefile|justfile|Justfile)$|\.(?:mk|sh|bash)$"
)
# A runner's name where a command starts it (`jest`, `npx vitest run`, `node_modules/.bin/mocha`).
_RUNNER = re.compile(r"(?<![\w@.\-])(?P<runner>jest|vitest|mocha|ava)(?![\w\-])")
_SEPARATOR = re.compile(r"&&|\|\||[;|]")
# Command-line options that leave tests out, by runner, named as the setting they stand for.
_OPTIONS = {
    "jest": {
        "--testPathIgnorePatterns": "testPathIgnorePatterns",
        "--modulePathIgnorePatterns": "modulePathIgnorePatterns",
        "--testPathPattern": "testPathPattern",
        "--testPathPatterns": "testPathPattern",
        "-t": "testNamePattern",
        "--testNamePattern": "testNamePattern",
        "--onlyChanged": "onlyChanged",
        "-o": "onlyChanged",
        "--changedSince": "changedSince",
        "--findRelatedTests": "findRelatedTests",
        "--lastCommit": "lastCommit",
        "--testMatch": "testMatch",
        "--testRegex": "testRegex",
        "--roots": "roots",
    },
    "vitest": {
        "--exclude": "exclude",
        "-t": "testNamePattern",
        "--testNamePattern": "testNamePattern",
        "--changed": "changed",
        "--related": "related",
    },
    "mocha": {
        "--ignore": "ignore",
        "--exclude": "ignore",
        "--grep": "grep",
        "-g": "grep",
        "--fgrep": "fgrep",
        "-f": "fgrep",
        "--invert": "invert",
        "-i": "invert",
        "--spec": "spec",
    },
    "ava": {"--match": "match", "-m": "match"},
}
# Options that take no value.
_FLAGS = frozenset({"--onlyChanged", "-o", "--lastCommit", "--changed", "--invert", "-i"})
_KEY = re.compile(r"""(?P<q>['"]?)(?P<key>[A-Za-z_$][\w$]*)(?P=q)\s*:(?!:)""")
_STRING = re.compile(r"""'((?:\\.|[^'\\])*)'|"((?:\\.|[^"\\])*)"|`((?:\\.|[^`\\])*)`""")
# A name bound to a value the configuration may give a setting: `const ignored = [`.
_DECLARED = re.compile(r"(?:const|let|var)\s+(?P<name>[A-Za-z_$][\w$]*)\s*=(?!=)")
# A value that is not a string: a name, a number, `true`, a regular expression literal, a spread.
_BARE = re.compile(r"[^\s,;:\[\]{}()'\"`]+")
_YAML_KEY = re.compile(r"^(?P<lead>\s*)(?:-\s+)?(?P<key>[\w.\-]+)\s*:(?:\s|$)")

Item = tuple[str, str, str]  # runner, setting, value


@dataclass(frozen=True)
class _Kind:
    """Which runner a configuration file configures, and the keys that narrow it."""

    runner: str | None  # None: package.json, which may configure Jest and Mocha
    yaml: bool = False


def runner_narrowing(
    files: Sequence[FileChange], trees: TreeView | None
) -> list[tuple[str, int, str]]:
    """(path, line, message) for each added line of a runner's configuration or command that
    narrows by an item no removed line had."""
    before: Counter[Item] = Counter()
    for change in files:
        if change.old_path is not None and _kind(change.old_path) is not None:
            for _, items in _items(change.removed, change.old_path, trees, "base"):
                before.update(items)
    # AVA's `files` are judged by the test files they run, read once if any is set.
    ava_out = cache(partial(ava_leaves_out, trees))
    found: list[tuple[str, int, str]] = []
    for change in files:
        path = change.new_path
        if path is None or _kind(path) is None:
            continue
        widened = _widened(change, trees)
        for line, items in _items(change.added, path, trees, "head"):
            new = []
            for item in items:
                if item in _DEFAULTS or item[:2] in widened:
                    continue
                if item[:2] == ("ava", "files") and not ava_out():
                    continue  # judged by the files it runs, with both trees
                if before[item] > 0:
                    before[item] -= 1
                else:
                    new.append(item)
            if new:
                runner, setting, _ = new[0]
                found.append((path, line.number, f"test collection narrowed ({runner} {setting})"))
    return found


def _kind(path: str) -> _Kind | None:
    name = posixpath.basename(path)
    if name == "package.json":
        return _Kind(None)
    if _JEST_FILE.match(name):
        return _Kind("jest")
    if _VITEST_FILE.match(name):
        return _Kind("vitest")
    if _MOCHA_FILE.match(name):
        return _Kind("mocha", yaml=name.endswith((".yml", ".yaml")))
    if _AVA_FILE.match(name):
        return _Kind("ava")
    if _SCRIPT_FILE.search(name):
        return _Kind("script")
    return None


def _widened(change: FileChange, trees: TreeView | None) -> set[tuple[str, str]]:
    """The settings that select what runs (`spec`, `testMatch`, `roots`, `include`) whose
    values in the file at the head include every one it had at the base (or the runner's
    default, where the base did not set it): adding a folder to `spec` runs more, not less.
    Read from the whole file on both sides; none without the trees."""
    path = change.new_path
    if trees is None or path is None:
        return set()
    after = _values(trees, "head", path)
    before = _values(trees, "base", change.old_path) if change.old_path else {}
    widened: set[tuple[str, str]] = set()
    for setting, values in after.items():
        if setting[1] not in _SELECTORS:
            continue
        had = [{value} for value in before.get(setting, ())] or _SELECTORS[setting[1]]
        if all(aliases & values for aliases in had):
            widened.add(setting)
    return widened


def _values(trees: TreeView, side: Side, path: str) -> dict[tuple[str, str], set[str]]:
    """Every value the file gives each narrowing setting, its selectors' values normalised
    (`./test/` is `test`)."""
    text = trees.text(side, path)
    if text is None:
        return {}
    numbered = [Line(n, t, n) for n, t in enumerate(text.split("\n"), 1)]
    values: dict[tuple[str, str], set[str]] = {}
    for _, items in _items(numbered, path, trees, side):
        for runner, setting, value in items:
            values.setdefault((runner, setting), set()).add(_normal(value))
    return values


def _normal(value: str) -> str:
    return value.removeprefix("./").rstrip("/") or value


def _items(
    lines: Sequence[Line], path: str, trees: TreeView | None, side: Side
) -> Iterator[tuple[Line, list[Item]]]:
    """Each changed line with the items it narrows by: a setting's values, a command's
    options. A value's keys are read from the whole file when the trees are at hand (a pattern
    on its own line of a multi-line list, a list bound to a name the setting is given), else
    from its line alone."""
    kind = _kind(path)
    if kind is None or not lines:
        return
    text = trees.text(side, path) if trees is not None else None
    whole = text.split("\n") if text is not None else None
    values: dict[int, list[Item]] = {}
    if whole is not None and kind.runner != "script":
        for index, item in _settings(kind, list(_values_in(whole, yaml=kind.yaml))):
            values.setdefault(index, []).append(item)
    for line in lines:
        index = line.number - 1
        if whole is not None and 0 <= index < len(whole) and whole[index] == line.text:
            found = values.get(index, [])
        else:
            found = [
                item for _, item in _settings(kind, list(_values_in([line.text], yaml=kind.yaml)))
            ]
        items = _commands(line.text) + (found if kind.runner != "script" else [])
        if items:
            yield line, items


def _settings(
    kind: _Kind, values: Sequence[tuple[int, list[str], str]]
) -> Iterator[tuple[int, Item]]:
    """The items the values of a file give its narrowing settings, with their lines. A
    setting given a name (`testPathIgnorePatterns: ignored`) is also given every value of
    the list bound to that name (`const ignored = [...]`)."""
    aliases: dict[str, tuple[str, str]] = {}
    for _, keys, value in values:
        setting = _setting(kind, keys)
        if setting is not None and re.fullmatch(r"[A-Za-z_$][\w$]*", value):
            aliases[value] = setting
    for index, keys, value in values:
        named = [key for key in keys if key]
        setting = _setting(kind, keys)
        if setting is None and named and named[0][1:] in aliases and named[0][0] == "=":
            setting = aliases[named[0][1:]]
        if setting is None:
            continue
        runner, key = setting
        if key != "invert":
            yield index, (runner, key, value)
        elif value == "true":
            yield index, (runner, key, "")


def _setting(kind: _Kind, keys: list[str]) -> tuple[str, str] | None:
    named = [k for k in keys if k]
    if kind.runner == "jest":
        hit = next((k for k in named if k in _JEST_KEYS), None)
        return ("jest", hit) if hit else None
    if kind.runner == "vitest":
        for outer, inner in pairwise(named):
            if outer == "test" and inner in _VITEST_KEYS:
                return "vitest", inner
        return None
    if kind.runner in ("mocha", "ava"):
        known = _MOCHA_KEYS if kind.runner == "mocha" else _AVA_KEYS
        hit = named[0] if named and named[0] in known else None
        return (kind.runner, hit) if hit else None
    # package.json: under its "jest", "mocha" or "ava" key.
    for position, key in enumerate(named[:-1]):
        if key == "jest" and named[position + 1] in _JEST_KEYS:
            return "jest", named[position + 1]
        if key == "mocha" and named[position + 1] in _MOCHA_KEYS:
            return "mocha", named[position + 1]
        if key == "ava" and named[position + 1] in _AVA_KEYS:
            return "ava", named[position + 1]
    return None


def _commands(text: str) -> list[Item]:
    """The narrowing options of each runner command on a line: `jest -t "name"`, `mocha
    --grep slow --invert`; the options after the runner's name, up to the next command."""
    items: list[Item] = []
    for match in _RUNNER.finditer(text):
        runner = match["runner"]
        command = _SEPARATOR.split(text[match.end() :], maxsplit=1)[0]
        words = _words(command)
        options = _OPTIONS[runner]
        for position, word in enumerate(words):
            option, _, value = word.partition("=")
            if option not in options:
                continue
            if not value and option not in _FLAGS and position + 1 < len(words):
                value = words[position + 1]
            items.append((runner, options[option], value))
    return items


def _words(command: str) -> list[str]:
    """A command's words, quotes dropped (a JSON script's `\\"` included)."""
    plain = command.replace('\\"', '"').rstrip().rstrip(",").rstrip('"')
    try:
        return shlex.split(plain)
    except ValueError:
        return plain.replace('"', " ").replace("'", " ").split()


def _values_in(lines: Sequence[str], *, yaml: bool) -> Iterator[tuple[int, list[str], str]]:
    return _yaml_values(lines) if yaml else _script_values(lines)


def _script_values(lines: Sequence[str]) -> Iterator[tuple[int, list[str], str]]:
    """Each value of a JavaScript or JSON file (a string, or a bare word: a name, a regular
    expression literal, a spread) with its line and the keys it sits under, outermost first.
    Comments are skipped; a bracket not opened by a key sits under no key."""
    stack: list[str] = []
    pending = ""
    comment = False
    for index, line in enumerate(lines):
        position = 0
        while position < len(line):
            if comment:
                end = line.find("*/", position)
                if end < 0:
                    break
                comment, position = False, end + 2
                continue
            if line.startswith("/*", position):
                comment, position = True, position + 2
                continue
            if line.startswith("//", position):
                break
            key = _KEY.match(line, position)
            if key is not None:
                pending, position = key["key"], key.end()
                continue
            declared = _DECLARED.match(line, position)
            if declared is not None:
                pending, position = "=" + declared["name"], declared.end()
                continue
            token = _STRING.match(line, position) or _BARE.match(line, position)
            if token is not None:
                value = next((g for g in token.groups() if g is not None), token.group())
                yield index, [*stack, pending], value
                position = token.end()
                continue
            char = line[position]
            if char in "[{(":
                stack.append(pending)
                pending = ""
            elif char in "]})" and stack:
                stack.pop()
            elif char in ",;":
                pending = ""
            position += 1


def _yaml_values(lines: Sequence[str]) -> Iterator[tuple[int, list[str], str]]:
    """Each value of a YAML file (`key: value`, `- value`, `key: [a, b]`) with its line and
    the keys it sits under, by indentation (a list item may sit at its key's own)."""
    stack: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        stripped = line.split(" #")[0].strip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(line.lstrip())
        item = stripped.startswith("-")
        while stack and (stack[-1][0] > depth or (stack[-1][0] == depth and not item)):
            stack.pop()
        match = _YAML_KEY.match(line)
        value = stripped.lstrip("-").strip()
        keys = [key for _, key in stack]
        if match is not None and not item:
            stack.append((depth, match["key"]))
            keys.append(match["key"])
            value = line[match.end() :].split(" #")[0].strip()
        for part in value.strip("[]").split(",") if value.startswith("[") else [value]:
            if part.strip():
                yield index, keys, part.strip().strip("'\"")
