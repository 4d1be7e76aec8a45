"""Command output quoted in the docs, checked by running the quoted commands.

A quoted block is a ```console fence whose previous line names it:

    <!-- docs-check: SCENARIO BLOCK -->
    ```console
    $ ourobot cycle --repo . --ticket TICKET.md
    ourobot: the implementer can call none of its models: ...
    ```

Lines starting `$ ` are commands (a line ending in `\\` continues on the next); the lines after
a command, up to the next one, are what it prints (stdout and stderr, as a terminal shows
them). `tests/test_docs_outputs.py` has one function per SCENARIO that prepares what the
commands need (a sandbox port, a fake model server, a repository) and runs the scenario's
blocks, in order, in one bash session, through `Session`. The output must match the quote
exactly, but for these variable parts, and nothing else:

- `...` on a line of its own stands for any number of lines; inside a line, for any text.
- A hex string of 7 to 40 characters (a commit, a manifest code): any hex string of that
  length. A token (`sbx_...`, `ghp_...`): any token of that kind. A duration with a decimal
  point (`2.3s`, `+   0.1s`): any duration.
- Aliases the scenario sets: the ports the docs use (8765, 3000, 11434) for the free ports the
  check really uses, and the folders the docs name (`/tmp/ourobot-trial`) for the check's own.
  Commands get the real values; outputs are compared with the docs' values put back.

A hex string or token the docs show is learned from the output it first appears in, and a
later command that quotes it (`ourobot app convert 55511564fb23874e40be`) is run with the real
value; a later output that shows it must show that same value.

A mismatch raises `DocsDrift` with the page, the line, the command and a diff.
"""

from __future__ import annotations

import difflib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^\s*<!-- docs-check: (?P<scenario>[\w.-]+) (?P<block>[\w.-]+) -->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<info>[\w-]*)\s*$")

# The variable parts of a quoted output (see the module's docstring), in the order they are
# tried at each position of the quote.
VARIABLE = re.compile(
    r"(?P<token>\b(?:sbx|gh[pousr])_[0-9a-f]+(?:\.\.\.)?)"
    r"|(?P<hex>\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b)"
    r"|(?P<time> *\b\d+\.\d+ ?s\b)"
    r"|(?P<any>\.\.\.)"
)
ACTUAL = {
    "token": lambda quoted: (
        quoted[:4] + r"[0-9A-Za-z]+" if quoted.startswith("gh") else r"sbx_[0-9a-f]+"
    ),
    "hex": lambda quoted: rf"[0-9a-f]{{{len(quoted)}}}",
    "time": lambda quoted: r" *\d+\.\d+ ?s",
    "any": lambda quoted: r"[^\n]*?",
}
ANY_LINES = r"(?:[^\n]*\n)*?"


class DocsDrift(AssertionError):
    """A quoted output that is not what the command prints."""


@dataclass(frozen=True)
class Command:
    text: str
    expected: str  # the quoted output, lines joined by "\n" ("" when it prints nothing)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    scenario: str
    name: str
    commands: tuple[Command, ...]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line} ({self.scenario} {self.name})"


@dataclass(frozen=True)
class Fenced:
    page: Path
    line: int
    info: str
    lines: tuple[str, ...]
    marker: re.Match[str] | None


def fenced_blocks(page: Path) -> Iterator[Fenced]:
    """Every fenced block of a Markdown page, its indentation removed, with its marker."""
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent = len(opening.group("indent"))
        body: list[str] = []
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            body.append(lines[end][indent:] if lines[end][:indent].isspace() else lines[end])
            end += 1
        marker = MARKER.match(lines[index - 1]) if index > 0 else None
        yield Fenced(page, index + 1, opening.group("info"), tuple(body), marker)
        index = end + 1


def parse_commands(lines: Sequence[str], where: str) -> tuple[Command, ...]:
    commands: list[Command] = []
    text: list[str] = []
    output: list[str] = []
    continuing = False
    for line in lines:
        if continuing:
            text.append(line)
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            if text:
                commands.append(Command("\n".join(text), "\n".join(output)))
            text, output = [line[2:]], []
            continuing = line.endswith("\\")
        elif not text:
            raise ValueError(f"{where}: output before the first `$ ` command: {line!r}")
        else:
            output.append(line)
    if text:
        commands.append(Command("\n".join(text), "\n".join(output)))
    return tuple(commands)


