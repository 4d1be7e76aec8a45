"""The merge gate on the sandbox: ourobot's own pull request for ticket #1 (or a person's), the
checks it waits for posted the way their owners post them (ourobot's App for its guards and
review, a person's token for a CI status), reviews by people of each permission, and the gate's
job run in-process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from app.controls.ledger import Ledger
from app.jobs.gate_check import Evaluation, evaluate_serialized
from tests.jobs.guards_check.conftest import (  # noqa: F401  (make_world is a fixture)
    GuardsWorld,
    WorldFactory,
    make_world,
)

OUTPUT = {"title": "t", "summary": "s"}
CHANGE = {"calc/extra.py": "X = 1\n"}
MERGE_ROUTE = "PUT /repos/{owner}/{repo}/pulls/{number}/merge"
PEOPLE = {"approver": "write", "maint": "maintain", "triager": "triage", "root": "admin"}


@dataclass
class GateWorld:
    world: GuardsWorld
    ticket: int
    number: int
    head: str
    branch: Any

    @property
    def o(self) -> str:
        return self.world.repo.owner

    @property
    def r(self) -> str:
        return self.world.repo.name

    @property
    def bot(self) -> Any:
        return self.world.installation()

    def user(self, login: str) -> Any:
        return self.world.user(login)

    # ---- what the checks and people say ------------------------------------------------------
    def run(self, name: str, head: str | None = None, conclusion: str = "success") -> int:
        made = self.bot.rest.checks.create(self.o, self.r, name=name, head_sha=head or self.head,
                                           conclusion=conclusion, output=OUTPUT)  # fmt: skip
        return int(made.parsed_data.id)

    def status(self, context: str = "ci/lint", state: str = "success", head: str | None = None):
        self.user("approver").rest.repos.create_commit_status(
            self.o, self.r, head or self.head, state=state, context=context
        )

    def green(self, head: str | None = None) -> None:
        self.run("ourobot/guards", head)
        self.run("ourobot/review", head)
        self.status(head=head)

    def review(self, login: str = "approver", event: str = "APPROVE", head: str | None = None):
        body = "" if event == "APPROVE" else "please change"
        self.user(login).rest.pulls.create_review(
            self.o, self.r, self.number, commit_id=head or self.head, event=event, body=body
        )

    def push(self, changes: dict[str, str | None]) -> str:
        self.branch = self.world.commit(self.branch, changes)
        self.head = self.branch.head
        return self.head

    def move_base(self, files: dict[str, str]) -> str:
        """A person pushes to main."""
        other = self.world.push_branch("side", files, token=self.world.repo.owner_token)
        self.world.sandbox.git("push", "-q", "origin", "side:main", cwd=other.path,
                               token=self.world.repo.owner_token)  # fmt: skip
        return other.head

    # ---- ourobot's side ----------------------------------------------------------------------
    def evaluate(self, *, merge_requested_by: str | None = None) -> Evaluation:
        result = evaluate_serialized(
            self.world.ctx, self.world.installation_id, self.world.repo.full_name, self.number,
            merge_requested_by=merge_requested_by,
        )  # fmt: skip
        assert result is not None
        return result

    def command(self, login: str, text: str) -> str:
        """`login` comments `text` on the pull request; the command jobs run; ourobot's reply."""
        made = self.user(login).rest.issues.create_comment(self.o, self.r, self.number, body=text)
        comment_id = made.parsed_data.id
        delivered = self.world.sink.wait_for_one(
            "issue_comment", "created", lambda d: d.payload["comment"]["id"] == comment_id
        )
        jobs = self.world.router.route("issue_comment", "created", delivered.payload,
                                       delivery_id="t")  # fmt: skip
        for job in jobs:
            self.world.run(job)
        replies = [
            c.body or ""
            for c in self.bot.rest.issues.list_comments(self.o, self.r, self.number).parsed_data
            if f"reply.{comment_id}." in (c.body or "")
        ]
        assert len(replies) == 1, replies
        return replies[0].split("\n", 1)[1].strip()  # without the hidden marker line

    # ---- what GitHub shows -------------------------------------------------------------------
    def pull(self) -> Any:
        return self.bot.rest.pulls.get(self.o, self.r, self.number).parsed_data

    def gate_runs(self, head: str | None = None) -> list[Any]:
        listed = self.bot.rest.checks.list_for_ref(
            self.o, self.r, head or self.head, check_name="ourobot/gate", filter_="all"
        ).parsed_data
        return [r for r in listed.check_runs if r.app and r.app.id == self.world.sandbox.app.id]

    def gate_run(self, head: str | None = None) -> Any:
        runs = self.gate_runs(head)
        assert len(runs) == 1, [(r.id, r.conclusion) for r in runs]
        return runs[0]

    def merge_calls(self) -> int:
        return self.world.request_count(MERGE_ROUTE)

    def main_sha(self) -> str:
        return str(self.bot.rest.repos.get_commit(self.o, self.r, "main").parsed_data.sha)

    def merges_in_ledger(self) -> list[Any]:
        return [e for e in Ledger(self.world.store).entries() if e.kind == "merge"]


@pytest.fixture
def gate(make_world: WorldFactory) -> GateWorld:  # noqa: F811
    world = make_world()
    for login, level in PEOPLE.items():
        world.sandbox.create_user(login)
        world.sandbox.control.set_permission("octo", "demo", login, level)
    owner = world.user(world.repo.owner)
    ticket = owner.rest.issues.create("octo", "demo", title="Add extra").parsed_data.number
    branch = world.push_branch(f"ourobot/issue-{ticket}", CHANGE, token=world.installation_token())
    payload = world.open_pull(world.installation(), branch, title="Add extra")
    number = int(payload["pull_request"]["number"])
    return GateWorld(world, ticket, number, branch.head, branch)
