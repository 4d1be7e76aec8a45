"""The sandbox against githubkit's own typed models.

One scenario drives every REST endpoint the sandbox implements through githubkit (App JWT,
installation token, personal tokens) and parses each answer with the model githubkit declares for
that operation (`resp.parsed_data`). The scenario's webhooks must verify with
`githubkit.webhooks.verify` and parse with `githubkit.webhooks.parse` into the model for their
event and action.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from githubkit import GitHub
from githubkit.exception import RequestFailed
from githubkit.webhooks import parse
from githubkit_schemas.latest.models import ContentDirectoryItems

from app.sandbox.server import SandboxServer
from tests.plugins.sandbox import SandboxHandle, SeededRepo, WebhookSink, open_handle

pytestmark = pytest.mark.slow

EXPECTED_EVENTS = {
    ("installation", "created"),
    ("issues", "opened"),
    ("issues", "edited"),
    ("issues", "labeled"),
    ("issues", "unlabeled"),
    ("issues", "closed"),
    ("issues", "reopened"),
    ("issue_comment", "created"),
    ("issue_comment", "edited"),
    ("issue_comment", "deleted"),
    ("push", None),
    ("pull_request", "opened"),
    ("pull_request", "edited"),
    ("pull_request", "labeled"),
    ("pull_request", "synchronize"),
    ("pull_request", "closed"),
    ("pull_request", "reopened"),
    ("pull_request_review", "submitted"),
    ("pull_request_review", "dismissed"),
    ("check_run", "created"),
    ("check_run", "completed"),
    ("check_suite", "completed"),
    ("status", None),
    ("merge_group", "checks_requested"),
    ("merge_group", "destroyed"),
}


@dataclass
class Scenario:
    repo: SeededRepo
    parsed: dict[str, Any] = field(default_factory=dict)  # operation -> parsed model(s)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _push_branch(sandbox: SandboxHandle, repo: SeededRepo, token: str, work: Path) -> None:
    """Clone, commit a change on `feature`, push it (as the user owning `token`)."""
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=token)
    sandbox.git("checkout", "-q", "-b", "feature", cwd=work)
    ops = work / "calc" / "ops.py"
    ops.write_text(ops.read_text() + "\n\ndef sub(a: int, b: int) -> int:\n    return a - b\n")
    (work / "NOTES.md").write_text("notes\n")
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "Add sub", cwd=work)
    sandbox.git("push", "-q", "origin", "feature", cwd=work, token=token)


def _push_more(sandbox: SandboxHandle, token: str, work: Path) -> str:
    (work / "NOTES.md").write_text("notes, more\n")
    sandbox.git("commit", "-q", "-am", "More notes", cwd=work)
    sandbox.git("push", "-q", "origin", "feature", cwd=work, token=token)
    return sandbox.git("rev-parse", "HEAD", cwd=work).stdout.strip()


def run_scenario(sandbox: SandboxHandle) -> Scenario:
    repo = sandbox.create_repo("octo", "demo")
    assert repo.installation_id is not None
    o, r = repo.owner, repo.name
    alice_token = sandbox.create_user("alice")
    sandbox.create_user("bob")
    sandbox.control.set_permission(o, r, "alice", "write")
    app: GitHub[Any] = sandbox.github_app()
    bot: GitHub[Any] = sandbox.github_installation(repo.installation_id)
    owner: GitHub[Any] = sandbox.github_user(o)
    alice: GitHub[Any] = sandbox.github_user("alice")
    s = Scenario(repo)
    p = s.parsed

    # The App and its installation.
    p["apps.get_authenticated"] = app.rest.apps.get_authenticated().parsed_data
    p["apps.list_installations"] = app.rest.apps.list_installations().parsed_data
    p["apps.get_installation"] = app.rest.apps.get_installation(repo.installation_id).parsed_data
    p["apps.create_installation_access_token"] = app.rest.apps.create_installation_access_token(
        repo.installation_id
    ).parsed_data
    p["apps.get_repo_installation"] = app.rest.apps.get_repo_installation(o, r).parsed_data
    listed = bot.rest.apps.list_repos_accessible_to_installation().parsed_data
    p["apps.list_repos_accessible_to_installation"] = listed
    assert [x.full_name for x in listed.repositories] == [repo.full_name]
    p["users.get_authenticated"] = alice.rest.users.get_authenticated().parsed_data

    # Repository, permission, contents, commit, refs.
    p["repos.get"] = bot.rest.repos.get(o, r).parsed_data
    p["repos.get_collaborator_permission_level"] = bot.rest.repos.get_collaborator_permission_level(
        o, r, "alice"
    ).parsed_data
    p["repos.get_content(dir)"] = bot.rest.repos.get_content(o, r, "").parsed_data
    # The same listing without the trailing slash, with the model githubkit uses for it.
    p["repos.get_content(root)"] = bot.request(
        "GET", f"/repos/{o}/{r}/contents", response_model=list[ContentDirectoryItems]
    ).parsed_data
    p["repos.get_content(file)"] = bot.rest.repos.get_content(
        o, r, "calc/ops.py", ref="main"
    ).parsed_data
    p["repos.get_commit"] = bot.rest.repos.get_commit(o, r, "main").parsed_data
    p["git.get_commit"] = bot.rest.git.get_commit(o, r, p["repos.get_commit"].sha).parsed_data
    assert p["git.get_commit"].tree.sha == p["repos.get_commit"].commit.tree.sha
    p["git.get_ref"] = bot.rest.git.get_ref(o, r, "heads/main").parsed_data

    # Labels, issues, comments, reactions.
    p["issues.create_label"] = bot.rest.issues.create_label(
        o, r, name="ourobot:ticket", color="0e8a16", description="admitted"
    ).parsed_data
    p["issues.get_label"] = bot.rest.issues.get_label(o, r, "ourobot:ticket").parsed_data
    p["issues.list_labels_for_repo"] = bot.rest.issues.list_labels_for_repo(o, r).parsed_data
    issue = alice.rest.issues.create(o, r, title="Add sub", body="Please add sub").parsed_data
    p["issues.create"] = issue
    n = issue.number
    p["issues.get"] = bot.rest.issues.get(o, r, n).parsed_data
    p["issues.update(edit)"] = alice.rest.issues.update(o, r, n, title="Add sub()").parsed_data
    p["issues.add_labels"] = owner.rest.issues.add_labels(
        o, r, n, labels=["ourobot:ticket", "bug"]
    ).parsed_data
    p["issues.remove_label"] = bot.rest.issues.remove_label(o, r, n, "bug").parsed_data
    p["issues.list_for_repo"] = bot.rest.issues.list_for_repo(o, r, state="all").parsed_data
    by_alice = bot.rest.issues.list_for_repo(o, r, state="all", creator="alice").parsed_data
    assert [i.number for i in by_alice] == [n]
    assert bot.rest.issues.list_for_repo(o, r, state="all", creator="nobody").parsed_data == []
    later = bot.rest.issues.list_for_repo(o, r, state="all", since="2999-01-01T00:00:00Z")
    assert later.parsed_data == []
    comment = bot.rest.issues.create_comment(o, r, n, body="On it").parsed_data
    p["issues.create_comment"] = comment
    p["issues.get_comment"] = bot.rest.issues.get_comment(o, r, comment.id).parsed_data
    p["issues.update_comment"] = bot.rest.issues.update_comment(
        o, r, comment.id, body="On it."
    ).parsed_data
    p["issues.list_comments"] = bot.rest.issues.list_comments(o, r, n, per_page=1).parsed_data
    p["reactions.create_for_issue"] = alice.rest.reactions.create_for_issue(
        o, r, n, content="+1"
    ).parsed_data
    p["reactions.list_for_issue"] = bot.rest.reactions.list_for_issue(o, r, n).parsed_data
    p["reactions.create_for_issue_comment"] = bot.rest.reactions.create_for_issue_comment(
        o, r, comment.id, content="eyes"
    ).parsed_data
    p["reactions.list_for_issue_comment"] = bot.rest.reactions.list_for_issue_comment(
        o, r, comment.id
    ).parsed_data
    scratch = bot.rest.issues.create_comment(o, r, n, body="scratch").parsed_data
    bot.rest.issues.delete_comment(o, r, scratch.id)
    bot.rest.issues.update(o, r, n, state="closed")
    bot.rest.issues.update(o, r, n, state="open")

    # A branch pushed over git smart HTTP, then a pull request.
    work = sandbox.tmp_path / "work"
    _push_branch(sandbox, repo, alice_token, work)
    pull = alice.rest.pulls.create(
        o, r, title="Add sub", head="feature", base="main", body=f"Closes #{n}"
    ).parsed_data
    p["pulls.create"] = pull
    m = pull.number
    p["pulls.get"] = bot.rest.pulls.get(o, r, m).parsed_data
    p["pulls.list"] = bot.rest.pulls.list(o, r).parsed_data
    p["pulls.update"] = alice.rest.pulls.update(o, r, m, title="Add sub()").parsed_data
    p["pulls.list_files"] = bot.rest.pulls.list_files(o, r, m).parsed_data
    p["pulls.list_commits"] = bot.rest.pulls.list_commits(o, r, m).parsed_data
    bot.rest.issues.add_labels(o, r, m, labels=["ourobot:ticket"])
    head = _push_more(sandbox, alice_token, work)
    sandbox.control.wait_idle()

    # Reviews, inline comments, dismissal.
    review = owner.rest.pulls.create_review(
        o,
        r,
        m,
        commit_id=head,
        event="APPROVE",
        body="LGTM",
        comments=[{"path": "calc/ops.py", "line": 6, "side": "RIGHT", "body": "nice"}],
    ).parsed_data
    p["pulls.create_review"] = review
    p["pulls.get_review"] = bot.rest.pulls.get_review(o, r, m, review.id).parsed_data
    p["pulls.list_reviews"] = bot.rest.pulls.list_reviews(o, r, m).parsed_data
    p["pulls.list_review_comments"] = bot.rest.pulls.list_review_comments(o, r, m).parsed_data
    p["pulls.dismiss_review"] = bot.rest.pulls.dismiss_review(
        o, r, m, review.id, message="new push"
    ).parsed_data
    owner.rest.pulls.create_review(o, r, m, commit_id=head, event="APPROVE")

    # Check runs and statuses on the head.
    run = bot.rest.checks.create(
        o,
        r,
        name="ourobot/guards",
        head_sha=head,
        status="in_progress",
        output={"title": "Guards", "summary": "running"},
    ).parsed_data
    p["checks.create"] = run
    p["checks.update"] = bot.rest.checks.update(
        o,
        r,
        run.id,
        conclusion="success",
        output={
            "title": "Guards",
            "summary": "ok",
            "annotations": [
                {
                    "path": "calc/ops.py",
                    "start_line": 5,
                    "end_line": 5,
                    "annotation_level": "notice",
                    "message": "fine",
                }
            ],
        },
    ).parsed_data
    p["checks.get"] = bot.rest.checks.get(o, r, run.id).parsed_data
    p["checks.list_annotations"] = bot.rest.checks.list_annotations(o, r, run.id).parsed_data
    p["checks.list_for_ref"] = bot.rest.checks.list_for_ref(
        o, r, head, check_name="ourobot/guards"
    ).parsed_data
    p["repos.create_commit_status"] = bot.rest.repos.create_commit_status(
        o, r, head, state="success", context="ci/legacy", description="ok"
    ).parsed_data
    p["repos.get_combined_status_for_ref"] = bot.rest.repos.get_combined_status_for_ref(
        o, r, head
    ).parsed_data
    p["repos.list_commit_statuses_for_ref"] = bot.rest.repos.list_commit_statuses_for_ref(
        o, r, head
    ).parsed_data

    # Merge exactly the approved head, then delete the branch.
    with pytest.raises(RequestFailed) as not_yet:
        bot.rest.pulls.check_if_merged(o, r, m)
    assert not_yet.value.response.status_code == 404
    p["pulls.merge"] = bot.rest.pulls.merge(o, r, m, sha=head, merge_method="squash").parsed_data
    assert bot.rest.pulls.check_if_merged(o, r, m).status_code == 204
    bot.rest.git.delete_ref(o, r, "heads/feature")
    _closed_and_reopened_pull(sandbox, repo, alice_token, alice)
    _what_the_merge_gate_reads(sandbox, s, alice_token)
    _a_workflow_dispatched(sandbox, s, alice)

    # The App's webhook deliveries (only when a webhook is configured).
    sandbox.control.wait_idle()
    deliveries = app.rest.apps.list_webhook_deliveries(per_page=5).parsed_data
    p["apps.list_webhook_deliveries"] = deliveries
    if deliveries:
        p["apps.get_webhook_delivery"] = app.rest.apps.get_webhook_delivery(
            deliveries[0].id
        ).parsed_data
        p["apps.redeliver_webhook_delivery"] = app.rest.apps.redeliver_webhook_delivery(
            deliveries[0].id
        ).parsed_data
    sandbox.control.wait_idle()
    return s


def _closed_and_reopened_pull(
    sandbox: SandboxHandle, repo: SeededRepo, token: str, alice: GitHub[Any]
) -> None:
    work = sandbox.tmp_path / "work2"
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=token)
    sandbox.git("checkout", "-q", "-b", "second", cwd=work)
    (work / "SECOND.md").write_text("second\n")
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "Second", cwd=work)
    sandbox.git("push", "-q", "origin", "second", cwd=work, token=token)
    pr = alice.rest.pulls.create(repo.owner, repo.name, title="Second", head="second", base="main")
    number = pr.parsed_data.number
    alice.rest.pulls.update(repo.owner, repo.name, number, state="closed")
    alice.rest.pulls.update(repo.owner, repo.name, number, state="open")


def _what_the_merge_gate_reads(sandbox: SandboxHandle, s: Scenario, token: str) -> None:
    """A pull request whose base moves on: compare (behind_by), the protected base branch,
    update-branch pinned to the head, a merge refused by protection, the merge queue."""
    repo, p = s.repo, s.parsed
    o, r = repo.owner, repo.name
    bot: GitHub[Any] = sandbox.github_installation(repo.installation_id or 0)
    work = sandbox.tmp_path / "work3"
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=token)
    sandbox.git("checkout", "-q", "-b", "third", cwd=work)
    (work / "THIRD.md").write_text("third\n")
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "Third", cwd=work)
    sandbox.git("push", "-q", "origin", "third", cwd=work, token=token)
    made = bot.rest.pulls.create(o, r, title="Third", head="third", base="main")
    number = made.parsed_data.number
    sandbox.git("checkout", "-q", "main", cwd=work)
    (work / "BASE.md").write_text("the base moved on\n")
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "Base moves", cwd=work)
    sandbox.git("push", "-q", "origin", "main", cwd=work, token=repo.owner_token)
    head = bot.rest.pulls.get(o, r, number).parsed_data.head.sha
    comparison = bot.rest.repos.compare_commits(o, r, f"main...{head}").parsed_data
    assert (comparison.behind_by, comparison.ahead_by, comparison.status) == (1, 1, "diverged")
    p["repos.compare_commits"] = comparison
    sandbox.control.set_branch_protection(o, r, "main", ["ci/test"], strict=True)
    branch = bot.rest.repos.get_branch(o, r, "main").parsed_data
    assert branch.protected and branch.protection.required_status_checks
    assert branch.protection.required_status_checks.contexts == ["ci/test"]
    p["repos.get_branch"] = branch
    with pytest.raises(RequestFailed) as refused:
        bot.rest.pulls.merge(o, r, number, sha=head)
    assert refused.value.response.status_code == 405
    with pytest.raises(RequestFailed) as stale:
        bot.rest.pulls.update_branch(o, r, number, expected_head_sha="0" * 40)
    assert stale.value.response.status_code == 422
    p["pulls.update_branch"] = bot.rest.pulls.update_branch(
        o, r, number, expected_head_sha=head
    ).parsed_data
    updated = bot.rest.pulls.get(o, r, number).parsed_data.head.sha
    after = bot.rest.repos.compare_commits(o, r, f"main...{updated}").parsed_data
    assert after.behind_by == 0 and updated != head
    group = sandbox.control.enqueue(o, r, number)
    assert not sandbox.control.complete_merge_group(o, r, group["head_sha"])  # ci/test not green
    sandbox.control.set_branch_protection(o, r, "main", None)


def _a_workflow_dispatched(sandbox: SandboxHandle, s: Scenario, alice: GitHub[Any]) -> None:
    """A person with write access dispatches a workflow (the App would need `actions`, which
    the shared sandbox's App does not have), and reads the run it started."""
    repo, p = s.repo, s.parsed
    o, r = repo.owner, repo.name
    work = sandbox.tmp_path / "work4"
    sandbox.git("clone", "-q", repo.clone_url, str(work), token=repo.owner_token)
    (work / ".github/workflows").mkdir(parents=True)
    (work / ".github/workflows/manual.yml").write_text(
        "on:\n  workflow_dispatch:\n    inputs:\n      ticket: {required: true}\n"
        "jobs:\n  one: {runs-on: ubuntu-latest, steps: [{run: 'true'}]}\n"
    )
    sandbox.git("add", "-A", cwd=work)
    sandbox.git("commit", "-q", "-m", "A workflow", cwd=work)
    sandbox.git("push", "-q", "origin", "main", cwd=work, token=repo.owner_token)
    started = alice.rest.actions.create_workflow_dispatch(
        o, r, "manual.yml", ref="main", inputs={"ticket": "1"}
    ).parsed_data
    p["actions.create_workflow_dispatch"] = started
    p["actions.get_workflow_run"] = alice.rest.actions.get_workflow_run(
        o, r, started.workflow_run_id
    ).parsed_data


# Routes whose githubkit conformance is checked in a test of their own, and where.
ELSEWHERE = {
    # It replaces the sandbox's App, which the scenario's later steps rely on.
    "POST /app-manifests/{code}/conversions": "tests/install/test_manifest_flow.py",
}


def _implemented_rest_routes(sandbox: SandboxHandle) -> set[str]:
    names = set()
    assert sandbox.server.app is not None
    for route in sandbox.server.app.routes:
        name = getattr(route, "name", "") or ""
        if name.startswith("rest:"):
            names.add(name.removeprefix("rest:"))
    return names


@dataclass
class Outcome:
    sandbox: SandboxHandle
    scenario: Scenario
    sink: WebhookSink
    hit_routes: set[str]


@pytest.fixture(scope="module")
def outcome(
    sandbox_server: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Outcome]:
    """The scenario runs once for both tests: its cost is mostly githubkit building models."""
    sandbox = open_handle(sandbox_server, tmp_path_factory.mktemp("conformance"))
    sink = WebhookSink(secret="conformance-secret")
    sandbox.control.set_webhook(sink.url, sink.secret)
    try:
        scenario = run_scenario(sandbox)
        hit = set(sandbox.control.stats()["routes"])
        yield Outcome(sandbox, scenario, sink, hit)
    finally:
        sandbox.control.set_webhook(None)
        sink.close()
        sandbox.control.close()


def test_every_rest_endpoint_parses_with_githubkit_models(outcome: Outcome) -> None:
    for operation, parsed in outcome.scenario.parsed.items():
        assert parsed is not None, operation
        if isinstance(parsed, list):
            assert parsed, f"{operation} returned an empty list: nothing was checked"
    # Every REST route the sandbox serves was called at least once by the scenario (or, for a
    # route that would change this shared sandbox's App, through githubkit in its own test).
    missing = _implemented_rest_routes(outcome.sandbox) - outcome.hit_routes - set(ELSEWHERE)
    assert not missing, f"routes never exercised through githubkit: {sorted(missing)}"


def test_every_webhook_verifies_and_parses_into_its_model(outcome: Outcome) -> None:
    sandbox, webhook_sink = outcome.sandbox, outcome.sink
    seen: set[tuple[str, str | None]] = set()
    assert webhook_sink.deliveries
    for delivery in webhook_sink.deliveries:
        assert webhook_sink.verify(delivery), delivery.event
        headers = delivery.headers
        assert headers["content-type"] == "application/json"
        assert headers["user-agent"].startswith("GitHub-Hookshot/")
        assert re.fullmatch(r"[0-9a-f-]{36}", headers["x-github-delivery"])
        assert headers["x-github-hook-installation-target-type"] == "integration"
        assert headers["x-github-hook-installation-target-id"] == str(sandbox.app.id)
        assert headers["x-github-hook-id"].isdigit()
        if (delivery.event, delivery.action) in seen:
            continue  # one parse per kind keeps the test quick; all were verified above
        event = parse(delivery.event, delivery.body)  # type: ignore[call-overload]
        action = delivery.action
        expected = "Webhook" + _camel(delivery.event) + (_camel(action) if action else "")
        assert type(event).__name__ == expected
        payload = delivery.payload
        assert payload["sender"]["login"]
        assert payload["installation"]["id"]
        if delivery.event != "installation":
            assert payload["repository"]["full_name"] == "octo/demo"
        seen.add((delivery.event, action))
    assert seen >= EXPECTED_EVENTS, sorted(EXPECTED_EVENTS - seen)
