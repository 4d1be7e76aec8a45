"""`/ourobot status` and `/ourobot budget` from a comment to the reply on GitHub: the real
router and job, the store's ledger, the repository's config read from the sandbox."""

from __future__ import annotations

import pytest

from app.controls.ledger import Ledger, ModelCall, Outcome, Subject
from reviewers.model_client import Usage

pytestmark = pytest.mark.slow


def bot_comments(world, number):
    return [c for c in world.comments(number) if c.user.login == world.sandbox.app.bot_login]


def ask(world, login, number, text):
    for job in world.route(world.comment(login, number, text)):
        world.run(job)


def spend(world, repo, number, micro):
    Ledger(world.store).record_call(
        Subject(
            f"cycle:{repo}#{number}", world.repo.installation_id, repo, number, f"{repo}#{number}"
        ),
        ModelCall("implementer", "anthropic:demo", "ok", Usage(1, 1), cost_micro_usd=micro),
    )


def test_status_on_an_empty_store_says_so(world):
    number = world.issue()
    ask(world, "reader", number, "/ourobot status")
    [reply] = bot_comments(world, number)
    assert "<!-- ourobot:status-reply -->" in reply.body
    assert "The ledger has no rows for this thread yet." in reply.body
    assert "asked by @reader" in reply.body


def test_status_lists_the_threads_ledger_rows_and_is_edited_in_place(world):
    number = world.issue()
    repo = world.repo.full_name
    ledger = Ledger(world.store)
    ledger.record(
        "cycle", Subject(f"cycle:{repo}#{number}", world.repo.installation_id, repo, number,
                         f"{repo}#{number}", "c" * 40),
        Outcome("ok", "unmet"), error_class="iterations",
        detail={"outcome": "blocked", "reason": "<script>x</script> | injected"},
    )  # fmt: skip
    ledger.record(
        "review", Subject("review:other", world.repo.installation_id, repo, number + 100),
        Outcome("ok", review="approved", artifact="pr"),
    )  # fmt: skip
    spend(world, repo, number, 250_000)
    ask(world, "writer", number, "/ourobot status")
    [reply] = bot_comments(world, number)
    row = next(
        line for line in reply.body.splitlines() if line.startswith("| ") and "cycle" in line
    )
    assert "| cycle `ccccccc` | ok | unmet | skipped | none | iterations |" in row
    assert "approved" not in reply.body  # another thread's row
    assert "<script>" not in reply.body and "injected" not in reply.body
    assert "Model spend on this thread as a ticket: $0.2500." in reply.body
    ask(world, "reader", number, "/ourobot status")
    [again] = bot_comments(world, number)  # the same comment, refreshed
    assert again.id == reply.id and "asked by @reader" in again.body


def test_budget_needs_maintain_and_shows_spend_against_the_caps(world):
    number = world.issue()
    ask(world, "writer", number, "/ourobot budget")
    [refusal] = bot_comments(world, number)
    assert "needs **maintain**" in refusal.body
    world.sandbox.create_user("keeper")
    world.sandbox.control.set_permission("octo", "demo", "keeper", "maintain")
    spend(world, world.repo.full_name, number, 1_500_000)
    ask(world, "keeper", number, "/ourobot budget")
    reply = next(c for c in bot_comments(world, number) if "budget-reply" in c.body)
    assert "this ticket: $1.5000 spent of $5.0000 ($3.5000 left)" in reply.body
    assert "this installation today (UTC): $1.5000, no daily cap" in reply.body


def test_budget_follows_the_repositorys_lower_budget(world, tmp_path):
    sandbox = world.sandbox
    files = {
        "README.md": "x\n",
        ".github/ourobot.yml": "version: 1\nbudgets:\n  usd_per_ticket: 1.25\n",
    }
    repo = sandbox.create_repo("octo", "budgeted", files=files)
    sandbox.control.set_permission("octo", "budgeted", "admin1", "admin")
    made = world.user("octo").rest.issues.create("octo", "budgeted", title="t").parsed_data
    payload_comment = (
        world.user("admin1")
        .rest.issues.create_comment("octo", "budgeted", made.number, body="/ourobot budget")
        .parsed_data
    )
    payload = world.sink.wait_for_one(
        "issue_comment", "created", lambda d: d.payload["comment"]["id"] == payload_comment.id
    ).payload
    for job in world.route(payload):
        world.run(job)
    listed = world.user("octo").rest.issues.list_comments("octo", "budgeted", made.number)
    [reply] = [c for c in listed.parsed_data if c.user.login == sandbox.app.bot_login]
    assert f"octo/budgeted#{made.number}" in reply.body
    assert "spent of $1.2500" in reply.body
    assert "lowers the operator's cap of $5.0000" in reply.body
    assert repo.installation_id is not None


def test_budget_with_an_invalid_config_falls_back_to_the_operators_cap(world):
    sandbox = world.sandbox
    files = {"README.md": "x\n", ".github/ourobot.yml": "version: 1\nbudgets: [oops\n"}
    sandbox.create_repo("octo", "broken", files=files)
    sandbox.control.set_permission("octo", "broken", "admin1", "admin")
    made = world.user("octo").rest.issues.create("octo", "broken", title="t").parsed_data
    comment = (
        world.user("admin1")
        .rest.issues.create_comment("octo", "broken", made.number, body="/ourobot budget")
        .parsed_data
    )
    payload = world.sink.wait_for_one(
        "issue_comment", "created", lambda d: d.payload["comment"]["id"] == comment.id
    ).payload
    for job in world.route(payload):
        world.run(job)
    listed = world.user("octo").rest.issues.list_comments("octo", "broken", made.number)
    [reply] = [c for c in listed.parsed_data if c.user.login == sandbox.app.bot_login]
    assert "could not be read" in reply.body
    assert "spent of $5.0000" in reply.body
