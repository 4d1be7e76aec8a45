"""Test code that ends the run before the tests, with success: the runner's process exits (or
the session is ended) while it collects or sets up, and no test is reported failed because no
test ran. No marker is added and no test removed, so the other checks see nothing.

Reported, on lines the change adds to test material (`test_files.is_test_path`):

- Python, where it runs when pytest imports the module (outside every function and class;
  under an `if`, a loop, a `try` or a `with` of the top level too, but not under `if __name__
  == "__main__":`): `sys.exit(...)`, `os._exit(...)` (under any name for the module, `import
  os as o`), `exit(...)`, `quit(...)`, `pytest.exit(...)`, `raise SystemExit`;
- Python, anywhere in a `conftest.py` (its hooks and fixtures run for every test): the same
  calls but the bare `exit` and `quit`, which a nested function may name for itself;
- JavaScript and TypeScript, in a file the runner collects: at the top level,
  `process.exit(...)`, `process.reallyExit(...)`, `process.abort()`,
  `process.kill(process.pid...)`; anywhere outside a string, a success exit,
  `process.exit(0)` or `process.exitCode = 0` (`process.on('exit', () => process.exit(0))`
  turns a failed run into a passing one);
- Go, in a `_test.go` file: a `TestMain(m *testing.M)` that never calls `m.Run()` (the
  package's tests then never run, and `go test` passes), or calls `os.Exit(0)` on a line
  before it (`os.Exit(1)` on a failed setup fails the run, as it should), read whole from
  the new file where the repository is read, from the lines a diff shows otherwise; and
  `os.Exit(...)` in a `func init()`, which runs before any test.

Exits inside a test or a helper are not read: a CLI test builds commands that call
`sys.exit(1)`, and Go's helper-process idiom (`os.Exit(0)` in `TestHelperProcess`, run as a
subprocess) is everywhere. Those end one test or a child process, never the run.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from app.guards.changes import FileChange, Line
from app.guards.tamper.lang import go, plain_comment, python, reader_for
from app.guards.tamper.lang.javascript import JAVASCRIPT
from app.guards.tamper.lang.text import indent
from app.guards.tamper.test_files import collects_tests, is_test_path

# A call that ends the interpreter with success, under any module's name for it (`os._exit`,
# `sys.exit`, `pytest.exit`, `o._exit` of `import os as o`, a bare `exit`, `quit`, `_exit`).
_PY_EXIT = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*\.)?(?:_exit|exit|quit)\s*\(|(?<![\w.])raise\s+SystemExit\b"
)
# In a conftest.py, where a nested function may be called `exit`: the module-qualified ones.
_PY_ANY_EXIT = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*\._exit|sys\.exit|pytest\.exit|_exit)\s*\("
    r"|(?<![\w.])raise\s+SystemExit\b"
)
# What a module-level line may be nested in and still run when pytest imports the module.
_PY_RUNS_ON_IMPORT = re.compile(r"^\s*(?:if|elif|else|for|while|try|except|finally|with)\b")
_PY_MAIN_GUARD = re.compile(r"""^\s*if\s+__name__\s*==\s*['"]__main__['"]\s*:""")
_JS_TOP_EXIT = re.compile(
    r"^(?:process\.(?:exit|reallyExit|abort)\s*\(|process\.kill\s*\(\s*process\.pid\b)"
)
_JS_SUCCESS_EXIT = re.compile(
    r"(?<![\w$.])process\.(?:exit|reallyExit)\s*\(\s*0?\s*\)|(?<![\w$.])process\.exitCode\s*=\s*0\b"
)
_GO_TEST_MAIN = re.compile(r"^func\s+TestMain\s*\(\s*(?P<m>\w+)\s+\*testing\.M\s*\)")
_GO_INIT = re.compile(r"^func\s+init\s*\(\s*\)")
_GO_EXIT = re.compile(r"(?<![\w.])os\.Exit\s*\(")
_GO_SUCCESS = re.compile(r"(?<![\w.])os\.Exit\s*\(\s*0\s*\)")

MESSAGE = "exit added to test code (the run ends before its tests)"
NO_RUN = "TestMain never calls {m}.Run() (the package's tests never run)"


