"""The conditions read from check runs and commit statuses on the head SHA H: `ci`, `guards`
and `review`.

`guards` and `review` trust only ourobot's own App: the latest check run of that name on H must
have concluded success and been created by the App whose id the state names. A commit status of
that name, or another App's run, can never satisfy them (anyone with write access can post a
status with any context; any installed App can name a run anything).

`ci` is everything else: the names `merge.required_checks` lists, else the names branch
protection requires, else every check run and status on H that is not ourobot's own. Each must
be present and successful; no CI at all is not green unless the config says
`required_checks: []`. ourobot's own check names are never part of `ci`: they are conditions of
their own, and `ourobot/gate` is this decision.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.gate.latest import Keyed
from app.gate.state import Field, Malformed
from app.gate.verdict import Verdict, short

GUARDS_CHECK = "ourobot/guards"
REVIEW_CHECK = "ourobot/review"
GATE_CHECK = "ourobot/gate"
# The report of a cycle run on the repository's own Actions runner (`implementer.runs_on:
# actions`): made with the workflow's token, so by GitHub Actions' App, on the pull request's
# head. It says what the cycle measured; it is not CI.
CYCLE_CHECK = "ourobot/cycle"
OUROBOT_CHECKS = (GUARDS_CHECK, REVIEW_CHECK, GATE_CHECK, CYCLE_CHECK)

RUN_STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CONCLUSIONS = (
    "success",
    "failure",
    "neutral",
    "cancelled",
    "skipped",
    "timed_out",
    "action_required",
    "stale",
)
STATUS_STATES = ("success", "failure", "error", "pending")


class Checks:
    """The state's check runs and statuses on H, grouped by name; entries provably on other
    commits are dropped unread. Each list is read when first used, so a broken `statuses`
    fails only the conditions that read statuses."""

    def __init__(self, root: Field, head: str) -> None:
        self.root = root
        self.head = head
        self._runs: Keyed | None = None
        self._statuses: Keyed | None = None

    @property
    def runs(self) -> Keyed:
        if self._runs is None:
            self._runs = self._group("check_runs", "check run", "head_sha", "name")
        return self._runs

    @property
    def statuses(self) -> Keyed:
        if self._statuses is None:
            self._statuses = self._group("statuses", "status", "sha", "context")
        return self._statuses

    def _group(self, key: str, what: str, sha_field: str, name_field: str) -> Keyed:
        keyed = Keyed(what)
        for entry in self.root.get(key).items():
            if not _elsewhere(entry, sha_field, self.head):
                keyed.add(entry, name_field)
        return keyed

    def on_head(self, entry: Field) -> bool:
        return entry.get("head_sha").sha() == self.head

    def status_on_head(self, entry: Field) -> bool:
        return entry.get("sha").sha() == self.head


def _elsewhere(entry: Field, sha_field: str, head: str) -> bool:
    """True when the entry provably belongs to another commit."""
    try:
        return entry.get(sha_field).sha() != head
    except Malformed:
        return False


def _run_outcome(run: Field) -> str | None:
    """None when the run completed with success, else what it is (`in_progress`, `failure`)."""
    status = run.get("status").choice(RUN_STATUSES)
    if status != "completed":
        return status
    conclusion = run.get("conclusion")
    if conclusion.present and conclusion.value is None:
        raise Malformed(f"{conclusion.path}: a completed run needs a conclusion, got null")
    value = conclusion.choice(CONCLUSIONS)
    return None if value == "success" else f"concluded {value}"


def _status_outcome(status: Field) -> str | None:
    state = status.get("state").choice(STATUS_STATES)
    return None if state == "success" else state


# ----- guards, review -----------------------------------------------------------------------------
def ourobot_check(root: Field, name: str) -> Verdict:
    head = root.get("pr").get("head_sha").sha()
    app_id = root.get("app_id").integer(minimum=1)
    checks = Checks(root, head)
    run = checks.runs.latest(name, checks.on_head)
    if run is None:
        return Verdict.missing(f"no {name} check run on {short(head)}{_status_note(checks, name)}")
    ident = run.get("id").value
    maker = run.get("app_id").integer(minimum=1)
    if maker != app_id:
        return Verdict.missing(
            f"the latest {name} run on {short(head)} (id {ident}) was created by App {maker}, "
            f"not by ourobot's App {app_id}: another App's run never counts"
        )
    outcome = _run_outcome(run)
    if outcome is not None:
        return Verdict.missing(f"{name} run {ident} on {short(head)} is {outcome}")
    return Verdict.met(f"{name} run {ident} on {short(head)} concluded success (App {app_id})")


def _status_note(checks: Checks, name: str) -> str:
    try:
        spoof = checks.statuses.latest(name, checks.status_on_head)
    except Malformed:
        return ""
    return f" (a commit status named {name} never counts)" if spoof is not None else ""


# ----- ci -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Required:
    """The check names `ci` requires (None: every check on H) and where they come from."""

    names: tuple[str, ...] | None
    source: str


def required_checks(root: Field) -> Required:
    configured = root.get("config").get("merge").get("required_checks")
    if not configured.is_null():
        names = tuple(n for n in configured.names() if n not in OUROBOT_CHECKS)
        return Required(tuple(dict.fromkeys(names)), "merge.required_checks")
    protected = root.get("branch_protection_required_checks")
    if not protected.is_null():
        names = tuple(n for n in protected.names() if n not in OUROBOT_CHECKS)
        if names:
            return Required(tuple(dict.fromkeys(names)), "branch protection")
    return Required(None, "every check on the head")


def ci(root: Field) -> Verdict:
    head = root.get("pr").get("head_sha").sha()
    required = required_checks(root)
    if required.names == ():
        return Verdict.met(f"{required.source} requires no CI besides ourobot's own checks")
    checks = Checks(root, head)
    if required.names is None:
        return _every_check(root, checks)
    problems: list[str] = []
    for name in required.names:
        problem = _required_problem(checks, name)
        if problem is not None:
            problems.append(problem)
    listed = ", ".join(required.names)
    if problems:
        return Verdict.missing(f"{required.source} on {short(head)}: " + "; ".join(problems))
    return Verdict.met(f"{required.source} green on {short(head)}: {listed}")


def _required_problem(checks: Checks, name: str) -> str | None:
    try:
        run = checks.runs.latest(name, checks.on_head)
        status = checks.statuses.latest(name, checks.status_on_head)
        if run is None and status is None:
            return f"{name} not reported"
        outcomes = []
        if run is not None and (outcome := _run_outcome(run)) is not None:
            outcomes.append(f"{name} check run {outcome}")
        if status is not None and (outcome := _status_outcome(status)) is not None:
            outcomes.append(f"{name} status {outcome}")
        return "; ".join(outcomes) or None
    except Malformed as exc:
        return str(exc)


def _every_check(root: Field, checks: Checks) -> Verdict:
    app_id = root.get("app_id").integer(minimum=1)

    def run_counts(entry: Field) -> bool:
        # ourobot's own runs are never CI, whatever they are called.
        return checks.on_head(entry) and entry.get("app_id").integer(minimum=1) != app_id

    problems: list[str] = []
    green: list[str] = []
    sources = (
        ("check run", checks.runs, run_counts, _run_outcome),
        ("status", checks.statuses, checks.status_on_head, _status_outcome),
    )
    for kind, keyed, counts, outcome_of in sources:
        stray = keyed.stray(counts)
        if stray is not None:
            problems.append(str(stray))
        for key in keyed.groups:
            if key in OUROBOT_CHECKS:
                continue
            try:
                latest = keyed.latest(key, counts, mind_unkeyed=stray is None)
                if latest is None:
                    continue
                outcome = outcome_of(latest)
            except Malformed as exc:
                problems.append(str(exc))
                continue
            if outcome is None:
                green.append(key)
            else:
                problems.append(f"{key} {kind} {outcome}")
    head = short(checks.head)
    if problems:
        return Verdict.missing(f"checks on {head}: " + "; ".join(problems))
    if not green:
        return Verdict.missing(
            f"no check run or status on {head} besides ourobot's own: no CI is not green "
            "(merge.required_checks: [] says a repository has none)"
        )
    return Verdict.met(f"every check on {head} green: " + ", ".join(dict.fromkeys(green)))
