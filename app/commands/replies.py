"""What ourobot says in threads: help, refusals, "not available yet". Text only, no I/O."""

from __future__ import annotations

from app.commands.slash import VERB_PERMISSIONS, Permission, SlashCommand

# Verbs whose loops have landed; every other verb answers "not available yet", never silence.
AVAILABLE_VERBS = frozenset(
    {"help", "status", "budget", "review", "merge", "hold", "unhold", "override", "revert"}
)

VERB_HELP = {
    "implement": "work this issue as a ticket and open a pull request",
    "plan": "write an advisory plan for this ticket",
    "review": "run the review panel on this pull request's head",
    "fix": "ask the implementer to address the last review",
    "merge": "merge once every gate passes on the same head commit",
    "hold": "stop the merge gate on this pull request",
    "unhold": "lift a hold",
    "override": "`override <guards|review> <reason>`: accept that check's finding on this head",
    "revert": "open a pull request reverting this merged one (it goes through every gate)",
    "scout": "propose new tickets (labeled `ourobot:proposed`)",
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


def ticket_not_available() -> str:
    return (
        "This issue is labeled `ourobot:ticket`, but the implementer is not available yet in "
        "this version of ourobot. Nothing was done."
    )
