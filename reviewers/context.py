"""What a reviewer sees: the ticket, the constitution and the diff, bounded and fenced.

The diff is bounded by `review.max_diff_chars`: changed files are taken in connectivity order
(the most connected first, each followed by the changed files it links to), whole where they
fit, hunk by hunk where only part fits; everything left out is listed by path and line range,
in the prompt and in the result. A large diff is reviewed in part and says so; it is never cut
silently. The constitution is always whole. All of it is untrusted data: fenced, stripped of
hidden content, secrets redacted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from reviewers.connectivity import ImportGraph, connectivity_order
from reviewers.diff import FileDiff, Hunk, file_heading
from reviewers.obligations import Obligation
from reviewers.prompts import Template, Untrusted, render

MAX_LINKED_NAMES = 5

USER_TEMPLATE = Template(
    name="reviewer-input",
    source="reviewers/context.py",
    text="""\
Review this change (base {{BASE}}, head {{HEAD}}).

## Ticket

{{TICKET}}

## Diff

{{DIFF_SUMMARY}}

{{DIFF}}

## Not shown

{{OMITTED}}

## Open obligations from earlier rounds

{{OBLIGATIONS}}

Answer in the output format of your instructions; your last line is the verdict.
""",
)


@dataclass(frozen=True)
class Omission:
    """Part of the diff the reviewer did not see."""

    path: str
    what: str  # "whole file" or "new lines 120-180, 300-320"
    chars: int

    def describe(self) -> str:
        return f"{self.path}: {self.what} ({self.chars:,} characters)"


@dataclass(frozen=True)
class DiffSelection:
    text: str
    shown: tuple[str, ...]  # files shown whole
    partial: tuple[str, ...]  # files shown in part
    omitted: tuple[Omission, ...]
    total_chars: int
    shown_chars: int
    limit: int
    file_count: int

    def summary(self) -> str:
        whole_or_part = len(self.shown) + len(self.partial)
        return (
            f"{len(self.shown)} of {self.file_count} changed files shown in full, "
            f"{len(self.partial)} in part, {self.file_count - whole_or_part} not at all: "
            f"{self.shown_chars:,} of {self.total_chars:,} characters "
            f"(the review budget is {self.limit:,})."
        )


@dataclass(frozen=True)
class ReviewInputs:
    """Everything a review is about, read at trigger time."""

    base_sha: str
    head_sha: str
    files: Sequence[FileDiff]
    graph: ImportGraph
    ticket: str | None = None
    constitution: str | None = None
    project_name: str = ""
    project_description: str = ""
    # The open obligations of earlier rounds on this pull request, to be answered one by one.
    obligations: tuple[Obligation, ...] = ()


@dataclass(frozen=True)
class ReviewPrompt:
    """The rendered prompt every panel member gets, and what it left out."""

    system: str
    user: str
    selection: DiffSelection
    # The id of every obligation the prompt lists, and whether it blocks: each answer must
    # name exactly these.
    asked: Mapping[str, bool] = field(default_factory=dict)

    def chars(self) -> int:
        return len(self.system) + len(self.user)


def build_review_prompt(
    inputs: ReviewInputs,
    *,
    template: Template,
    max_diff_chars: int,
    secrets: Iterable[str] = (),
) -> ReviewPrompt:
    """The reviewer's system prompt (role, rules, constitution) and input message."""
    secret_values = tuple(secrets)
    selection = select_diff(inputs.files, inputs.graph, max_diff_chars)
    constitution: str | Untrusted = "(This project has no constitution file.)"
    if inputs.constitution is not None:
        constitution = Untrusted("constitution", inputs.constitution)
    system = render(
        template,
        {
            "PROJECT_NAME": Untrusted("project-name", inputs.project_name or "(unnamed)", "line"),
            "PROJECT_DESCRIPTION": Untrusted(
                "project-description", inputs.project_description or "(no description)", "line"
            ),
            "CONSTITUTION": constitution,
        },
        secrets=secret_values,
    )
    ticket: str | Untrusted = "(No ticket was given: judge the change on its own purpose.)"
    if inputs.ticket is not None and inputs.ticket.strip():
        ticket = Untrusted("ticket", inputs.ticket)
    omitted: str | Untrusted = "Nothing: the whole diff is shown above."
    if selection.omitted:
        listing = "\n".join(omission.describe() for omission in selection.omitted)
        omitted = Untrusted("omitted", listing + "\n", "code")
    user = render(
        USER_TEMPLATE,
        {
            "BASE": inputs.base_sha,
            "HEAD": inputs.head_sha,
            "TICKET": ticket,
            "DIFF_SUMMARY": selection.summary(),
            "DIFF": Untrusted("diff", selection.text, "code"),
            "OMITTED": omitted,
            "OBLIGATIONS": _obligations(inputs.obligations),
        },
        secrets=secret_values,
    )
    asked = {item.id: item.blocking for item in inputs.obligations}
    return ReviewPrompt(system=system, user=user, selection=selection, asked=asked)


