"""What the implementer and the planner are shown: bounded, fenced, and never a secret.

The system prompt is the role's template (`prompts/implementer.md`, `prompts/planner.md`, or a
repository's override under `.github/ourobot/prompts/` at the base) with the project's name,
description and constitution; it is the same for every iteration of a cycle. The input message
holds the ticket, the plan, a capped map of the repository, the relevant files and the last
feedback.

Files are read from git at the worktree's HEAD (never through the filesystem: a committed
symlink could point anywhere on the host), whole or not at all. A file is never shown when a
protected pattern covers it (`.env`, keys, `secrets/**` and the rest) or the guards' secret rule
finds a credential in it; every known secret value is redacted from whatever is shown, and
untrusted text is fenced and stripped of hidden content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.guards import ChangeSet, FileChange, Line, evaluate
from app.guards.paths import ProtectedPaths
from app.loop.caging import SECRET_FILE_PATTERNS
from app.loop.ticket import Ticket
from app.repo_config import DEFAULT_PROTECTED_PATHS, RepoConfig
from app.workspace.worktree import Workspace
from reviewers.git_source import CONSTITUTION_PATH, PROMPT_OVERRIDE_DIR, read_file_at
from reviewers.prompts import Template, Untrusted, fence, load_template, render
from reviewers.untrusted import MIN_SECRET_CHARS, one_line

MAX_SECRET_FILE_BYTES = 256 * 1024
MAP_MAX_PATHS = 400
FILES_MAX_CHARS = 60_000
FEEDBACK_MAX_CHARS = 12_000
PLAN_MAX_CHARS = 8_000
_PATH_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z0-9]+|[A-Za-z0-9_][\w./-]*/[\w.-]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CODE_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\(")
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_.]{2,})`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
MAX_IDENTIFIERS = 10
MAX_FILES_PER_IDENTIFIER = 10

IMPLEMENTER_INPUT = Template(
    name="implementer-input",
    source="app/loop/context.py",
    text="""\
Implement ticket {{TICKET_ID}}. This is iteration {{ITERATION}} of at most {{ITERATIONS}}.

## Ticket

{{TICKET}}

## Plan

{{PLAN}}

## Repository map

{{MAP}}

## Files

{{FILES}}

## Feedback from your last answer

{{FEEDBACK}}

Answer with edit blocks (or tool calls) in the format of your instructions.
""",
)

AGENT_INPUT = Template(
    name="agent-input",
    source="app/loop/context.py",
    text="""\
Work ticket {{TICKET_ID}}. You have {{STEPS}} turns, one action each; up to {{SUBMISSIONS}}
submission(s); each command may run {{COMMAND_TIMEOUT}} seconds. Your commands run in the
repository's worktree (your working directory) in a sandbox without network. The project's
test command is: {{TEST_COMMAND}}

## Ticket

{{TICKET}}

## Plan

{{PLAN}}

## Repository map

{{MAP}}

## Files most likely to matter

{{FILES}}
{{FEEDBACK}}
Answer with one action.
""",
)

PLANNER_INPUT = Template(
    name="planner-input",
    source="app/loop/context.py",
    text="""\
Plan ticket {{TICKET_ID}}.

## Ticket

{{TICKET}}

## Repository map

{{MAP}}

## Files

{{FILES}}

