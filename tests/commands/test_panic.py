"""/ourobot panic and /ourobot resume: inline, durable, authorized by GitHub's word only."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.commands.panic import PanicHandler, parse_request
from app.controls.halt import GLOBAL, Halted, HaltRegistry, halt_cause, installation_scope

pytestmark = pytest.mark.slow


def bot_comments(world, number):
    return [c for c in world.comments(number) if c.user.login == world.sandbox.app.bot_login]


@pytest.fixture
def panic(world):
    handler = PanicHandler(world.settings, world.store)
    yield handler
    handler.wait_for_replies()


def test_admin_panic_halts_the_installation_and_is_acknowledged(world, panic):
    number = world.issue()
    panic(world.delivery("admin1", number, "Stop everything!\n/ourobot panic"))
    halt = HaltRegistry(world.store).active(world.repo.installation_id)
    assert halt is not None
    assert halt.scope == installation_scope(world.repo.installation_id)
    assert halt.set_by == "admin1"
    panic.wait_for_replies()
    [reply] = bot_comments(world, number)
    assert "halted" in reply.body
    # work queued before the panic now stops before its first write
    [job] = world.route(world.comment("writer", number, "/ourobot help"))
    with pytest.raises(Halted):
        world.run(job)


def test_the_write_guard_refuses_any_write_while_halted_but_reads_work(world):
    HaltRegistry(world.store).set(
        installation_scope(world.repo.installation_id), reason="t", set_by="admin1"
    )
    client = world.ctx.github.installation(world.repo.installation_id)
    assert client.rest.repos.get("octo", "demo").parsed_data.full_name == "octo/demo"
    with pytest.raises(Exception) as refused:  # githubkit wraps what a request hook raises
        client.rest.issues.create("octo", "demo", title="should not exist")
    assert halt_cause(refused.value) is not None
    assert halt_cause(RuntimeError("unrelated")) is None


@pytest.mark.parametrize("login", ["writer", "reader", "other-app[bot]"])
def test_panic_from_anyone_less_than_admin_is_refused(world, panic, login):
    number = world.issue()
    delivery = world.delivery(login, number, "/ourobot panic")
    panic(delivery)
    assert HaltRegistry(world.store).active(world.repo.installation_id) is None
    panic.wait_for_replies()
    replies = bot_comments(world, number)
    if login.endswith("[bot]"):
        assert replies == []  # bots are not answered: no conversation loops between Apps
    else:
        [reply] = replies
        assert "needs **admin**" in reply.body


def test_operator_panic_is_global_and_only_an_operator_lifts_it(world, panic):
    number = world.issue()
    world.sandbox.control.set_permission("octo", "demo", "oncall", "read")
    panic(world.delivery("oncall", number, "/ourobot panic"))
    registry = HaltRegistry(world.store)
    assert registry.active(None).scope == GLOBAL
    panic(world.delivery("admin1", number, "/ourobot resume"))
    assert registry.active(world.repo.installation_id).scope == GLOBAL
    panic(world.delivery("oncall", number, "/ourobot resume"))
    assert registry.active(world.repo.installation_id) is None


def test_resume_by_admin_restores_work(world, panic):
    number = world.issue()
    panic(world.delivery("admin1", number, "/ourobot panic"))
    panic(world.delivery("admin1", number, "/ourobot resume"))
    assert HaltRegistry(world.store).active(world.repo.installation_id) is None
    [job] = world.route(world.comment("writer", number, "/ourobot help"))
    world.run(job)
    assert any("ourobot commands" in c.body for c in bot_comments(world, number))


def test_permission_lookup_failure_fails_closed(world, panic):
    number = world.issue()
    delivery = world.delivery("admin1", number, "/ourobot panic")
    world.sandbox.control.add_fault("502", path="/collaborators/", times=None)
    try:
        panic(delivery)
    finally:
        world.sandbox.control.clear_faults()
    assert HaltRegistry(world.store).active(world.repo.installation_id) is None


def test_a_quoted_panic_is_not_a_panic(world):
    number = world.issue()
    assert parse_request(world.delivery("admin1", number, "> /ourobot panic")) is None
    assert parse_request(world.delivery("admin1", number, "`/ourobot panic`")) is None


@pytest.mark.parametrize("parsed", [True, False], ids=["parsed-payload", "raw-body"])
def test_a_panic_spelled_with_json_escapes_is_still_a_panic(world, parsed):
    """GitHub may escape any character; the command is found in the text, not the bytes."""
    number = world.issue()
    sent = world.delivery("admin1", number, "/ourobot panic")
    payload = json.loads(sent.body)
    escaped = json.dumps(payload).replace("/ourobot", "\\/\\u006Furobot").encode()
    assert b"/ourobot" not in escaped.lower()
    delivery = replace(sent, body=escaped, payload=json.loads(escaped) if parsed else None)
    request = parse_request(delivery)
    assert request is not None and (request.verb, request.login) == ("panic", "admin1")


def test_halts_survive_a_new_registry_and_ignore_a_lost_redis_mirror(world):
    registry = HaltRegistry(world.store)
    registry.set(GLOBAL, reason="x", set_by="oncall")
    assert HaltRegistry(world.store, redis=None).active(123) is not None
    assert registry.clear(GLOBAL) is True
    assert registry.clear(GLOBAL) is False
