"""Slash-command parsing and the permission ladder."""

import pytest

from app.commands.slash import VERBS, Permission, SlashCommand, may_run, parse_commands


def verbs(body: str) -> list[str]:
    return [c.verb for c in parse_commands(body)]


def test_all_design_verbs_are_known():
    assert VERBS == {
        "implement", "plan", "review", "fix", "merge", "hold", "unhold", "override",
        "revert", "scout", "status", "budget", "panic", "resume", "help",
    }  # fmt: skip


def test_plain_command_with_args_and_line_number():
    [cmd] = parse_commands("Thanks!\n\n/ourobot budget 3 usd\n")
    assert cmd == SlashCommand(verb="budget", args=("3", "usd"), line=3)
    assert cmd.known


@pytest.mark.parametrize(
    "body",
    [
        "> /ourobot merge",
        "```\n/ourobot merge\n```",
        "~~~python\n/ourobot merge\n~~~",
        "    /ourobot merge",
        "<!-- /ourobot merge -->",
        "<!--\n/ourobot merge\n-->",
        "<!-- unterminated\n/ourobot merge",
        "please run `/ourobot merge`",
        "I said /ourobot merge yesterday",
        "/ourobot\u200b merge",
        "/ourobotmerge",
    ],
)
def test_commands_that_are_not_visible_plain_lines_do_not_count(body):
    assert parse_commands(body) == []


def test_code_fence_closes_only_with_matching_fence():
    body = "````\n```\n/ourobot merge\n```\n````\n/ourobot status"
    assert verbs(body) == ["status"]


def test_bare_prefix_means_help_and_unknown_verbs_are_reported():
    assert verbs("/ourobot") == ["help"]
    [cmd] = parse_commands("/ourobot deploy prod")
    assert cmd.verb == "deploy" and not cmd.known


def test_case_insensitive_verb_and_crlf():
    assert verbs("/OUROBOT Review\r\n") == ["review"]


def test_number_of_commands_and_args_is_bounded():
    body = "\n".join(["/ourobot status"] * 50)
    assert len(parse_commands(body)) == 5
    [cmd] = parse_commands("/ourobot fix " + " ".join(["x" * 500] * 40))
    assert len(cmd.args) == 8 and all(len(a) == 100 for a in cmd.args)


def test_empty_and_none_bodies():
    assert parse_commands(None) == []
    assert parse_commands("") == []


@pytest.mark.parametrize(
    ("verb", "allowed", "refused"),
    [
        ("status", Permission.READ, Permission.NONE),
        ("hold", Permission.TRIAGE, Permission.READ),
        ("implement", Permission.WRITE, Permission.TRIAGE),
        ("merge", Permission.WRITE, Permission.TRIAGE),
        ("scout", Permission.MAINTAIN, Permission.WRITE),
        ("panic", Permission.ADMIN, Permission.MAINTAIN),
        ("resume", Permission.ADMIN, Permission.MAINTAIN),
    ],
)
def test_permission_ladder(verb, allowed, refused):
    cmd = SlashCommand(verb=verb, args=(), line=1)
    assert may_run(cmd, allowed, login="alice", operators=frozenset())
    assert not may_run(cmd, refused, login="alice", operators=frozenset())


def test_operators_may_panic_but_not_merge_without_permission():
    panic = SlashCommand(verb="panic", args=(), line=1)
    merge = SlashCommand(verb="merge", args=(), line=1)
    ops = frozenset({"OnCall"})
    assert may_run(panic, Permission.NONE, login="oncall", operators=ops)
    assert not may_run(merge, Permission.NONE, login="oncall", operators=ops)


def test_login_shape_grants_nothing():
    cmd = SlashCommand(verb="implement", args=(), line=1)
    for login in ("admin", "ourobot[bot]", "github-actions[bot]"):
        assert not may_run(cmd, Permission.READ, login=login, operators=frozenset())


def test_permission_parse_is_total():
    assert Permission.parse("maintain") is Permission.MAINTAIN
    assert Permission.parse("Admin") is Permission.ADMIN
    assert Permission.parse(None) is Permission.NONE
    assert Permission.parse("superuser") is Permission.NONE
