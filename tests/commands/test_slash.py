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


@pytest.mark.parametrize(
    "body",
    [
        # a line with an info string does not close a fence: the rest is code
        "```\nsome code\n```python\n/ourobot merge\n",
        "~~~\n~~~ sh\n/ourobot merge\n",
        # a quote continues lazily onto an unmarked line
        "> I would not run\n/ourobot merge",
        "> > nested\nlazy\n/ourobot merge",
        # HTML blocks render as HTML, not as a paragraph
        "<pre>\n/ourobot merge\n</pre>",
        "<details>\n/ourobot merge\n</details>",
        "<div>\n\n</div>\n<pre>\n\n/ourobot merge\n\n</pre>",
        "see <code>\n/ourobot merge\n</code>",
        # other blocks than a paragraph of the document
        "- /ourobot merge",
        "1. text\n\n   /ourobot merge",
        "# /ourobot merge",
        "| a |\n|---|\n| /ourobot merge |",
        "/ourobot merge\n===",
        # markup on the line
        "/ourobot merge <!-- x -->",
        "[/ourobot merge](https://example.com)",
        "*/ourobot merge*",
    ],
)
def test_commands_github_does_not_render_as_a_paragraph_do_not_count(body):
    assert parse_commands(body) == []


@pytest.mark.parametrize(
    ("body", "found"),
    [
        # a fence closed by a plain fence line: the command after it is a paragraph
        ("```python\n/ourobot merge\n```\n/ourobot status", [("status", 4)]),
        # a quote ends at a blank line
        ("> quoted\n\n/ourobot review", [("review", 3)]),
        # a line of a paragraph, after text on the line above
        ("LGTM, thanks\n/ourobot merge", [("merge", 2)]),
        # an HTML comment block ends, the paragraph after it counts
        ("<!-- note -->\n\n/ourobot hold", [("hold", 3)]),
        # indented up to three spaces is still a paragraph
        ("   /ourobot plan", [("plan", 1)]),
        # a <pre> closed before the paragraph, and an escaped slash GitHub shows as a slash
        ("<pre>x</pre>\n\n/ourobot status", [("status", 3)]),
        ("\\/ourobot review", [("review", 1)]),
        ("a\r\n\r\n/ourobot fix x\r\n", [("fix", 3)]),
    ],
)
def test_commands_in_paragraphs_count_with_their_line(body, found):
    assert [(c.verb, c.line) for c in parse_commands(body)] == found
