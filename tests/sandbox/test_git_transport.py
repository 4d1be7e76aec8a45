"""Real `git` against the full sandbox server: tokens decide who may clone and push, and a push
turns into `push` and `pull_request.synchronize` webhooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink

pytestmark = pytest.mark.slow


def _commit(sandbox: SandboxHandle, work: Path, name: str, text: str) -> str:
    (work / name).write_text(text)
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", f"Change {name}", cwd=work)
    return sandbox.git("rev-parse", "HEAD", cwd=work).stdout.strip()


def _clone(sandbox: SandboxHandle, repo: SeededRepo, token: str, name: str) -> Path:
    work = sandbox.tmp_path / name
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=token)
    return work


def test_clone_needs_a_token_that_can_read(sandbox: SandboxHandle) -> None:
    repo = sandbox.create_repo()
    outsider = sandbox.create_user("outsider")
    anonymous = sandbox.git("clone", repo.clone_url, str(sandbox.tmp_path / "a"), check=False)
    assert anonymous.returncode != 0
    # A 401 makes git ask for credentials, which the test environment forbids.
    assert "could not read Username" in anonymous.stderr
    hidden = sandbox.git(
        "clone", repo.clone_url, str(sandbox.tmp_path / "b"), token=outsider, check=False
    )
    assert hidden.returncode != 0
    assert "not found" in hidden.stderr.lower()
    assert repo.installation_id is not None
    bot_token = sandbox.control.installation_token(repo.installation_id)
    work = _clone(sandbox, repo, bot_token, "c")
    assert (work / "calc" / "ops.py").read_text().startswith("def add")
    head = sandbox.git("rev-parse", "HEAD", cwd=work).stdout.strip()
    assert head == repo.head_sha
    routes = sandbox.control.stats()["routes"]
    assert routes["GIT upload-pack"] >= 3


def test_push_needs_write_and_reader_is_refused(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    reader = sandbox.create_user("reader")
    sandbox.control.set_permission(repo.owner, repo.name, "reader", "read")
    work = _clone(sandbox, repo, reader, "reader")
    sandbox.git("checkout", "-q", "-b", "topic", cwd=work)
    _commit(sandbox, work, "x.txt", "x\n")
    refused = sandbox.git("push", "origin", "topic", cwd=work, token=reader, check=False)
    assert refused.returncode != 0
    assert "403" in refused.stderr or "denied" in refused.stderr.lower()
    listed = sandbox.git("ls-remote", repo.clone_url, cwd=work, token=reader).stdout
    assert "refs/heads/topic" not in listed

    sandbox.control.set_permission(repo.owner, repo.name, "reader", "write")
    sandbox.git("push", "-q", "origin", "topic", cwd=work, token=reader)
    sandbox.control.wait_idle()
    (push,) = webhook_sink.wait_for("push")
    payload = push.payload
    assert payload["ref"] == "refs/heads/topic"
    assert payload["created"] is True
    assert payload["before"] == "0" * 40
    assert payload["sender"]["login"] == "reader"
    assert payload["pusher"]["name"] == "reader"
    assert [c["message"] for c in payload["commits"]] == ["Change x.txt"]
    assert payload["head_commit"]["added"] == ["x.txt"]


def test_push_to_a_pull_head_synchronizes_it(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    assert repo.installation_id is not None
    bot_token = sandbox.control.installation_token(repo.installation_id)
    work = _clone(sandbox, repo, bot_token, "bot")
    sandbox.git("checkout", "-q", "-b", "ourobot/issue-1", cwd=work)
    first = _commit(sandbox, work, "a.txt", "a\n")
    sandbox.git("push", "-q", "origin", "ourobot/issue-1", cwd=work, token=bot_token)
    bot = sandbox.github_installation(repo.installation_id)
    pull = bot.rest.pulls.create(
        repo.owner, repo.name, title="Fix #1", head="ourobot/issue-1", base="main"
    ).parsed_data
    assert pull.head.sha == first
    second = _commit(sandbox, work, "b.txt", "b\n")
    sandbox.git("push", "-q", "origin", "ourobot/issue-1", cwd=work, token=bot_token)
    (sync,) = webhook_sink.wait_for("pull_request", "synchronize")
    assert sync.payload["before"] == first
    assert sync.payload["after"] == second
    assert sync.payload["pull_request"]["head"]["sha"] == second
    assert sync.payload["sender"]["login"] == sandbox.app.bot_login
    assert bot.rest.pulls.get(repo.owner, repo.name, pull.number).parsed_data.head.sha == second
    # GitHub keeps refs/pull/N/head on the PR's head.
    refs = sandbox.git("ls-remote", repo.clone_url, cwd=work, token=bot_token).stdout
    assert f"{second}\trefs/pull/{pull.number}/head" in refs


def test_deleting_a_pull_head_closes_the_pull(
    sandbox: SandboxHandle, webhook_sink: WebhookSink
) -> None:
    repo = sandbox.create_repo()
    work = _clone(sandbox, repo, repo.owner_token, "owner")
    sandbox.git("checkout", "-q", "-b", "gone", cwd=work)
    _commit(sandbox, work, "g.txt", "g\n")
    sandbox.git("push", "-q", "origin", "gone", cwd=work, token=repo.owner_token)
    gh = sandbox.github_user(repo.owner)
    number = gh.rest.pulls.create(
        repo.owner, repo.name, title="Gone", head="gone", base="main"
    ).parsed_data.number
    sandbox.git("push", "-q", "origin", "--delete", "gone", cwd=work, token=repo.owner_token)
    (closed,) = webhook_sink.wait_for("pull_request", "closed")
    assert closed.payload["pull_request"]["merged"] is False
    assert gh.rest.pulls.get(repo.owner, repo.name, number).parsed_data.state == "closed"
    deleted = [d for d in webhook_sink.of("push") if d.payload["deleted"]]
    assert len(deleted) == 1
