"""The contract between the App and a repository's ourobot workflow (`implementer.runs_on:
actions`): what the App sends the run, what the run sends back, and what the App accepts.

The App to the run: a `workflow_dispatch` of `implementer.workflow` on the default branch with
two inputs, and never any text of the issue (the run reads the issue from GitHub itself):

    ticket    the issue's number (digits)
    run_key   the App's key for this cycle (`RUN_KEY`: letters, digits and `:._-`)

GitHub answers the dispatch with the run's id (API version 2026-03-10), which the App keeps.

The run to the App: it pushes `ourobot/issue-<ticket>` with its own token when the cycle made a
commit, and reports with one check run named `ourobot/cycle` on the branch's head (on the base
commit when there is none), created in progress and then completed, so GitHub sends
`check_run.completed` to the App. Its `external_id` is the run key, its `details_url` the run's
page, its summary says what happened in words, and its `output.text` carries the report: a
hidden marker holding JSON (`report_text`), read by `parse_report` as data and nothing else.

What the App accepts (`refusal`): a check run of GitHub Actions (the workflow's token) or of
the App itself, named `ourobot/cycle`, whose run key is a run the App dispatched and is still
waiting for; a report naming that run key, that ticket, the branch `ourobot/issue-<ticket>`
and the run GitHub started for the dispatch; when it names a head commit, the check run is on
that commit and the branch's head on GitHub is that commit. Anything else is refused, and the
ticket keeps waiting for a report it can accept (or its timeout).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from app.gate.checks import CYCLE_CHECK
from app.workspace.branches import BOT_BRANCH_PREFIX
from app.workspace.git import is_object_id

CHECK_NAME = CYCLE_CHECK  # never counted as CI by the merge gate
ACTIONS_APP_SLUG = "github-actions"  # GitHub's own App: a workflow's GITHUB_TOKEN acts as it
RUN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._-]{0,199}")
INPUT_TICKET, INPUT_RUN_KEY = "ticket", "run_key"
REPORT_VERSION = 1
_MARK = "<!-- ourobot:cycle-report "
_END = " -->"
MAX_REPORT_CHARS = 60_000  # GitHub keeps at most 65,535 characters of a check run's text
OUTCOMES = ("ready", "blocked", "satisfied")
EXECUTIONS = ("ok", "error", "timeout", "budget", "infra")
OBJECTIVES = ("met", "unmet", "unknown")
Conclusion = Literal["success", "neutral", "failure"]
CONCLUSIONS: dict[str, Conclusion] = {
    "ready": "success",
    "satisfied": "neutral",
    "blocked": "failure",
}
MAX_TEXT = 4000
MAX_ITEMS = 60


class ReportError(ValueError):
    """A report that cannot be read as one; `str()` says why, in one line."""


def branch_for(number: int) -> str:
    return f"{BOT_BRANCH_PREFIX}issue-{number}"


def valid_run_key(value: object) -> bool:
    return isinstance(value, str) and RUN_KEY.fullmatch(value) is not None


def dispatch_inputs(number: int, run_key: str) -> dict[str, str]:
    """The dispatch's inputs: a number and a key of a fixed alphabet, nothing from the issue."""
    if not valid_run_key(run_key) or number < 1:
        raise ValueError(f"not a dispatchable ticket: #{number} {run_key!r}")
    return {INPUT_TICKET: str(number), INPUT_RUN_KEY: run_key}


def read_inputs(inputs: object) -> tuple[int, str]:
    """(ticket, run key) from a `workflow_dispatch` event's inputs; ReportError when they are
    not what the App sends."""
    if not isinstance(inputs, dict):
        raise ReportError("the workflow_dispatch event has no inputs")
    ticket, run_key = inputs.get(INPUT_TICKET), inputs.get(INPUT_RUN_KEY)
    text = str(ticket) if isinstance(ticket, int | str) and not isinstance(ticket, bool) else ""
    if not text.isdigit() or int(text) < 1:
        raise ReportError(f"input `{INPUT_TICKET}` must be an issue number, got {ticket!r}")
    if not valid_run_key(run_key):
        raise ReportError(f"input `{INPUT_RUN_KEY}` is missing or not a run key")
    return int(text), str(run_key)


@dataclass(frozen=True)
class Report:
    """What a run says it did: the run key, ticket, branch and run, and the cycle's summary in
    the shape the ticket job keeps (`app.jobs.ticket_cycle.summarize`)."""

    run_key: str
    ticket: int
    branch: str
    run_id: int | None
    summary: dict[str, Any]

    @property
    def outcome(self) -> str:
        return str(self.summary["outcome"])

    @property
    def head_sha(self) -> str | None:
        head = self.summary.get("head_sha")
        return head if isinstance(head, str) else None


