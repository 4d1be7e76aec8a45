"""The test infrastructure: the files that configure or drive the test run, and the changes to
them that can switch tests off without touching a test.

One definition, shared by the guards (`test-tamper`, key `guards.test_infrastructure`) and the
implementer's harness (`app.loop.landing`, which refuses any change to the surface unless the
ticket allows it). The surface is gitignore-style patterns (`DEFAULT_TEST_INFRASTRUCTURE`,
replaced or extended by `guards.test_infrastructure_paths` / `extra_test_infrastructure_paths`)
plus what only the repository tells: the `__init__.py` of a test package, and the scripts and
make targets its `test_command` runs.

The guard does not report every edit of these files (a conftest gaining a fixture or a marker
is ordinary work): it reports the changed lines that can decide whether tests run or whether a
failure counts, by what they do, per kind of file: skips and xfails, pytest hooks that run or
select tests, patched test runners, options set from code, a shell that stops failing on error
(`set -e` removed, `|| true`, `.IGNORE`, `MAKEFLAGS += -i`), exit codes accepted (`nox`
`success_codes`, tox's `ignore_outcome`), `--passWithNoTests`, a replaced `expect`, RSpec and
cargo selections.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pathspec

from app.guards.changes import ChangeSet, FileChange, Line
from app.guards.runner_sections import FILES, managers_run, runner_change
from app.repo_config import DEFAULT_TEST_INFRASTRUCTURE

_MAKEFILES = frozenset({"makefile", "gnumakefile", "justfile"})
_TEST_DIR = re.compile(r"(^|/)(tests?|testing|spec|__tests__)(/|$)")

Kind = str  # python, python-package, shell, ini, js, package, rspec, ruby, cargo, any


@dataclass(frozen=True)
class Construct:
    """One kind of change that decides whether tests run: what it is, and how it reads."""

    what: str
    pattern: re.Pattern[str]
    removed: bool = False  # found on a removed line (a safety taken away), not an added one


def _c(what: str, pattern: str, *, removed: bool = False, flags: int = 0) -> Construct:
    return Construct(what, re.compile(pattern, flags), removed)


# What the rest of test-tamper already reads with more care (skips in fixtures and helpers,
# `collect_ignore`, `pytestmark`, `__test__`, collection hooks and ini settings that narrow the
# selection, exits, runner configs that leave tests out, test commands made to pass) is left
# to it; these are the constructs it does not read.
_MODULE_SKIPS = _c(
    "a skip or an xfail of every test below",
    r"\b(skip|skipif|xfail|importorskip|SkipTest|allow_module_level|pytestmark)\b",
)
_SHELL = (
    _c("errors no longer stop the script (`set -e` removed)",
       r"^\s*set\s+-[a-zA-Z]*e|^\s*set\s+-o\s+errexit|\bpipefail\b", removed=True),
    _c("errors no longer stop the script (`set +e`)", r"^\s*set\s+\+[a-zA-Z]*e"),
    _c("a failure turned into success", r"\|\|\s*(true|:|exit\s+0)\b|;\s*(true|exit\s+0)\s*$"),
    _c("a line that always succeeds", r"^\s*(true|:|exit\s+0)\s*$"),
    _c("make ignores errors (`.IGNORE`)", r"^\s*\.IGNORE\s*:"),
    _c("make ignores errors (`-i`)",
       r"MAKEFLAGS\s*[+:?]?=.*(\s|^)(-[a-zA-Z]*i\b|--ignore-errors)"
       r"|\bmake\b.*\s(-[a-zA-Z]*i\b|--ignore-errors)"),
    _c("a recipe line whose failure make ignores (`-` prefix)", r"^\t-\S"),
)  # fmt: skip
_PYTHON = (
    _c("an xfail or a marker added to tests as they run",
       r"\bxfail\b|\.add_marker\(|\bapplymarker\("),
    _c("a pytest hook that runs or reports tests",
       r"def\s+pytest_(runtestloop|runtest_\w+|cmdline_\w+|load_initial_conftests"
       r"|collect_file|pycollect_\w+|make_collect_report|pyfunc_call|itemcollected|deselected"
       r"|sessionfinish|report_teststatus|terminal_summary|unconfigure|assertrepr_compare"
       r"|exception_interact)\b"),
    _c("options set from code", r"\bconfig\.(option|known_args_namespace|args|inicfg)\b"
       r"|\b(PYTEST_ADDOPTS|PYTEST_PLUGINS)\b|\.addinivalue_line\(\s*[\"'](?!markers)"),
    _c("the test runner patched", r"\.(runtest|run|_callTestMethod|runTest|call)\s*=(?!=)"
       r"|setattr\([^)]*[\"'](runtest|run|_callTestMethod|runTest)[\"']"),
    _c("accepted exit codes (`success_codes`)", r"\bsuccess_codes\b"),
    _c("a session skipped", r"\bsession\.skip\b"),
)  # fmt: skip
_PYTHON_PACKAGE = (_MODULE_SKIPS, *_PYTHON)
_INI = (
    _c("accepted exit codes", r"\bsuccess_codes\b"),
    _c("xfail no longer strict", r"\bxfail_strict\s*=\s*(false|0|no)\b", flags=re.IGNORECASE),
)
_JS = (
    _c("tests allowed to be missing (`passWithNoTests`)", r"passWithNoTests"),
    _c("the assertion library replaced", r"(^|[^.\w])(expect|assert|it|test|describe)\s*=(?!=)"
       r"|\bglobal(This)?\s*\.\s*(expect|assert|it|test|describe)\s*=(?!=)"
       r"|\b(expect|it|test|describe)\.\w+\s*=(?!=)"),
)  # fmt: skip
_PACKAGE = (_JS[0],)
_RSPEC = (
    _c(
        "the example selection", r"--(exclude-pattern|pattern|tag|example|dry-run)\b|(^|\s)-(t|e)\s"
    ),
)
_RUBY = (
    _c("examples filtered or skipped", r"\b(filter_run_excluding|filter_run_when_matching"
       r"|exclude_pattern|skip|pending|xit|xdescribe|xcontext|omit)\b"),
    _c("the example runner patched", r"define_method\(\s*:run|alias_method\(\s*:run|def\s+run\b"),
    _c("the process ended early", r"\b(exit!?|abort)\b"),
)  # fmt: skip
_CARGO = (
    _c("cargo's test flags", r"\b(test|nextest|t)\s*=|--skip\b|--ignored\b|--no-run\b|--exact\b"),
)
_CONSTRUCTS: dict[Kind, tuple[Construct, ...]] = {
    "python": _PYTHON,
    "python-package": _PYTHON_PACKAGE,
    "shell": _SHELL,
    "ini": _INI,
    "js": _JS,
    "package": _PACKAGE,
    "rspec": _RSPEC,
    "ruby": _RUBY,
    "cargo": _CARGO,
}
_CONSTRUCTS["any"] = tuple(
    dict.fromkeys(construct for constructs in _CONSTRUCTS.values() for construct in constructs)
)
_JS_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx", ".json", ".yml",
                ".yaml", "")  # fmt: skip


class SurfacePatterns:
    """The surface's gitignore-style patterns, matched case-insensitively on `/` paths."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self._spec = pathspec.GitIgnoreSpec.from_lines([p.casefold() for p in self.patterns])

    def match(self, path: str) -> bool:
        return bool(path) and self._spec.match_file(path.casefold())