Answer with the five sections of your instructions.
""",
)


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str

    def chars(self) -> int:
        return len(self.system) + len(self.user)


def role_template(repo: Path, base_sha: str, role: str) -> Template:
    """The role's template: the repository's override at the base, else the built-in one."""
    path = f"{PROMPT_OVERRIDE_DIR}/{role}.md"
    override = read_file_at(repo, base_sha, path, what="prompt override")
    return load_template(role, override, source=f"{base_sha[:12]}:{path}")


def read_constitution(repo: Path, base_sha: str) -> str | None:
    return read_file_at(repo, base_sha, CONSTITUTION_PATH, what="constitution")


class Context:
    """Builds one cycle's prompts from its workspace at HEAD."""

    def __init__(
        self,
        workspace: Workspace,
        config: RepoConfig,
        ticket: Ticket,
        *,
        constitution: str | None,
        secrets: Sequence[str],
    ) -> None:
        self.ws = workspace
        self.config = config
        self.ticket = ticket
        self.constitution = constitution
        self.secrets = tuple(secrets)
        patterns = (*DEFAULT_PROTECTED_PATHS, *config.guards.effective_protected_paths(config.mode))
        self.never_shown = ProtectedPaths(dict.fromkeys(patterns))
        # What a secret file holds must not reach a model by another way either (a test that
        # prints .env, a source file that copied a value): its values are redacted everywhere.
        self.secrets = (*self.secrets, *secret_file_values(workspace))

    # ---- the system prompts -----------------------------------------------------------------

    def system(self, template: Template) -> str:
        constitution: str | Untrusted = "(This project has no constitution file.)"
        if self.constitution is not None:
            constitution = Untrusted("constitution", self.constitution)
        project = self.config.project
        values: dict[str, str | Untrusted] = {
            "PROJECT_NAME": Untrusted("project-name", project.name or "(unnamed)", "line"),
            "PROJECT_DESCRIPTION": Untrusted(
                "project-description", project.description or "(no description)", "line"
            ),
            "CONSTITUTION": constitution,
        }
        if "MAX_DELETIONS" in template.text:
            limit = self.config.guards.max_deletions_per_iteration
            values["MAX_DELETIONS"] = "a few" if limit is None else str(limit)
        return render(template, values, secrets=self.secrets)

    # ---- the input messages -----------------------------------------------------------------

    def implementer_input(
        self, *, iteration: int, iterations: int, plan: str | None, feedback: str
    ) -> str:
        focus = self._focus(plan, feedback)
        return render(
            IMPLEMENTER_INPUT,
            {
                "TICKET_ID": Untrusted("ticket-id", self.ticket.id, "line"),
                "ITERATION": str(iteration),
                "ITERATIONS": str(iterations),
                "TICKET": Untrusted("ticket", self.ticket.text),
                "PLAN": Untrusted("plan", plan[:PLAN_MAX_CHARS]) if plan else "(No plan.)",
                "MAP": self.repo_map(),
                "FILES": self.files(focus),
                "FEEDBACK": feedback or "(None yet: this is your first answer.)",
            },
            secrets=self.secrets,
        )

    def agent_input(self, *, plan: str | None, feedback: str) -> str:
        """The agent's first message: the ticket, the plan, the map and the files most likely
        to matter (and, for a fix round, what to fix)."""
        budgets = self.config.budgets
        extra = f"\n## What to fix\n\n{feedback}\n" if feedback else ""
        return render(
            AGENT_INPUT,
            {
                "TICKET_ID": Untrusted("ticket-id", self.ticket.id, "line"),
                "STEPS": str(budgets.agent_steps),
                "SUBMISSIONS": str(budgets.implementer_iterations),
                "COMMAND_TIMEOUT": str(budgets.command_timeout_s),
                "TEST_COMMAND": Untrusted("test-command", self.config.test_command, "line"),
                "TICKET": Untrusted("ticket", self.ticket.text),
                "PLAN": Untrusted("plan", plan[:PLAN_MAX_CHARS]) if plan else "(No plan.)",
                "MAP": self.repo_map(),
                "FILES": self.files(self._focus(plan, feedback)),
                "FEEDBACK": extra,
            },
            secrets=self.secrets,
        )

    def planner_input(self) -> str:
        return render(
            PLANNER_INPUT,
            {
                "TICKET_ID": Untrusted("ticket-id", self.ticket.id, "line"),
                "TICKET": Untrusted("ticket", self.ticket.text),
                "MAP": self.repo_map(),
                "FILES": self.files(self._focus(None, "")),
            },
            secrets=self.secrets,
        )

    def repo_map(self) -> str:
        sizes = self.ws.tree_sizes()
        paths = sorted(sizes, key=lambda path: (path.count("/"), path))
        shown = paths[:MAP_MAX_PATHS]
        listing = "\n".join(f"{path} ({sizes[path]:,} bytes)" for path in sorted(shown))
        more = len(paths) - len(shown)
        if more > 0:
            listing += f"\n... and {more} more files not listed"
        return fence(Untrusted("repository-map", listing + "\n", "code"), secrets=self.secrets)

    def files(self, focus: Sequence[str]) -> str:
        """The focus files at HEAD, whole, within the budget; the rest named as not shown."""
        sizes = self.ws.tree_sizes()
        candidates = [p for p in dict.fromkeys(focus) if p in sizes]
        texts: dict[str, str] = {}
        withheld: list[str] = []
        for path in candidates:
            if self.never_shown.match(path) is not None:
                withheld.append(f"{path}: not shown (a protected file)")
                continue
            data = self.ws.read_at("HEAD", path)
            if data is None or b"\0" in data:
                continue
            texts[path] = data.decode("utf-8", "replace")
        for path in _with_credentials(texts, self.config):
            del texts[path]
            withheld.append(f"{path}: not shown (it may hold a credential)")
        parts: list[str] = []
        budget = FILES_MAX_CHARS
        for path, text in texts.items():
            lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            name = one_line(path, 300)
            if len(text) > budget:
                withheld.append(f"{name}: {lines} lines, not shown (too large for the context): "
                                "change it with REPLACE or APPEND, never rewrite it")  # fmt: skip
                continue
            budget -= len(text)
            block = fence(Untrusted("file", text, "code"), secrets=self.secrets)
            parts.append(f"File {name} ({lines} lines):\n{block}")
        if withheld:
            parts.append("Not shown:\n" + "\n".join(f"- {line}" for line in withheld))
        return "\n\n".join(parts) if parts else "(No file was selected for this ticket.)"

    def _focus(self, plan: str | None, feedback: str) -> list[str]:
        """Files worth showing, most relevant first: what the branch changed, what the
        feedback and the ticket (and plan) name, files named like the ticket's words, and
        the tests that go with them."""
        tracked = self.ws.tree_sizes()
        by_name: dict[str, list[str]] = {}
        for path in tracked:
            by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        changed = [c.path for c in self.ws.changes(self.ws.base_sha) if c.status != "D"]
        focus = list(changed)
        for text in (feedback, self.ticket.text, plan or ""):
            focus.extend(_named_paths(text, tracked, by_name))
        words = {word.casefold() for word in _WORD.findall(self.ticket.text)}
        for path in sorted(tracked, key=lambda p: (p.count("/"), p)):
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].casefold()
            if stem in words and stem not in {"test", "tests", "readme"}:
                focus.append(path)
        focus.extend(self._defining(self.ticket.text + "\n" + (plan or "")))
        if sum(tracked.values()) <= FILES_MAX_CHARS // 2:
            focus.extend(sorted(tracked, key=lambda p: (p.count("/"), p)))  # a small repository
        related = []
        for path in focus:
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            for name in (f"test_{stem}.py", f"{stem}_test.py", f"{stem}_test.go"):
                related.extend(by_name.get(name, []))
        return list(dict.fromkeys([*focus, *related]))

    def _defining(self, text: str) -> list[str]:
        """Files at HEAD that mention the identifiers the text names as code (`name(` or in
        backticks), most mentioned identifiers first."""
        names = list(dict.fromkeys(_CODE_NAME.findall(text) + _BACKTICKED.findall(text)))
        found: list[str] = []
        for name in names[:MAX_IDENTIFIERS]:
            if not _IDENTIFIER.fullmatch(name):
                continue
            code, out = self.ws.git_raw(
                "grep", "-l", "-w", "-F", "-I", "-z", "-e", name, "HEAD", "--", ok=(0, 1)
            )
            if code != 0:
                continue
            paths = [p.decode("utf-8", "replace").removeprefix("HEAD:") for p in out.split(b"\0")]
            found.extend([p for p in paths if p][:MAX_FILES_PER_IDENTIFIER])
        return found


