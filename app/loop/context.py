"""What the implementer and the planner are shown: bounded, fenced, and never a secret.

The system prompt is the role's template (`prompts/implementer.md`, `prompts/planner.md`, or a
repository's override under `.github/ourobot/prompts/` at the base) with the project's name,
description and constitution; it is the same for every iteration of a cycle. The input message
holds the ticket, the plan, the repository map and the files of the first view (ranked against
the ticket: `app.loop.first_view`, `app.loop.tree_map`) and the last feedback.

Files are read from git at the worktree's HEAD (never through the filesystem: a committed
symlink could point anywhere on the host), whole or, when too large, by their relevant parts
with line numbers. A protected file is never read for the ranking, and never shown when a
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
from app.guards.secrets_scan import redact_credentials
from app.loop.caging import SECRET_FILE_PATTERNS
from app.loop.first_view import Ranking, Shown, choose, indexable, rank_files
from app.loop.head_files import BINARY_PROBE_BYTES, Blob, read_texts, tree_blobs
from app.loop.ticket import Ticket
from app.loop.tree_map import MAP_MAX_CHARS, repo_map
from app.repo_config import DEFAULT_PROTECTED_PATHS, RepoConfig
from app.workspace.worktree import Workspace
from reviewers.connectivity import build_graph, import_lines
from reviewers.git_source import CONSTITUTION_PATH, PROMPT_OVERRIDE_DIR, read_file_at
from reviewers.prompts import Template, Untrusted, fence, load_template, render
from reviewers.untrusted import MIN_SECRET_CHARS, REDACTED, one_line

MAX_SECRET_FILE_BYTES = 256 * 1024
FILES_MAX_CHARS = 60_000
FEEDBACK_MAX_CHARS = 12_000
PLAN_MAX_CHARS = 8_000
# Every file the first view may rank is read; past this many bytes, the deepest are left out.
# (Ranking costs about a quarter of a second per megabyte of text.)
INDEX_MAX_TOTAL_BYTES = 32 * 1024 * 1024
# Files found holding a credential are withheld and the room refilled at most this often.
MAX_CREDENTIAL_ROUNDS = 3
# The files ranked next after the budget is spent are named, up to this many.
MAX_NEXT_NAMED = 10
# A path as a ticket writes it: `pkg/mod.py`, `docs/`, and dotfiles such as `.env`.
_PATH_TOKEN = re.compile(
    r"\.?[A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z0-9]+|[A-Za-z0-9_][\w./-]*/[\w.-]+"
    r"|(?<![\w/.])\.[A-Za-z0-9_][\w.-]*"
)

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
        self._cached_index: _Index | None = None
        self._rankings: dict[str, Ranking] = {}

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
                "FILES": self._files(focus, plan),
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
        """Every tracked path counted: the ones the ticket ranks highest listed first, within
        the map's budget, the rest counted by folder."""
        sizes = self.ws.tree_sizes()
        listing = repo_map(sizes, self._ranking(None).scores(), MAP_MAX_CHARS)
        return fence(Untrusted("repository-map", listing, "code"), secrets=self.secrets)

    def files(self, focus: Sequence[str]) -> str:
        """The focus files first, then the ranking's, within the budget: whole when they fit,
        else their relevant parts with line numbers; withheld ones named as not shown."""
        return self._files(focus, None)

    def _files(self, focus: Sequence[str], plan: str | None) -> str:
        index = self._index()
        ranking = self._ranking(plan)
        withheld: list[str] = []
        texts = dict(index.texts)
        pinned: list[str] = []
        for path in dict.fromkeys(focus):
            if self.never_shown.match(path) is not None:
                if path in index.sizes:
                    withheld.append(f"{one_line(path, 300)}: not shown (a protected file)")
                continue
            if path not in texts:
                text = self._read_text(path)
                if text is None:
                    continue
                texts[path] = text
            pinned.append(path)
        order = [path for path in ranking.order(pinned) if path in texts]  # HEAD has moved on
        shown = choose(ranking, order, texts, FILES_MAX_CHARS)
        rounds = 0
        while flagged := _with_credentials({s.path: texts[s.path] for s in shown}, self.config):
            # Every file shown has been checked: a withheld one frees room for the next one,
            # which is checked in turn (a few rounds, then the room stays unused).
            withheld.extend(f"{one_line(p, 300)}: not shown (it may hold a credential)"
                            for p in flagged)  # fmt: skip
            order = [path for path in order if path not in flagged]
            rounds += 1
            if rounds < MAX_CREDENTIAL_ROUNDS:
                shown = choose(ranking, order, texts, FILES_MAX_CHARS)
            else:
                shown = [s for s in shown if s.path not in flagged]
        return self._render_files(shown, withheld, order)

    def _render_files(
        self, shown: Sequence[Shown], withheld: list[str], order: Sequence[str]
    ) -> str:
        parts = [self._render_one(item) for item in shown]
        shown_paths = {item.path for item in shown}
        left = [path for path in order if path not in shown_paths]
        for path in left[:MAX_NEXT_NAMED]:
            withheld.append(f"{one_line(path, 300)}: ranked next, not shown (the files budget)")
        if len(left) > MAX_NEXT_NAMED:
            withheld.append(
                f"{len(left) - MAX_NEXT_NAMED} more files match the ticket's words less well"
            )
        if withheld:
            parts.append("Not shown:\n" + "\n".join(f"- {line}" for line in withheld))
        return "\n\n".join(parts) if parts else "(No file matched this ticket: see the map.)"

    def _render_one(self, item: Shown) -> str:
        name = one_line(item.path, 300)
        block = fence(Untrusted("file", item.text, "code"), secrets=self.secrets)
        if item.excerpt is None:
            return f"File {name} ({item.lines} lines):\n{block}"
        which = (
            "the lines that define something (no line matched the ticket's words)"
            if item.excerpt.outline
            else f"lines {item.excerpt.span_text()}"
        )
        return (
            f"File {name} ({item.lines} lines), too large to show whole: its parts, {which}. "
            "The number before each line is its line number, not part of the file. Read the "
            f"rest with a command (`sed -n '120,180p' {name}`, `grep -n WORD {name}`); a "
            f"REPLACE quotes the file's exact text, without the numbers.\n{block}"
        )

    def _focus(self, plan: str | None, feedback: str) -> list[str]:
        """Files shown before the ranking's: what the branch changed, what the feedback and
        the ticket (and plan) name, and the tests that go with them."""
        tracked = self.ws.tree_sizes()
        by_name: dict[str, list[str]] = {}
        for path in tracked:
            by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        changed = [c.path for c in self.ws.changes(self.ws.base_sha) if c.status != "D"]
        focus = list(changed)
        for text in (feedback, self.ticket.text, plan or ""):
            focus.extend(_named_paths(text, tracked, by_name))
        related = []
        for path in focus:
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            for name in (f"test_{stem}.py", f"{stem}_test.py", f"{stem}_test.go"):
                related.extend(by_name.get(name, []))
        return list(dict.fromkeys([*focus, *related]))

    # ---- what the ranking reads -------------------------------------------------------------

    def _index(self) -> _Index:
        """The text files at HEAD that may be shown (read once per HEAD)."""
        head = self.ws.head()
        if self._cached_index is None or self._cached_index.head != head:
            blobs = tree_blobs(self.ws.git_raw, head)
            showable = [
                b for b in blobs
                if indexable(b.path, b.size) and self.never_shown.match(b.path) is None
            ]  # fmt: skip
            texts = read_texts(self.ws.git_raw, _within(showable, INDEX_MAX_TOTAL_BYTES))
            self._cached_index = _Index(head, {b.path: b.size for b in blobs}, texts)
        return self._cached_index

    def _ranking(self, plan: str | None) -> Ranking:
        """The files ranked against the ticket (and plan), with their import graph: once per
        cycle, on the files as the first call finds them. Later iterations show what the
        branch changed first, so the order the ticket gave stays the right one after it."""
        query = self.ticket.text + ("\n" + plan[:PLAN_MAX_CHARS] if plan else "")
        if query not in self._rankings:
            index = self._index()
            lines = {path: import_lines(path, text) for path, text in index.texts.items()}
            graph = build_graph(lines, index.sizes)
            self._rankings[query] = rank_files(query, index.texts, graph)
        return self._rankings[query]

    def _read_text(self, path: str) -> str | None:
        data = self.ws.read_at("HEAD", path)
        if data is None or b"\0" in data[:BINARY_PROBE_BYTES]:
            return None
        return data.decode("utf-8", "replace")


@dataclass(frozen=True)
class _Index:
    head: str
    sizes: dict[str, int]
    texts: dict[str, str]


def _within(blobs: Sequence[Blob], max_bytes: int) -> list[Blob]:
    """The shallowest blobs whose sizes add up to at most `max_bytes`."""
    kept: list[Blob] = []
    used = 0
    for blob in sorted(blobs, key=lambda b: (b.path.count("/"), b.path)):
        if used + blob.size <= max_bytes:
            kept.append(blob)
            used += blob.size
    return kept


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
        token = token.rstrip(".:,;)").removeprefix("./").lstrip("/")
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
    shown = redact_credentials(text[-FEEDBACK_MAX_CHARS:], REDACTED)
    return fence(Untrusted("output", shown, "code"), secrets=secrets)


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
        tail = redact_credentials(test_output[-FEEDBACK_MAX_CHARS:], REDACTED)
        parts.append(fence(Untrusted("test-output", tail, "code"), secrets=secrets))
    return "\n\n".join(parts)