def marked_blocks(pages: Sequence[Path]) -> list[Block]:
    blocks = []
    for page in pages:
        for fenced in fenced_blocks(page):
            if fenced.marker is None:
                continue
            where = f"{page.relative_to(ROOT)}:{fenced.line}"
            if fenced.info != "console":
                raise ValueError(f"{where}: a docs-check block must be ```console")
            blocks.append(
                Block(
                    page,
                    fenced.line,
                    fenced.marker.group("scenario"),
                    fenced.marker.group("block"),
                    parse_commands(fenced.lines, where),
                )
            )
    return blocks


def unchecked_outputs(page: Path) -> list[str]:
    """The ```console blocks of `page` that quote output but carry no docs-check marker."""
    found = []
    for fenced in fenced_blocks(page):
        if fenced.info == "console" and fenced.marker is None:
            commands = parse_commands(fenced.lines, str(page))
            if any(command.expected for command in commands):
                found.append(f"{page.relative_to(ROOT)}:{fenced.line}")
    return found


# ---- matching ----------------------------------------------------------------------------


@dataclass
class Learned:
    """Values the docs show (a token, a code) and what the run really printed for them."""

    values: dict[str, str] = field(default_factory=dict)


def quote_pattern(expected: str, learned: Learned) -> tuple[re.Pattern[str], dict[str, str]]:
    """The quote as a regex over the real output, and {group name: the quoted text}."""
    parts: list[str] = []
    groups: dict[str, str] = {}
    seen: dict[str, str] = {}
    for line in expected.splitlines() if expected else []:
        if line.strip() == "...":
            parts.append(ANY_LINES)
            continue
        position = 0
        for found in VARIABLE.finditer(line):
            parts.append(re.escape(line[position : found.start()]))
            kind, quoted = found.lastgroup or "any", found.group()
            if kind in ("token", "hex") and quoted in learned.values:
                parts.append(re.escape(learned.values[quoted]))
            elif kind in ("token", "hex") and quoted in seen:
                parts.append(f"(?P={seen[quoted]})")
            elif kind in ("token", "hex"):
                name = f"v{len(groups)}"
                groups[name], seen[quoted] = quoted, name
                parts.append(f"(?P<{name}>{ACTUAL[kind](quoted)})")
            else:
                parts.append(ACTUAL[kind](quoted))
            position = found.end()
        parts.append(re.escape(line[position:]) + r"\n")
    return re.compile("".join(parts)), groups


def tidy(output: str) -> str:
    """Trailing spaces and blank lines dropped, every line ended by a newline."""
    lines = [line.rstrip() for line in output.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "".join(line + "\n" for line in lines)


def match_output(expected: str, actual: str, learned: Learned) -> bool:
    """Whether `actual` is the quote (learning the quoted values it shows) or not."""
    pattern, groups = quote_pattern(expected, learned)
    found = pattern.fullmatch(tidy(actual))
    if found is None:
        return False
    for name, quoted in groups.items():
        learned.values[quoted] = found.group(name)
    return True


def drift(block: Block, command: Command, actual: str, note: str = "") -> DocsDrift:
    diff = "\n".join(
        difflib.unified_diff(
            command.expected.splitlines(),
            tidy(actual).splitlines(),
            "quoted in the docs",
            "printed by the command",
            lineterm="",
        )
    )
    return DocsDrift(
        f"{block.where}: the output quoted for `$ {command.text}` is not what it prints"
        f"{note}\n{diff}"
    )


def substitute(text: str, mapping: Mapping[str, str]) -> str:
    """Every key of `mapping` in `text` replaced by its value, longest keys first; numbers
    (ports) only where they stand alone."""
    for key in sorted(mapping, key=len, reverse=True):
        if key.isdigit():
            text = re.sub(rf"(?<![\w.]){key}(?!\w)", mapping[key], text)
        else:
            text = text.replace(key, mapping[key])
    return text


def check_quoted(block: Block, outputs: Sequence[str], aliases: Mapping[str, str]) -> None:
    """Outputs produced elsewhere (one per command of `block`) against the block's quotes."""
    back = {actual: quoted for quoted, actual in aliases.items()}
    learned = Learned()
    assert len(outputs) == len(block.commands), block.where
    for command, output in zip(block.commands, outputs, strict=True):
        if not match_output(command.expected, substitute(output, back), learned):
            raise drift(block, command, substitute(output, back))


# ---- running ------------------------------------------------------------------------------


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """A newcomer's shell: ourobot on PATH, git configured, no OUROBOT_* and no model key."""
    import sys

    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = A Maintainer\n\temail = maintainer@example.com\n"
        "[init]\n\tdefaultBranch = main\n"
    )
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONUNBUFFERED": "1",  # stdout and stderr interleave as on a terminal
        "GIT_CONFIG_NOSYSTEM": "1",
        **extra,
    }