def secret_file_values(workspace: Workspace) -> list[str]:
    """The values held by the files whose names say they hold secrets (`.env`, `.env.*`,
    `secrets/**`, `*.pem`, `*.key`) at the workspace's HEAD: each line, and the value of each
    `KEY=value` or `key: value` line."""
    secret_files = ProtectedPaths(SECRET_FILE_PATTERNS)
    values: list[str] = []
    for path, size in workspace.tree_sizes().items():
        if size > MAX_SECRET_FILE_BYTES or secret_files.match(path) is None:
            continue
        data = workspace.read_at("HEAD", path)
        if data is None:
            continue
        for line in data.decode("utf-8", "replace").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            values.append(line)
            for separator in ("=", ":"):
                _, found, value = line.partition(separator)
                if found:
                    values.append(value.strip().strip("'\""))
    return [value for value in values if len(value) >= MIN_SECRET_CHARS]


def _named_paths(text: str, tracked: Iterable[str], by_name: dict[str, list[str]]) -> list[str]:
    known = set(tracked)
    found: list[str] = []
    for token in _PATH_TOKEN.findall(text):
        token = token.strip("./").rstrip(":,;)")
        if token in known:
            found.append(token)
        elif "/" not in token and len(by_name.get(token, [])) == 1:
            found.append(by_name[token][0])
        else:
            found.extend(path for path in known if path.endswith("/" + token))
    return found