def test_command_paths(test_command: str) -> tuple[set[str], bool]:
    """The files `test_command` names (scripts it runs), and whether it runs make or just."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    make = any(word in ("make", "gmake", "just") or word.endswith("/make") for word in words)
    return {word.removeprefix("./") for word in words}, make


def surface_kind(
    path: str, patterns: SurfacePatterns, test_command: str, *, test_dirs: set[str] | None = None
) -> Kind | None:
    """Which kind of test infrastructure `path` is, or None when it is none."""
    name = path.rsplit("/", 1)[-1]
    lower = name.casefold()
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    named, make = test_command_paths(test_command)
    if lower == "__init__.py" and (folder in (test_dirs or set()) or _TEST_DIR.search(folder)):
        return "python-package"
    if path in named:
        return "python" if lower.endswith(".py") else "shell"
    if make and (lower in _MAKEFILES or lower.endswith(".mk")):
        return "shell"
    if not patterns.match(path):
        return None
    return _kind_of_name(lower)


def _kind_of_name(lower: str) -> Kind:
    if lower.endswith((".py", ".pth")):
        return "python"
    if lower in ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"):
        return "ini"
    if lower == ".rspec":
        return "rspec"
    if lower == "package.json":
        return "package"
    if lower.endswith(".rb") or lower == "rakefile":
        return "ruby"
    if lower in ("config", "config.toml"):
        return "cargo"
    if lower in _MAKEFILES or lower.endswith((".mk", ".sh")):
        return "shell"
    if lower.endswith((".ini", ".cfg", ".toml")):
        return "ini"
    if lower.endswith(_JS_SUFFIXES[:-1]) or lower.startswith((".mocharc", "jest", "vitest")):
        return "js"
    return "any"  # a file a configured pattern names: every kind of construct is looked for


@dataclass(frozen=True)
class InfrastructureChange:
    path: str
    line: int | None
    message: str


def infrastructure_changes(
    changes: ChangeSet, patterns: SurfacePatterns, test_command: str
) -> list[InfrastructureChange]:
    """Every change to the test infrastructure that can decide whether tests run or count."""
    found: list[InfrastructureChange] = []
    for change in changes.files:
        path = change.new_path or change.old_path
        if path is None or change.is_symlink:
            continue
        kind = surface_kind(path, patterns, test_command)
        if kind is None:
            continue
        found.extend(_constructs_in(change, path, kind))
    return found


def _constructs_in(change: FileChange, path: str, kind: Kind) -> list[InfrastructureChange]:
    found: list[InfrastructureChange] = []
    seen: set[str] = set()
    added = _code_lines(change.added, kind)
    removed = _code_lines(change.removed, kind)
    added_texts = {text.strip() for _, text in added}
    for construct in _CONSTRUCTS[kind]:
        lines = removed if construct.removed else added
        for line, text in lines:
            if construct.pattern.search(text) is None or construct.what in seen:
                continue
            if construct.removed and text.strip() in added_texts:
                continue  # moved or re-indented, not taken away
            if not construct.removed and _restated(text, change.removed):
                continue  # the same line was there before: moved, not added
            seen.add(construct.what)
            where = "removed from" if construct.removed else "added to"
            anchor = change.removed[0].anchor if construct.removed and change.removed else line
            found.append(
                InfrastructureChange(
                    path,
                    anchor if change.new_path else None,
                    f"changes the test infrastructure: {construct.what}, {where} a file that "
                    "configures or drives the test run; a maintainer accepts it with "
                    "`/ourobot override`",
                )
            )
    return found


def _code_lines(lines: Sequence[Line], kind: Kind) -> list[tuple[int, str]]:
    """The lines that say something: comments and blank lines decide nothing."""
    comment = "//" if kind == "js" else "#"
    out = []
    for line in lines:
        stripped = line.text.strip()
        if not stripped or stripped.startswith((comment, ";")):
            continue
        out.append((line.number, line.text))
    return out


def _restated(text: str, removed: Sequence[Line]) -> bool:
    stripped = text.strip()
    return any(line.text.strip() == stripped for line in removed)


# ---- the harness's reading (app.loop.landing): any change to the surface needs the label ----

_PACKAGE_KEYS = ("scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc")


def surface_reason(
    path: str,
    *,
    test_command: str,
    test_dirs: set[str],
    read: Callable[[str, str], str | None],
    patterns: SurfacePatterns | None = None,
) -> str | None:
    """Why changing `path` changes how the suite runs, or None. `read(rev, path)` gives a file's
    text at "base" or "head" (None when absent); `test_dirs` are directories holding tests.
    A project file shared with other tools (`runner_sections.FILES`) counts only where its
    runner sections changed: a version bump in `[project]` is no change to how the suite runs."""
    surface = patterns or SurfacePatterns(DEFAULT_TEST_INFRASTRUCTURE)
    kind = surface_kind(path, surface, test_command, test_dirs=test_dirs)
    if kind is None:
        return None
    name = path.rsplit("/", 1)[-1]
    lower = name.casefold()
    if lower == "__init__.py":
        return "the __init__.py of a test package runs before its tests"
    named, make = test_command_paths(test_command)
    if path in named or (make and (lower in _MAKEFILES or lower.endswith(".mk"))):
        return "the test command runs it"
    if lower.endswith(".pth"):
        return "a .pth file runs code at every Python start"
    if lower in FILES:
        managers = managers_run(test_command)
        return runner_change(name, read("base", path), read("head", path), managers)
    if lower == "package.json":
        sections = [_package_sections(read(rev, path)) for rev in ("base", "head")]
        if sections[0] != sections[1]:
            return "package.json: its scripts or test runner settings changed"
        return None
    return f"{name} configures the test run"


def _package_sections(text: str | None) -> str:
    if text is None:
        return ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text  # unreadable: any change counts
    if not isinstance(data, dict):
        return text
    return json.dumps({key: data.get(key) for key in _PACKAGE_KEYS}, sort_keys=True)
