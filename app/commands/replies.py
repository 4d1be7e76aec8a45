"""What ourobot says in threads: help, refusals, "not available yet". Text only, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.commands.slash import VERB_PERMISSIONS, Permission, SlashCommand

# Verbs whose loops have landed; every other verb answers "not available yet", never silence.
AVAILABLE_VERBS = frozenset(
    {
        "help",
        "status",
        "budget",
        "review",
        "merge",
        "hold",
        "unhold",
        "override",
        "revert",
        "plan",
        "scout",
        "implement",
        "fix",
    }
)

VERB_HELP = {
    "implement": "work this issue as a ticket and open a pull request",
    "plan": "post the planner's advisory plan for this issue (nothing is implemented)",
    "review": "run the review panel on this pull request's head",
    "fix": "ask the implementer to address the last review",
    "merge": "merge once every gate passes on the same head commit",
    "hold": "stop the merge gate on this pull request",
    "unhold": "lift a hold",
    "override": "`override <guards|review> <reason>`: accept that check's finding on this head",
    "revert": "open a pull request reverting this merged one (it goes through every gate)",
    "scout": "propose 3 to 8 new tickets (labeled `ourobot:proposed`; a maintainer admits them)",
    "status": "show what ourobot knows about this thread",
    "budget": "show this ticket's spend against its budget and today's against the daily cap",
    "panic": "stop all ourobot work on this installation at once",
    "resume": "lift a panic",
    "help": "this list",
}


def help_text() -> str:
    rows = [
        f"| `/ourobot {verb}` | {VERB_HELP[verb]} | {VERB_PERMISSIONS[verb].name.lower()} |"
        for verb in VERB_HELP
    ]
    return "\n".join(
        [
            "**ourobot commands** (one per line, outside quotes and code blocks):",
            "",
            "| command | what it does | needs |",
            "| --- | --- | --- |",
            *rows,
        ]
    )


def refusal(login: str, command: SlashCommand, permission: Permission) -> str:
    return (
        f"@{login}, `/ourobot {command.verb}` needs **{command.min_permission.name.lower()}** "
        f"permission on this repository, and you have **{permission.name.lower()}**. "
        "Nothing was done."
    )


def unknown(login: str, command: SlashCommand) -> str:
    return f"@{login}, I don't know `/ourobot {command.verb}`. Nothing was done.\n\n{help_text()}"


def not_available(command: SlashCommand) -> str:
    return (
        f"`/ourobot {command.verb}` is not available yet in this version of ourobot. "
        "Nothing was done."
    )


def ticket_refused(login: str, permission: Permission) -> str:
    return (
        f"@{login}, the `ourobot:ticket` label admits an issue only when a person with "
        f"**write** permission adds it, and you have **{permission.name.lower()}**. "
        "Nothing was done."
    )


def ticket_busy(login: str) -> str:
    return (
        f"@{login} asked again: this ticket is already in progress. One cycle works a ticket "
        "at a time; nothing new was started."
    )


def ticket_working(branch: str) -> str:
    return (
        f"Working on this ticket on `{branch}`: implementing, then running the tests in a "
        "sandbox. This comment is updated when the cycle ends."
    )


def ticket_dispatching(workflow: str, branch: str) -> str:
    return (
        f"Working on this ticket on this repository's Actions runner: starting `{workflow}`, "
        f"which works on `{branch}` and reports back. This comment is updated when it does."
    )


def ticket_dispatched(workflow: str, branch: str, run_url: str | None) -> str:
    run = f"[its run]({run_url})" if run_url else "its run"
    return (
        f"Working on this ticket on this repository's Actions runner: `{workflow}` started "
        f"({run}); it works on `{branch}` and reports back. This comment is updated when it "
        "does."
    )


def ticket_has_pull(number: int) -> str:
    return (
        f"This ticket already has pull request #{number}. Nothing new was started; "
        "`/ourobot fix` there asks for changes."
    )


def ticket_cap_cycles(started: int, cap: int) -> str:
    return (
        f"Not started: {started} cycle(s) started in this repository in the last hour, and "
        f"`loop.cycles_per_hour` is {cap}. Label the issue again (or `/ourobot implement`) "
        "later."
    )


def ticket_cap_pulls(count: int, cap: int) -> str:
    return (
        f"Not started: ourobot has {count} open pull request(s) here, and `loop.max_open_prs` "
        f"is {cap}. Merge or close one, then label the issue again (or `/ourobot implement`)."
    )


def ticket_bad_config(problem: str) -> str:
    return f"Not started: the repository's config at the base branch is invalid: {problem}"


def ticket_light_mode() -> str:
    return (
        "Not started: this repository runs ourobot in `light` mode, which reviews and never "
        "pushes code. Set `mode: advanced` in `.github/ourobot.yml` to let it implement tickets."
    )


def ticket_pull_opened(number: int, branch: str, summary: Mapping[str, Any]) -> str:
    return (
        f"Opened pull request #{number} from `{branch}` after "
        f"{len(summary.get('iterations') or [])} iteration(s); tests {summary.get('tests')}. "
        "The guards and the review panel check its head; a person merges it."
    )


def ticket_blocked(outcome: str, reason: str, kept: str | None) -> str:
    if outcome == "satisfied":
        return f"Nothing to do: the implementer found the ticket already satisfied ({reason})."
    branch = f" The branch `{kept}` is kept for you to look at." if kept else ""
    return f"Blocked: {reason}.{branch} Nothing was opened."


def fix_needs_human(rounds: int, findings: str) -> str:
    return (
        f"Needs a human: the review still fails after {rounds} fix round(s). The last "
        f"findings:\n\n{findings}"
    )
