"""What the review costs in model requests, per scenario, against a baseline in the same run.

    .venv/bin/python bench/review_economy.py [--baseline-code DIR] [--json]

Each scenario runs ourobot's production parts end to end: the sandbox GitHub (real HTTP), the
fake model servers (the real `anthropic` and `openai` SDKs), the production routing table, and
every `guards_check` and `review_check` job the sandbox's webhooks ask for, in delivery order
(the guards' own check-run event included). Reviewer replies are scripted per round, the same
for every code under test; the counts are the requests the fake servers received.

- `guards-fail`: a bot PR that changes a workflow (the guards fail);
- `same-diff-head`: an approved PR gets a new head with the same diff (an amended message);
- `base-merged`: an approved PR merges its base (an unrelated file changed on main);
- `thrash`: round 1 rejects with two findings; each fix resolves what was asked, and from
  round 3 a reviewer raises a new finding about code no fix touched. Runs until the panel
  passes or 5 rounds.

`--baseline-code DIR` runs the same scenarios with the ourobot tree in DIR (e.g. main's code
exported with `git archive main | tar -x -C DIR`) in a subprocess, and prints both with the
ratio. No assertions: the numbers are for the note.
"""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent

A = "anthropic:claude-a"
B = "openai:gpt-b"
OPS = "calc/ops.py"
OPS_V1 = (
    "def add(a: int, b: int) -> int:\n    return a + b\n\n\n"
    "def divide(a: int, b: int) -> float:\n    return a / b\n"
)
APPROVE = "The change does what the ticket asks.\nVERDICT: APPROVE"
MAX_ROUNDS = 5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", type=Path, default=HERE, help="the ourobot tree to import")
    parser.add_argument("--baseline-code", type=Path, help="a second tree to compare with")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON only")
    args = parser.parse_args()
    if args.baseline_code is not None:
        before = _run_elsewhere(args.baseline_code)
        after = _run_elsewhere(args.code)
        _print_comparison(before, after)
        return 0
    counts = run_all(args.code)
    if args.json:
        print(json.dumps(counts))
    else:
        for name, row in counts.items():
            print(f"{name:16} {row['requests']:3} model request(s)  {row['outcome']}")
    return 0


def _run_elsewhere(code: Path) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--code", str(code), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=code)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _print_comparison(before: dict[str, Any], after: dict[str, Any]) -> None:
    head = f"{'scenario':16} {'before':>7} {'after':>7} {'after/before':>13}"
    print(f"{head}  outcome before -> after")
    for name in before:
        b, a = before[name]["requests"], after[name]["requests"]
        ratio = f"{a / b:.2f}" if b else "-"
        print(
            f"{name:16} {b:7} {a:7} {ratio:>13}  "
            f"{before[name]['outcome']} -> {after[name]['outcome']}"
        )


# ---- the world ----------------------------------------------------------------------------------


def run_all(code: Path) -> dict[str, Any]:
    sys.path.insert(0, str(code))
    scenarios: dict[str, Callable[[Any], str]] = {
        "guards-fail": guards_fail,
        "same-diff-head": same_diff_head,
        "base-merged": base_merged,
        "thrash": thrash,
    }
    from app.sandbox.server import SandboxServer

    with tempfile.TemporaryDirectory(prefix="ourobot-bench-") as tmp:
        # One sandbox for every scenario, reset before each (as the tests' session fixture).
        server = SandboxServer(data_dir=Path(tmp) / "sandbox").start()
        try:
            return {
                name: _scenario(server, Path(tmp) / name, scenario)
                for name, scenario in scenarios.items()
            }
        finally:
            server.stop()


def _scenario(server: Any, root: Path, scenario: Callable[[Any], str]) -> dict[str, Any]:
    from reviewers.fake_servers import running_fake_models
    from tests.jobs.review_check.conftest import make_world
    from tests.plugins.sandbox import WebhookSink, open_handle

    root.mkdir()
    sandbox = open_handle(server, root)
    sink = WebhookSink(secret=secrets.token_hex(16))
    sandbox.control.set_webhook(sink.url, sink.secret)
    try:
        with running_fake_models() as models:
            world = Pump(make_world(sandbox, sink, models, root))
            try:
                outcome = scenario(world)
                return {"requests": len(models.requests), "outcome": outcome}
            finally:
                world.rw.store.close()
    finally:
        sandbox.control.set_webhook(None)
        sink.close()
        sandbox.control.close()


