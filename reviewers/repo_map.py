"""The scope reviewer's view: a bounded whole-repository map and the prompt around it.

A line-level reviewer sees the diff; the scope reviewer (`review.context: max`) sees where the
change sits in the repository: the file tree at the head (paths and sizes), the project's
goals (the README's opening and the whole constitution, at the base: a change cannot rewrite
the goals it is judged by), the coupling of the changed files (import links, most connected
neighbours) and the prompt and governance files it touches. Everything is read from git,
bounded by the review budget, fenced as untrusted data and redacted of known secrets. The
constitution is never cut: it is read whole and its length comes off the budget first, so the
tree, the README and the coupling shrink to make room (each part has its share of what is
left; what does not fit is counted, never cut silently).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError
from reviewers.connectivity import ImportGraph
from reviewers.context import DiffSelection, ReviewPrompt
from reviewers.git_source import (
    CONSTITUTION_PATH,
    PROMPT_OVERRIDE_DIR,
    Change,
    read_file_at,
    run_git,
)
from reviewers.prompts import Template, Untrusted, load_template, render

SCOPE_TEMPLATE_NAME = "scope-reviewer"
README_PATHS = ("README.md", "README.rst", "README.txt", "README")
MAX_GOAL_LINES = 40
MAX_NEIGHBOURS = 5
# Shares of the budget: the tree is the largest part, goals and coupling are openings only.
TREE_SHARE = 0.5
GOALS_SHARE = 0.2
COUPLING_SHARE = 0.2
MIN_PART_CHARS = 400

SCOPE_USER_TEMPLATE = Template(
    name="scope-reviewer-input",
    source="reviewers/repo_map.py",
    text="""\
Judge the scope of this change (base {{BASE}}, head {{HEAD}}).

## Ticket

{{TICKET}}

## Changed files

{{CHANGED}}

## Repository tree at the head

{{TREE}}

## Goals: README (opening lines, at the base)

{{README}}

## Goals: the constitution (whole, at the base)

{{CONSTITUTION}}

## Coupling of the changed files

{{COUPLING}}

## Prompt and governance files

{{PROMPTS}}

Answer in the output format of your instructions; your last line is the verdict.
""",
)


@dataclass(frozen=True)
class RepoMap:
    """The map's parts as plain text (untrusted: paths and file text come from the repo)."""

    changed: str
    tree: str
    readme: str | None
    constitution: str | None
    coupling: str
    prompts: str
    tree_omitted: int


def read_repo_map(repo: Path, change: Change, *, max_chars: int) -> RepoMap:
    """The map of `repo` around `change`, within about `max_chars` characters plus the whole
    constitution (raises `UserError` if it cannot be read whole)."""
    constitution = read_file_at(repo, change.base_sha, CONSTITUTION_PATH, what="constitution")
    room = max_chars - len(constitution or "")
    budget = max(room, 4 * MIN_PART_CHARS)
    entries = _tree(repo, change.head_sha)
    tree, omitted = _bounded_tree(entries, _share(budget, TREE_SHARE))
    goal_chars = _share(budget, GOALS_SHARE)
    changed_paths = [diff.path for diff in change.files]
    return RepoMap(
        changed="".join(f"{diff.file.status} {diff.path}\n" for diff in change.files),
        tree=tree,
        readme=_goal(repo, change.base_sha, README_PATHS, goal_chars),
        constitution=constitution,
        coupling=coupling(changed_paths, change.graph, _share(budget, COUPLING_SHARE)),
        prompts=_prompt_files([path for path, _ in entries], set(changed_paths)),
        tree_omitted=omitted,
    )


def _share(budget: int, share: float) -> int:
    return max(MIN_PART_CHARS, int(budget * share))


def _tree(repo: Path, head_sha: str) -> list[tuple[str, str]]:
    """(path, size) of every blob at the head; a submodule or link has size "-"."""
    _, listing = run_git(repo, ["ls-tree", "-r", "-l", "-z", "--end-of-options", head_sha])
    entries = []
    for record in listing.split("\0"):
        meta, tab, path = record.partition("\t")
        if tab:
            entries.append((path, meta.split()[-1]))
    return entries


def _bounded_tree(entries: Sequence[tuple[str, str]], max_chars: int) -> tuple[str, int]:
    """The listing in path order until `max_chars`, and how many entries did not fit."""
    lines: list[str] = []
    used = 0
    for path, size in entries:
        line = f"{path} ({size} bytes)\n" if size.isdigit() else f"{path}\n"
        if used + len(line) > max_chars:
            break
        lines.append(line)
        used += len(line)
    omitted = len(entries) - len(lines)
    if omitted:
        lines.append(f"... {omitted} more file(s) omitted (the map's budget is spent)\n")
    return "".join(lines), omitted


