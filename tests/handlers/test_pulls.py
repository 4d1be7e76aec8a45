"""The pull_request handler: which actions become a `guards_check` job, and what the job is told.
Pure: payloads in, jobs out. GitHub's own example payloads are used where the shared copy of
octokit/webhooks is present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.handlers.routes import build_router
from app.jobs.guards_check import PullHead, in_scope
from app.repo_config import load_repo_config
from app.settings import load_settings

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "github-webhook-examples"
HEAD = "a" * 40
BOT = "ourobot-app[bot]"


def payload(action: str, *, login: str = BOT, kind: str = "Bot", **pull: Any) -> dict[str, Any]:
    body = {
        "number": 7,
        "state": "open",
        "user": {"login": login, "type": kind},
        "head": {"ref": "ourobot/issue-3", "sha": HEAD},
        "base": {"ref": "main", "sha": "b" * 40},
        **pull,
    }
    return {
        "action": action,
        "number": 7,
        "pull_request": body,
        "repository": {"full_name": "octo/demo"},
        "installation": {"id": 42},
        "sender": {"login": login, "type": kind},
    }


def route(event: dict[str, Any]) -> list[Any]:
    router = build_router(load_settings(env={}))
    jobs = router.route("pull_request", event["action"], event, delivery_id="d")
    return [job for job in jobs if job.name == "guards_check"]


@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened", "ready_for_review"])
def test_each_new_head_action_asks_for_one_guards_check(action: str) -> None:
    (job,) = route(payload(action))
    assert dict(job.kwargs) == {
        "installation_id": 42,
        "repo": "octo/demo",
        "number": 7,
        "head_sha": HEAD,
        "base_ref": "main",
        "head_ref": "ourobot/issue-3",
        "author_login": BOT,
        "author_is_bot": True,
    }


@pytest.mark.parametrize(
    "action", ["closed", "edited", "labeled", "assigned", "converted_to_draft"]
)
def test_actions_that_bring_no_new_head_are_not_routed(action: str) -> None:
    assert route(payload(action)) == []


def test_a_human_author_is_routed_and_marked_as_not_a_bot() -> None:
    (job,) = route(payload("opened", login="writer", kind="User"))
    assert (job.kwargs["author_login"], job.kwargs["author_is_bot"]) == ("writer", False)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"state": "closed"}, "a closed PR has nothing to guard"),
        ({"head": {"ref": "x", "sha": "not-a-sha"}}, "a head that is not a commit id"),
        ({"head": {"sha": HEAD}}, "no head branch"),
        ({"base": "main"}, "a base that is not an object"),
        ({"number": "7"}, "a number that is not an int"),
    ],
)
def test_malformed_or_closed_pulls_ask_for_nothing(change: dict[str, Any], why: str) -> None:
    event = payload("opened")
    event["pull_request"].update(change)
    if "number" in change:
        event["number"] = change["number"]
    assert route(event) == [], why


def test_an_event_without_an_installation_asks_for_nothing() -> None:
    event = payload("opened")
    del event["installation"]
    assert route(event) == []


@pytest.mark.parametrize(
    "name", ["opened", "synchronize", "reopened", "ready_for_review.with-installation"]
)
def test_githubs_own_example_payloads_are_routed(name: str) -> None:
    source = EXAMPLES / "pull_request" / f"{name}.payload.json"
    if not source.is_file():
        pytest.skip(f"{source} is absent (the shared octokit/webhooks examples are not here)")
    event = json.loads(source.read_text())
    event.setdefault("installation", {"id": 1})
    event["pull_request"]["state"] = "open"
    (job,) = route(event)
    assert job.kwargs["head_sha"] == event["pull_request"]["head"]["sha"]
    assert job.kwargs["author_is_bot"] is (event["pull_request"]["user"]["type"] == "Bot")


# ---- scope (the job's decision, from the base config) --------------------------------------


def pull(head_ref: str = "ourobot/issue-3") -> PullHead:
    return PullHead("octo/demo", 7, HEAD, "main", head_ref)


BOT_ONLY = load_repo_config(None)
ALL = load_repo_config("version: 1\nguards:\n  apply_to: all\n")


@pytest.mark.parametrize(
    ("head_ref", "login", "is_bot", "expected"),
    [
        ("ourobot/issue-3", BOT, True, True),
        ("ourobot/issue-3", "OUROBOT-APP[bot]", True, True),  # logins are case-insensitive
        ("feature", BOT, True, False),  # our bot, but not an ourobot/ branch
        ("ourobot/issue-3", "other-app[bot]", True, False),  # another App's bot
        ("ourobot/issue-3", BOT, False, False),  # a person whose login mimics the bot's
        ("ourobot/issue-3", "writer", False, False),
    ],
)
def test_apply_to_bot_takes_only_ourobots_own_pulls(
    head_ref: str, login: str, is_bot: bool, expected: bool
) -> None:
    assert in_scope(BOT_ONLY, pull(head_ref), login, is_bot, bot=BOT) is expected


def test_apply_to_all_takes_every_pull() -> None:
    assert in_scope(ALL, pull("feature"), "writer", False, bot=BOT)
    assert in_scope(ALL, pull(), "other-app[bot]", True, bot=BOT)
