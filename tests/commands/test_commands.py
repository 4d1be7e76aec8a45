"""Slash commands from the webhook payload to the reply on GitHub, through the real router,
the real job functions and the sandbox."""

from __future__ import annotations

import pytest

from app.commands.replies import AVAILABLE_VERBS
from app.commands.slash import VERB_PERMISSIONS
from app.controls.halt import Halted, HaltRegistry, installation_scope
from app.handlers.commands import INLINE_VERBS
from app.handlers.router import Router
from app.jobs.registry import Job

pytestmark = pytest.mark.slow


def bot_comments(world, number):
    return [c for c in world.comments(number) if c.user.login == world.sandbox.app.bot_login]


def test_help_is_answered_once_with_eyes_even_when_the_job_runs_twice(world):
    number = world.issue()
    jobs = world.route(world.comment("reader", number, "/ourobot help"))
    assert [j.name for j in jobs] == ["command"]
    world.run(jobs[0])
    world.run(jobs[0])  # a redelivered task: recorded effect, nothing posted again
    [reply] = bot_comments(world, number)
    assert "ourobot commands" in reply.body
    assert f"<!-- ourobot:reply.{jobs[0].kwargs['comment_id']}.help -->" in reply.body
    reactions = world.user("octo").rest.reactions.list_for_issue_comment(
        "octo", "demo", jobs[0].kwargs["comment_id"]
    )
    assert [r.content for r in reactions.parsed_data] == ["eyes"]


def test_a_crash_after_posting_is_repaired_by_the_marker_not_reposted(world):
    number = world.issue()
    [job] = world.route(world.comment("writer", number, "/ourobot status"))
    world.run(job)
    with world.store.session() as session:  # the local record is lost, GitHub kept the reply
        from app.store.schema import effects

        session.execute(effects.delete())
    world.run(job)
    assert len(bot_comments(world, number)) == 1


def test_insufficient_permission_gets_one_polite_refusal(world):
    number = world.issue()
    [job] = world.route(world.comment("reader", number, "/ourobot implement"))
    world.run(job)
    [reply] = bot_comments(world, number)
    assert "@reader" in reply.body
    assert "needs **write**" in reply.body
    assert "you have **read**" in reply.body


def test_every_verb_has_landed_so_none_answers_not_available():
    # "not available yet" is the fallback for a verb with no job of its own; every verb the
    # parser knows now has one (panic and resume are answered inline, before the inbox).
    assert set(VERB_PERMISSIONS) - AVAILABLE_VERBS == INLINE_VERBS


def test_unknown_verb_is_answered_with_help(world):
    number = world.issue()
    [job] = world.route(world.comment("writer", number, "/ourobot deploy"))
    world.run(job)
    [reply] = bot_comments(world, number)
    assert "don't know `/ourobot deploy`" in reply.body


def test_bots_and_ourobot_itself_never_trigger(world):
    number = world.issue()
    assert world.route(world.comment("other-app[bot]", number, "/ourobot implement")) == []
    bot = world.sandbox.github_installation(world.repo.installation_id)
    world.clients["bot"] = bot
    made = bot.rest.issues.create_comment("octo", "demo", number, body="/ourobot implement")
    own = world.sink.wait_for_one(
        "issue_comment", "created", lambda d: d.payload["comment"]["id"] == made.parsed_data.id
    ).payload
    assert own["comment"]["user"]["login"] == world.sandbox.app.bot_login
    assert world.route(own) == []


def test_commands_in_quotes_or_code_do_not_count(world):
    number = world.issue()
    body = "> /ourobot implement\n\n```\n/ourobot merge\n```\n<!-- /ourobot fix -->"
    assert world.route(world.comment("admin1", number, body)) == []


def test_text_at_trigger_time_is_what_counts(world):
    number = world.issue()
    payload = world.comment("writer", number, "/ourobot help")
    comment_id = payload["comment"]["id"]
    world.user("writer").rest.issues.update_comment(
        "octo", "demo", comment_id, body="/ourobot merge"
    )
    [job] = world.route(payload)
    assert job.kwargs["verb"] == "help"


def test_a_failing_handler_does_not_stop_the_others():
    router = Router()
    seen = []

    def broken(event):
        raise RuntimeError("bug")

    def fine(event):
        seen.append(event.name)
        return [Job("command", {"x": 1})]

    router.add("issues", "opened", broken)
    router.add("issues", "*", fine)
    jobs = router.route("issues", "opened", {}, delivery_id="d1")
    assert seen == ["issues"]
    assert [j.name for j in jobs] == ["command"]


def test_ticket_label_by_triage_is_refused(world):
    # A writer's label starts a cycle: tests/jobs/loop/test_ticket_cycle.py.
    world.sandbox.create_user("triager")
    world.sandbox.control.set_permission("octo", "demo", "triager", "triage")
    for login in ("triager",):  # read cannot label on GitHub at all
        number = world.issue(f"Add multiply ({login})")
        seen = len(world.sink.of("issues", "labeled"))
        world.user(login).rest.issues.add_labels("octo", "demo", number, labels=["ourobot:ticket"])
        payload = world.sink.wait_for("issues", "labeled", count=seen + 1)[-1].payload
        [job] = world.route(payload, "issues", "labeled")
        assert job.kwargs["login"] == login
        world.run(job)
        [status] = bot_comments(world, number)  # one status comment, edited in place
        assert "you have **triage**" in status.body


def test_a_halt_refuses_the_job_before_any_write(world):
    number = world.issue()
    [job] = world.route(world.comment("writer", number, "/ourobot help"))
    HaltRegistry(world.store).set(
        installation_scope(world.repo.installation_id), reason="test", set_by="admin1"
    )

    def writes():
        routes = world.sandbox.control.stats()["routes"]
        return sum(n for k, n in routes.items() if k.split()[0] in {"POST", "PATCH", "PUT"})

    before = writes()
    with pytest.raises(Halted):
        world.run(job)
    assert bot_comments(world, number) == []
    assert writes() == before