def report_text(report: Report) -> str:
    """The check run's `output.text`: the report's JSON behind a hidden marker, cut to fit."""
    summary = dict(report.summary)
    document = {
        "version": REPORT_VERSION,
        "run_key": report.run_key,
        "ticket": report.ticket,
        "branch": report.branch,
        "run_id": report.run_id,
        "summary": summary,
    }
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=True)
    while len(text) > MAX_REPORT_CHARS and (summary.get("plan") or summary.get("iterations")):
        if summary.get("plan"):
            summary["plan"] = None
        else:
            summary["iterations"] = list(summary["iterations"])[: len(summary["iterations"]) // 2]
        text = json.dumps(document, separators=(",", ":"), ensure_ascii=True)
    # ensure_ascii: no character of the JSON can end the HTML comment it sits in.
    return _MARK + text.replace("--", "-\\u002d") + _END


def parse_report(text: object) -> Report:
    """The report in a check run's `output.text`; ReportError naming what is wrong."""
    if not isinstance(text, str) or _MARK not in text:
        raise ReportError("the check run carries no ourobot report")
    body = text.split(_MARK, 1)[1]
    if _END not in body:
        raise ReportError("the report's marker is not closed")
    try:
        data = json.loads(body.split(_END, 1)[0])
    except ValueError:
        raise ReportError("the report is not JSON") from None
    if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
        raise ReportError(f"the report is not version {REPORT_VERSION}")
    run_key, ticket, branch = data.get("run_key"), data.get("ticket"), data.get("branch")
    run_id = data.get("run_id")
    if not valid_run_key(run_key):
        raise ReportError("the report's run_key is not a run key")
    if type(ticket) is not int or ticket < 1:
        raise ReportError("the report's ticket is not an issue number")
    if not isinstance(branch, str):
        raise ReportError("the report names no branch")
    if run_id is not None and type(run_id) is not int:
        raise ReportError("the report's run_id is not a number")
    return Report(str(run_key), ticket, branch, run_id, _summary(data.get("summary")))


def _summary(raw: object) -> dict[str, Any]:
    """The summary's fields, each of its type and bounded; unknown fields are dropped."""
    if not isinstance(raw, dict):
        raise ReportError("the report has no summary")
    out: dict[str, Any] = {
        "outcome": _choice(raw, "outcome", OUTCOMES),
        "execution": _choice(raw, "execution", EXECUTIONS),
        "objective": _choice(raw, "objective", OBJECTIVES),
        "reason": _text(raw, "reason") or "",
        "title": _text(raw, "title") or "",
        "ticket_key": _text(raw, "ticket_key"),
        "plan": _text(raw, "plan"),
        "tests": _text(raw, "tests"),
        "baseline": _text(raw, "baseline"),
        "error_class": _text(raw, "error_class"),
        "notes": _texts(raw, "notes"),
        "measured": _texts(raw, "measured"),
        "model_calls": _count(raw, "model_calls"),
        "cost_micro_usd": _count(raw, "cost_micro_usd"),
        "iterations": _iterations(raw.get("iterations")),
    }
    for field in ("head_sha", "base_sha"):
        sha = raw.get(field)
        if sha is not None and not (isinstance(sha, str) and is_object_id(sha)):
            raise ReportError(f"the report's {field} is not a commit id")
        out[field] = sha
    if out["outcome"] == "ready" and out["head_sha"] is None:
        raise ReportError("a ready report names no head commit")
    return out


def _choice(raw: dict[str, Any], field: str, allowed: tuple[str, ...]) -> str:
    value = raw.get(field)
    if value not in allowed:
        raise ReportError(f"the report's {field} is not one of {', '.join(allowed)}")
    return str(value)


def _text(raw: dict[str, Any], field: str) -> str | None:
    value = raw.get(field)
    if value is None:
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ReportError(f"the report's {field} is not text")
    return str(value)[:MAX_TEXT]


def _texts(raw: dict[str, Any], field: str) -> list[str]:
    value = raw.get(field) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ReportError(f"the report's {field} is not a list of text")
    return [item[:MAX_TEXT] for item in value[:MAX_ITEMS]]


def _count(raw: dict[str, Any], field: str) -> int:
    value = raw.get(field) or 0
    if type(value) is not int or value < 0:
        raise ReportError(f"the report's {field} is not a count")
    return value


def _iterations(raw: object) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ReportError("the report's iterations are not a list")
    rows = []
    for item in raw[:MAX_ITEMS]:
        if not isinstance(item, dict) or type(item.get("number")) is not int:
            raise ReportError("an iteration of the report is not one")
        rows.append(
            {
                "number": item["number"],
                "phase": _text(item, "phase") or "",
                "edits": _texts(item, "edits"),
                "refusals": _texts(item, "refusals"),
                "tests": _text(item, "tests"),
            }
        )
    return rows


# ----- what the App accepts ---------------------------------------------------------------------
@dataclass(frozen=True)
class Dispatched:
    """What the App kept of its dispatch (in the cycle's record)."""

    number: int
    run_key: str
    run_id: int | None


@dataclass(frozen=True)
class CheckSeen:
    """The check run as GitHub answers for it, and the branch's head GitHub has."""

    name: str
    app_slug: str
    app_id: int | None
    external_id: str
    head_sha: str
    status: str


def refusal(
    report: Report,
    *,
    dispatched: Dispatched,
    check: CheckSeen,
    own_app_id: int | None,
    branch_head: str | None,
) -> str | None:
    """Why the report is refused, in one line; None when the App accepts it."""
    if check.name != CHECK_NAME or check.status != "completed":
        return f"the check run is not a completed {CHECK_NAME}"
    ours = own_app_id is not None and check.app_id == own_app_id
    if check.app_slug != ACTIONS_APP_SLUG and not ours:
        return f"the check run was made by the App {check.app_slug!r}, not by a workflow"
    if check.external_id != dispatched.run_key or report.run_key != dispatched.run_key:
        return "the report is not about the run the App dispatched"
    if report.ticket != dispatched.number:
        return f"the report is about #{report.ticket}, not #{dispatched.number}"
    expected = branch_for(dispatched.number)
    if report.branch != expected:
        return f"the report names another branch than {expected}"  # its text is not echoed
    if dispatched.run_id is not None and report.run_id != dispatched.run_id:
        return f"the report comes from run {report.run_id}, not run {dispatched.run_id}"
    head = report.head_sha
    if head is None:
        return None
    if check.head_sha != head:
        return f"the report names {head[:12]} but the check run is on {check.head_sha[:12]}"
    if branch_head != head:
        where = branch_head[:12] if branch_head else "nowhere"
        return f"the branch {expected} is at {where}, not at the reported {head[:12]}"
    return None