def _obligations(obligations: Sequence[Obligation]) -> str | Untrusted:
    """The open obligations, fenced: their reasons are an earlier model's words."""
    if not obligations:
        return "None: this is the first round, or every earlier finding was resolved."
    listing = "\n".join(item.describe() for item in obligations) + "\n"
    return Untrusted("obligations", listing, "code")


def select_diff(files: Sequence[FileDiff], graph: ImportGraph, max_chars: int) -> DiffSelection:
    """The diff in connectivity order within `max_chars`, and what did not fit."""
    by_path = {diff.path: diff for diff in files}
    changed = list(by_path)
    order = connectivity_order(changed, graph)
    budget = max_chars
    blocks: list[str] = []
    shown: list[str] = []
    partial: list[str] = []
    omitted: list[Omission] = []
    total = 0
    for path in order:
        diff = by_path[path]
        heading = file_heading(diff, _links_note(path, graph, set(changed)))
        whole = heading + "".join(hunk.render() for hunk in diff.hunks)
        total += len(whole)
        if len(whole) <= budget:
            blocks.append(whole)
            shown.append(path)
            budget -= len(whole)
            continue
        block, left_out = _partial(diff, heading, budget)
        if block:
            blocks.append(block)
            partial.append(path)
            budget -= len(block)
            omitted.append(left_out)
        else:
            omitted.append(Omission(path, "whole file", len(whole)))
    text = "\n".join(blocks)
    return DiffSelection(
        text=text,
        shown=tuple(shown),
        partial=tuple(partial),
        omitted=tuple(omitted),
        total_chars=total,
        shown_chars=sum(len(block) for block in blocks),
        limit=max_chars,
        file_count=len(order),
    )


def _partial(diff: FileDiff, heading: str, budget: int) -> tuple[str, Omission]:
    """The hunks of `diff` that fit in `budget` (in file order), and the ones that did not."""
    note = "partly shown; see 'Not shown'"
    head = heading.replace(" ===\n", f"; {note} ===\n", 1)
    room = budget - len(head)
    kept: list[str] = []
    dropped: list[Hunk] = []
    for hunk in diff.hunks:
        text = hunk.render()
        if len(text) <= room:
            kept.append(text)
            room -= len(text)
        else:
            dropped.append(hunk)
    if not kept:
        return "", Omission(diff.path, "whole file", 0)
    ranges = ", ".join(_range(hunk) for hunk in dropped)
    chars = sum(len(hunk.render()) for hunk in dropped)
    return head + "".join(kept), Omission(diff.path, f"hunks at new lines {ranges}", chars)


def _range(hunk: Hunk) -> str:
    first, last = hunk.new_range
    return str(first) if first == last else f"{first}-{last}"


def _links_note(path: str, graph: ImportGraph, changed: set[str]) -> str:
    degree = graph.degree(path)
    if not degree:
        return ""
    linked = sorted(graph.neighbours(path) & changed)
    note = f"linked by imports to {degree} file{'s' if degree != 1 else ''}"
    if linked:
        names = ", ".join(linked[:MAX_LINKED_NAMES])
        more = (
            f" and {len(linked) - MAX_LINKED_NAMES} more" if len(linked) > MAX_LINKED_NAMES else ""
        )
        note += f", among them changed: {names}{more}"
    return note