def early_exits(change: FileChange, shown: Sequence[Line]) -> list[tuple[int, str]]:
    """(line, message) for each way the change's new side ends the run before its tests.
    `shown` is the new side: whole where the repository is read, else the added and context
    lines the diff shows, in order."""
    path = change.new_path or ""
    if change.status == "deleted" or not is_test_path(path):
        return []
    if python.is_module(path):
        return [(n, MESSAGE) for n in _python_exits(change.added, shown, path)]
    if reader_for(path) is JAVASCRIPT and collects_tests(path):
        return [(line.number, MESSAGE) for line in change.added if _js_exits(line.text)]
    if go.is_test_file(path):
        return _go_exits(change, shown)
    return []


def _js_exits(text: str) -> bool:
    """A JavaScript line that ends the run: an exit at the top level, or a success exit
    anywhere (`process.on('exit', () => process.exit(0))`, `process.exitCode = 0`), outside a
    string (a test that spawns `node -e 'process.exit(0)'` exits a child)."""
    if _JS_TOP_EXIT.match(text):
        return True
    return any(_outside_strings(text, match.start()) for match in _JS_SUCCESS_EXIT.finditer(text))


def _outside_strings(text: str, position: int) -> bool:
    """Whether `position` is outside the quoted strings of a line, read quote by quote."""
    quote: str | None = None
    for index, char in enumerate(text[:position]):
        if quote is None and char in "'\"`":
            quote = char
        elif char == quote and (index == 0 or text[index - 1] != "\\"):
            quote = None
    return quote is None


def _python_exits(added: Sequence[Line], shown: Sequence[Line], path: str) -> list[int]:
    """Exits a change adds that run when pytest imports the module: outside every function
    and class (under an `if`, a loop, a `try` or a `with` at the top level included, but not
    under `if __name__ == "__main__":`); in a conftest.py, anywhere."""
    conftest = posixpath.basename(path) == "conftest.py"
    where = {line.number: position for position, line in enumerate(shown)}
    found: list[int] = []
    for line in added:
        if plain_comment(line.text, path):
            continue
        if (conftest and _PY_ANY_EXIT.search(line.text)) or (
            _PY_EXIT.search(line.text) and _runs_on_import(shown, where.get(line.number), line)
        ):
            found.append(line.number)
    return found


def _runs_on_import(shown: Sequence[Line], position: int | None, line: Line) -> bool:
    """Whether a line runs when its module is imported: every block around it (by
    indentation, as far as the lines shown reach, up to a line at the left margin) is a
    statement that runs its body then, not a `def`, a `class` or the `__main__` guard. A
    line whose blocks the lines shown do not reach is taken to run when it is at the margin."""
    depth = indent(line.text)
    if position is None:
        return depth == 0
    for index in range(position - 1, -1, -1):
        if depth == 0:
            return True
        if shown[index].number != shown[index + 1].number - 1:
            return False
        text = shown[index].text
        if not text.strip() or indent(text) >= depth:
            continue
        if _PY_MAIN_GUARD.match(text) or not _PY_RUNS_ON_IMPORT.match(text):
            return False
        depth = indent(text)
    return depth == 0


def _go_exits(change: FileChange, lines: Sequence[Line]) -> list[tuple[int, str]]:
    added = {line.number for line in change.added}
    found: list[tuple[int, str]] = []
    for position, line in enumerate(lines):
        main, init = _GO_TEST_MAIN.match(line.text), _GO_INIT.match(line.text)
        if main is None and init is None:
            continue
        body = _go_body(lines, position)
        if body is None or not ({line.number} | {b.number for b in body}) & added:
            continue  # unchanged, or not all of it shown: judged where it changes
        if main is not None:
            runs = re.compile(rf"(?<![\w.]){re.escape(main['m'])}\.Run\s*\(")
            first = next((i for i, b in enumerate(body) if runs.search(b.text)), None)
            if first is None:
                found.append((line.number, NO_RUN.format(m=main["m"])))
            else:
                found.extend(
                    (b.number, MESSAGE) for b in body[:first] if _GO_SUCCESS.search(b.text)
                )
        else:
            found.extend((b.number, MESSAGE) for b in body if _GO_EXIT.search(b.text))
    return found


def _go_body(lines: Sequence[Line], position: int) -> list[Line] | None:
    """The lines of a top-level Go function after its header, to its closing `}` at the start
    of a line (gofmt's layout); None when the run of lines ends first."""
    if lines[position].text.rstrip().endswith("}"):
        return [lines[position]]  # `func TestMain(m *testing.M) { os.Exit(m.Run()) }`
    body: list[Line] = []
    for index in range(position + 1, len(lines)):
        if lines[index].number != lines[index - 1].number + 1:
            return None
        if lines[index].text.startswith("}") and indent(lines[index].text) == 0:
            return body
        body.append(lines[index])
    return None