class Pump:
    """The review world driven the way production is: every webhook routed, its guards and
    review jobs run in delivery order."""

    def __init__(self, rw: Any) -> None:
        from app.handlers.routes import build_router

        self.rw = rw
        self.router = build_router(rw.settings)
        self.seen = 0
        self.number = 0

    def git(self, *args: str) -> str:
        token = self.rw.repo.owner_token if args[0] in ("clone", "fetch", "push") else None
        cwd = None if args[0] == "clone" else self.rw.work
        return str(self.rw.sandbox.git(*args, cwd=cwd, token=token).stdout).strip()

    def commit(self, branch: str, files: dict[str, str], *, start: str) -> str:
        if not self.rw.work.exists():
            self.git("clone", "-q", self.rw.repo.clone_url, str(self.rw.work))
        self.git("fetch", "-q", "origin")
        self.git("checkout", "-q", "-B", branch, start)
        for name, text in files.items():
            path = self.rw.work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"change {branch}")
        return self.push(branch)

    def push(self, branch: str) -> str:
        self.git("push", "-q", "-f", "origin", branch)
        head = self.git("rev-parse", "HEAD")
        if branch != "main" and self.number:
            self.wait_for_head(head)
        return head

    def wait_for_head(self, head: str) -> None:
        self.rw.sink.wait_for_one(
            "pull_request",
            None,
            lambda d: d.payload.get("pull_request", {}).get("head", {}).get("sha") == head,
        )

    def open_pull(self, files: dict[str, str], branch: str = "ourobot/issue-1") -> str:
        head = self.commit(branch, files, start="origin/main")
        made = self.rw.bot.rest.pulls.create(
            self.rw.repo.owner, self.rw.repo.name, title="Add divide", head=branch,
            base="main", body="Adds divide().",
        ).parsed_data  # fmt: skip
        self.number = made.number
        self.wait_for_head(head)
        self.drain()
        return head

    def drain(self) -> None:
        """Route every new delivery and run its guards and review jobs, until none is left
        (a guards run completing is itself a delivery)."""
        import time

        while True:
            time.sleep(0.3)  # let the sandbox send what the last job caused
            deliveries = self.rw.sink.deliveries[self.seen :]
            if not deliveries:
                return
            self.seen += len(deliveries)
            for delivery in deliveries:
                payload = delivery.payload
                jobs = self.router.route(
                    delivery.event, delivery.action, payload, delivery_id=delivery.guid
                )
                for job in jobs:
                    if job.name in ("guards_check", "review_check"):
                        self.rw.run(job)

    def review(self, head: str) -> str:
        runs = self.rw.check_runs(head)
        completed = [run for run in runs if run.status == "completed"]
        if not completed:
            return "no review"
        latest = max(completed, key=lambda run: int(run.id))
        return f"{latest.conclusion}: {latest.output.title}"


# ---- scenarios ----------------------------------------------------------------------------------


def guards_fail(world: Pump) -> str:
    from reviewers.fake_servers import Text

    world.rw.models.default(A, Text(APPROVE))
    world.rw.models.default(B, Text(APPROVE))
    head = world.open_pull({OPS: OPS_V1, ".github/workflows/ci.yml": "on: push\n"})
    return world.review(head)


def same_diff_head(world: Pump) -> str:
    from reviewers.fake_servers import Text

    world.rw.models.default(A, Text(APPROVE))
    world.rw.models.default(B, Text(APPROVE))
    world.open_pull({OPS: OPS_V1})
    world.git("commit", "-q", "--amend", "-m", "reworded")
    head = world.push("ourobot/issue-1")
    world.drain()
    return world.review(head)


def base_merged(world: Pump) -> str:
    from reviewers.fake_servers import Text

    world.rw.models.default(A, Text(APPROVE))
    world.rw.models.default(B, Text(APPROVE))
    world.open_pull({OPS: OPS_V1})
    world.commit("main", {"docs/notes.md": "Unrelated.\n"}, start="origin/main")
    world.drain()
    world.git("checkout", "-q", "ourobot/issue-1")
    world.git("fetch", "-q", "origin")
    world.git("merge", "-q", "--no-edit", "origin/main")
    head = world.push("ourobot/issue-1")
    world.drain()
    return world.review(head)


def _finding_ids() -> tuple[str, str]:
    """The ids the reviewers answer with: computed here as `reviewers.obligations` does, so
    the same scripted replies run against code that has no obligations at all."""
    import hashlib

    def ident(path: str, line: int, severity: str, reason: str) -> str:
        text = f"{path}\0{line}\0{severity}\0{' '.join(reason.split()).lower()}"
        return "F-" + hashlib.sha256(text.encode()).hexdigest()[:8]

    return ident(OPS, 6, "blocker", ZERO), ident(OPS, 5, "major", DOC)


ZERO = "divide(1, 0) raises ZeroDivisionError; check b first"
DOC = "divide() has no docstring, which the constitution requires"


def thrash(world: Pump) -> str:
    from reviewers.fake_servers import Text

    z, d = _finding_ids()
    late = [f"FINDING major calc/ops.py:{n} add() could accept floats ({n})\n" for n in (1, 2, 1)]
    world.rw.models.script(
        A,
        Text(f"FINDING blocker {OPS}:6 {ZERO}\nFINDING major {OPS}:5 {DOC}\nVERDICT: REJECT"),
        Text(f"RESOLVED {z} b is checked\nOPEN {d} still no docstring\nVERDICT: REJECT"),
        Text(f"RESOLVED {d} documented\n{late[0]}VERDICT: REJECT"),
        Text(f"{late[1]}VERDICT: REJECT"),
        Text(f"{late[2]}VERDICT: REJECT"),
    )
    world.rw.models.script(
        B,
        Text(APPROVE),
        Text(f"RESOLVED {z} fine\nRESOLVED {d} fine\nVERDICT: APPROVE"),
        Text(f"RESOLVED {d} fine\nVERDICT: APPROVE"),
        Text(APPROVE),
        Text(APPROVE),
    )
    head = world.open_pull({OPS: OPS_V1})
    for round_number in range(2, MAX_ROUNDS + 1):
        if world.review(head).startswith("success"):
            return f"{world.review(head)} (round {round_number - 1})"
        body = OPS_V1.replace("    return a / b\n", f"    return a / b  # fix {round_number}\n")
        head = world.commit("ourobot/issue-1", {OPS: body}, start="origin/ourobot/issue-1")
        world.drain()
    suffix = "" if world.review(head).startswith("success") else f" after {MAX_ROUNDS} rounds"
    return world.review(head) + suffix


if __name__ == "__main__":
    sys.exit(main())