class _Output:
    """A process's merged stdout and stderr, read as it comes."""

    def __init__(self, stream: object) -> None:
        self.text = ""
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: object) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            with self._changed:
                self.text += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def wait_for(self, done: re.Pattern[str] | str, timeout_s: float) -> str | None:
        """The text up to `done` (a string or a pattern) once it is there; None at timeout."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                if isinstance(done, str):
                    index = self.text.find(done)
                    if index >= 0:
                        return self.text[:index]
                else:
                    found = done.search(self.text)
                    if found:
                        return self.text[: found.start()]
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)

    def consume(self, upto: int) -> None:
        with self._changed:
            self.text = self.text[upto:]


class Session:
    """One bash, as one terminal: the quoted commands run in it in order, so `cd`, variables
    and background jobs carry over. Stopped with everything it started (its process group)."""

    def __init__(self, workdir: Path, env: Mapping[str, str], aliases: Mapping[str, str]) -> None:
        self.workdir = workdir
        self.env = dict(env)
        self.aliases = dict(aliases)
        self.learned = Learned()
        self._processes: list[subprocess.Popen[bytes]] = []
        self._shell = self._spawn(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE)
        self._output = _Output(self._shell.stdout)
        self._count = 0
        self._nonce = os.urandom(6).hex()

    def _spawn(self, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            argv,
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,  # type: ignore[call-overload]
        )
        self._processes.append(process)
        return process

    def _real(self, text: str) -> str:
        return substitute(text, {**self.learned.values, **self.aliases})

    def _quoted(self, output: str) -> str:
        return substitute(output, {actual: quoted for quoted, actual in self.aliases.items()})

    def execute(self, command: str, timeout_s: float = 120) -> tuple[int, str]:
        """Run one command line (the docs' values made real) in the shell: (status, output)."""
        assert self._shell.stdin is not None
        self._count += 1
        sentinel = f"__docs_check_{self._nonce}_{self._count}__"
        # The status is given back after the sentinel is printed, so `echo $?` in the next
        # command says what this one returned.
        script = (
            f"{{ {self._real(command)}\n}} </dev/null\n"
            f"__status=$?; printf '%s:%s\\n' {sentinel} $__status; (exit $__status)\n"
        )
        self._shell.stdin.write(script.encode())
        self._shell.stdin.flush()
        done = re.compile(rf"{sentinel}:(\d+)\n")
        output = self._output.wait_for(done, timeout_s)
        if output is None:
            raise DocsDrift(
                f"`$ {command}` did not finish within {timeout_s}s:\n{self._output.text}"
            )
        found = done.search(self._output.text)
        assert found is not None
        self._output.consume(found.end())
        return int(found.group(1)), self._quoted(output)

    def run(self, block: Block, *, retry_s: float = 0, timeout_s: float = 120) -> None:
        """Each command of `block` in turn, its output against the quote. With `retry_s`, a
        command whose output does not match yet is run again (once a second) for that long:
        for what settles a moment later (check runs)."""
        for command in block.commands:
            deadline = time.monotonic() + retry_s
            while True:
                status, output = self.execute(command.text, timeout_s)
                if match_output(command.expected, output, self.learned):
                    break
                if time.monotonic() >= deadline:
                    raise drift(block, command, output, f" (exit {status})")
                time.sleep(1)

    def start(self, block: Block, timeout_s: float = 60) -> None:
        """`block` in a terminal of its own (a server left running): its commands run in
        another bash, and its output so far must be the quote once the quote's lines are
        all there."""
        script = "\n".join(self._real(command.text) for command in block.commands)
        process = self._spawn(["bash", "--noprofile", "--norc", "-c", script])
        output = _Output(process.stdout)
        expected = "\n".join(c.expected for c in block.commands if c.expected)
        lines = len(expected.splitlines())
        enough = re.compile(r"\A(?:[^\n]*\n){" + str(lines) + "}")
        if output.wait_for(enough, timeout_s) is None:
            raise DocsDrift(f"{block.where}: not {lines} lines within {timeout_s}s:\n{output.text}")
        printed = "".join(output.text.splitlines(keepends=True)[:lines])
        if not match_output(expected, self._quoted(printed), self.learned):
            raise drift(block, Command(block.commands[-1].text, expected), self._quoted(printed))

    def close(self) -> None:
        for process in reversed(self._processes):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for process in self._processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