def _with_credentials(texts: dict[str, str], config: RepoConfig) -> list[str]:
    """Files the guards' secret rule would refuse, judged as if each were added whole."""
    if not texts:
        return []
    files = tuple(
        FileChange(
            "added",
            None,
            path,
            added=tuple(Line(n, line, n) for n, line in enumerate(text.splitlines(), start=1)),
        )
        for path, text in texts.items()
    )
    changes = ChangeSet(files=files, source="worktree", diff_bytes=0)
    guards = config.guards.model_copy(update={"secrets": True, "test_tamper": False})
    result = evaluate(changes, config.model_copy(update={"guards": guards}))
    return sorted({v.path for v in result.violations if v.rule == "secret" and v.path})


def fence_output(text: str, secrets: Sequence[str]) -> str:
    """Output of code ourobot ran (a command, a test run), fenced and redacted for a model."""
    return fence(Untrusted("output", text[-FEEDBACK_MAX_CHARS:], "code"), secrets=secrets)


def feedback_text(
    *,
    refusals: Sequence[str] = (),
    problems: Sequence[str] = (),
    test_summary: str | None = None,
    test_output: str | None = None,
    notes: Sequence[str] = (),
    secrets: Sequence[str] = (),
) -> str:
    """The harness's feedback on the last answer: its words, then the test output fenced."""
    parts: list[str] = list(notes)
    if problems:
        parts.append("These blocks of your answer could not be read:\n" + "\n".join(problems))
    if refusals:
        parts.append(
            "The harness refused your last answer, so none of its edits were applied; the "
            "files above are as they were:\n" + "\n".join(refusals)
        )
    if test_summary is not None:
        parts.append(
            f"Your edits were applied and committed, and the test command {test_summary}. "
            "The output below is ground truth: fix the cause, not the symptom."
        )
    if test_output:
        tail = test_output[-FEEDBACK_MAX_CHARS:]
        parts.append(fence(Untrusted("test-output", tail, "code"), secrets=secrets))
    return "\n\n".join(parts)