def _goal(repo: Path, rev: str, candidates: Iterable[str], max_chars: int) -> str | None:
    """The opening lines of the first candidate file at `rev`, or None if there is none."""
    for path in candidates:
        try:
            text = read_file_at(repo, rev, path, what="goals file")
        except UserError as exc:  # too large or not a plain file: say so, do not fail
            return f"({path} could not be read: {exc})\n"
        if text is not None:
            head = "\n".join(text.splitlines()[:MAX_GOAL_LINES])
            return head[:max_chars] + "\n"
    return None


def coupling(changed: Sequence[str], graph: ImportGraph, max_chars: int) -> str:
    """Each changed file's import links and its most connected neighbours, hubs first."""
    changed_set = set(changed)
    lines: list[str] = []
    used = 0
    order = sorted(changed, key=lambda path: (-graph.degree(path), path))
    for count, path in enumerate(order):
        neighbours = sorted(graph.neighbours(path), key=lambda n: (-graph.degree(n), n))
        named = ", ".join(
            f"{n} ({graph.degree(n)} links{', changed' if n in changed_set else ''})"
            for n in neighbours[:MAX_NEIGHBOURS]
        )
        line = f"{path}: {graph.degree(path)} import link(s)"
        line += f"; most connected: {named}\n" if named else "\n"
        if used + len(line) > max_chars:
            lines.append(f"... {len(order) - count} more changed file(s) omitted\n")
            break
        lines.append(line)
        used += len(line)
    return "".join(lines) or "(no changed files)\n"


def _prompt_files(paths: Sequence[str], changed: set[str]) -> str:
    """Prompt and governance files at the head, plus deleted ones, each marked if changed."""
    found = [p for p in {*paths, *changed} if is_prompt_file(p)]
    if not found:
        return "(none in this repository)\n"
    return "".join(f"{p}{' (changed)' if p in changed else ''}\n" for p in sorted(found))


def is_prompt_file(path: str) -> bool:
    """`prompts/*.md` anywhere, or anything under `.github/ourobot/` (prompt overrides, the
    constitution, the config)."""
    parts = path.split("/")
    in_prompts = len(parts) >= 2 and parts[-2] == "prompts" and path.endswith(".md")
    return in_prompts or path.startswith((f"{PROMPT_OVERRIDE_DIR}/", ".github/ourobot"))


def build_scope_prompt(
    repo: Path,
    change: Change,
    *,
    selection: DiffSelection,
    ticket: str | None,
    project_name: str,
    project_description: str,
    max_chars: int,
    secrets: Iterable[str] = (),
) -> ReviewPrompt:
    """The scope reviewer's prompt: role from `prompts/scope-reviewer.md` (or the repo's
    override at the base), the map as fenced data. `selection` is the panel's, for the
    result's record of what the panel saw. Raises `UserError` for an unusable policy file."""
    secret_values = tuple(secrets)
    base = change.base_sha
    override_path = f"{PROMPT_OVERRIDE_DIR}/{SCOPE_TEMPLATE_NAME}.md"
    override = read_file_at(repo, base, override_path, what="prompt override")
    template = load_template(SCOPE_TEMPLATE_NAME, override, source=f"{base[:12]}:{override_path}")
    system = render(
        template,
        {
            "PROJECT_NAME": Untrusted("project-name", project_name or "(unnamed)", "line"),
            "PROJECT_DESCRIPTION": Untrusted(
                "project-description", project_description or "(no description)", "line"
            ),
        },
        secrets=secret_values,
    )
    repo_map = read_repo_map(repo, change, max_chars=max_chars)
    user = render(SCOPE_USER_TEMPLATE, _map_values(change, repo_map, ticket), secrets=secret_values)
    return ReviewPrompt(system=system, user=user, selection=selection)


def _map_values(
    change: Change, repo_map: RepoMap, ticket: str | None
) -> dict[str, str | Untrusted]:
    def goal(label: str, text: str | None, missing: str) -> str | Untrusted:
        return Untrusted(label, text) if text is not None else missing

    return {
        "BASE": change.base_sha,
        "HEAD": change.head_sha,
        "TICKET": (
            Untrusted("ticket", ticket)
            if ticket is not None and ticket.strip()
            else "(No ticket was given: judge the change on its own purpose.)"
        ),
        "CHANGED": Untrusted("changed-files", repo_map.changed, "code"),
        "TREE": Untrusted("tree", repo_map.tree, "code"),
        "README": goal("readme", repo_map.readme, "(This repository has no README.)"),
        "CONSTITUTION": goal(
            "constitution", repo_map.constitution, "(This project has no constitution file.)"
        ),
        "COUPLING": Untrusted("coupling", repo_map.coupling, "code"),
        "PROMPTS": Untrusted("prompt-files", repo_map.prompts, "code"),
    }
