"""Webhook delivery as GitHub does it: ordered, signed, recorded per attempt with the receiver's
status code, no automatic retry, and redelivery under the same `X-GitHub-Delivery`."""

from __future__ import annotations

import pytest
from githubkit.webhooks import sign

from tests.plugins.sandbox import SandboxHandle, WebhookSink

pytestmark = pytest.mark.slow


def test_failed_delivery_is_recorded_and_redelivered_with_the_same_guid(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    webhook_sink.status = 500
    gh = sandbox.github_user(repo.owner)
    gh.rest.issues.create(repo.owner, repo.name, title="lost at first")
    (first,) = webhook_sink.wait_for("issues", "opened")
    assert sandbox.control.wait_idle()
    app = sandbox.github_app()
    items = app.rest.apps.list_webhook_deliveries().parsed_data
    opened = next(i for i in items if i.event == "issues")
    assert opened.action == "opened"
    assert opened.status_code == 500
    assert opened.status == "Invalid HTTP Response: 500"
    assert opened.redelivery is False
    assert opened.guid == first.guid
    assert opened.repository_id is not None
    # No automatic retry: still one attempt after the queue drained.
    assert len(webhook_sink.of("issues", "opened")) == 1

    webhook_sink.status = 202
    app.rest.apps.redeliver_webhook_delivery(opened.id)
    first_again, second = webhook_sink.wait_for("issues", "opened", count=2)
    assert first_again is first
    assert second.guid == first.guid
    assert second.body == first.body
    assert sandbox.control.wait_idle()
    attempts = [
        i for i in app.rest.apps.list_webhook_deliveries().parsed_data if i.guid == first.guid
    ]
    assert sorted((a.redelivery, a.status_code) for a in attempts) == [(False, 500), (True, 202)]
    detail = app.rest.apps.get_webhook_delivery(attempts[0].id).parsed_data
    assert detail.request.payload is not None
    assert detail.request.payload.model_dump()["issue"]["title"] == "lost at first"


def test_deliveries_are_ordered_signed_and_cursor_paged(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    gh = sandbox.github_user(repo.owner)
    for i in range(4):
        gh.rest.issues.create(repo.owner, repo.name, title=f"issue {i}")
    opened = webhook_sink.wait_for("issues", "opened", count=4)
    assert [d.payload["issue"]["number"] for d in opened] == [1, 2, 3, 4]
    for delivery in opened:
        expected = sign(webhook_sink.secret, delivery.body, "sha256")
        assert delivery.headers["x-hub-signature-256"] == expected
        assert not webhook_sink.verify_with("wrong-secret", delivery)
    assert sandbox.control.wait_idle()
    app = sandbox.github_app()
    first = app.rest.apps.list_webhook_deliveries(per_page=2)
    assert len(first.parsed_data) == 2
    link = first.headers["link"]
    cursor = link.split("cursor=")[1].split(">")[0]
    rest = app.rest.apps.list_webhook_deliveries(per_page=50, cursor=cursor).parsed_data
    seen = [d.id for d in first.parsed_data] + [d.id for d in rest]
    assert seen == sorted(seen, reverse=True)
    assert len(seen) == len(set(seen)) == 5  # four issues and the installation


def test_app_actions_are_sent_by_the_bot_and_nothing_is_sent_without_a_webhook(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    bot = sandbox.github_installation(repo.installation_id)
    number = bot.rest.issues.create(repo.owner, repo.name, title="t").parsed_data.number
    bot.rest.issues.create_comment(repo.owner, repo.name, number, body="status")
    (comment,) = webhook_sink.wait_for("issue_comment", "created")
    assert comment.payload["sender"]["login"] == sandbox.app.bot_login
    assert comment.payload["sender"]["type"] == "Bot"
    assert comment.payload["comment"]["performed_via_github_app"]["slug"] == sandbox.app.slug

    sandbox.control.set_webhook(None)
    before = len(sandbox.control.deliveries())
    bot.rest.issues.create_comment(repo.owner, repo.name, number, body="unheard")
    assert sandbox.control.wait_idle()
    assert len(sandbox.control.deliveries()) == before


def test_uninstalled_repos_send_no_events(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo(install=False)
    gh = sandbox.github_user(repo.owner)
    gh.rest.issues.create(repo.owner, repo.name, title="t")
    assert sandbox.control.wait_idle()
    assert webhook_sink.of("issues") == []
