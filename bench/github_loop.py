"""API economy of the loop: one labeled issue to an open pull request, against the sandbox.

    .venv/bin/python bench/github_loop.py [--cycles 2]

Starts the GitHub sandbox and the fake model servers in this process, seeds a small project,
and runs the `ticket` job (the same function the Celery task and the embedded runner call) for
`--cycles` labeled issues, one after the other in one worker "process". The sandbox counts
every REST request per endpoint and every git smart-HTTP round trip; printed per cycle:

- each endpoint, how often it was asked, and why the loop needs it;
- whether any request was repeated within the cycle (same method and path, a GET or a write
  of the same thing): there must be none beyond the two status-comment edits, which differ;
- installation tokens minted: one for the REST client and one for git in the first cycle,
  none in the next (reused until five minutes before they expire);
- then a cycle whose pull-request creation meets a secondary rate limit (403 with
  `retry-after: 2`): the wait the client left before asking again, against the 2 s asked.

No assertions (the tests hold those); the numbers are for the note.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.controls.halt import HaltRegistry  # noqa: E402
from app.github_client import GitHubClients  # noqa: E402
from app.jobs.context import JobContext  # noqa: E402
from app.jobs.registry import load_job_modules  # noqa: E402
from app.jobs.ticket_cycle import TicketRun, run_ticket  # noqa: E402
from app.sandbox.server import SandboxServer  # noqa: E402
from app.settings import load_settings  # noqa: E402
from app.store import Store  # noqa: E402
from reviewers.fake_servers import (  # noqa: E402
    append_block,
    edits_reply,
    replace_block,
    running_fake_models,
)

MODEL = "anthropic:claude-impl"
FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": "import unittest\n\nfrom calc import add\n\n\n"
    "class T(unittest.TestCase):\n    def test_zero(self):\n"
    "        self.assertEqual(add(0, 0), 0)\n",
    ".github/ourobot.yml": "version: 1\n"
    f"test_command: '{sys.executable} -m unittest discover -s tests -t . -q'\n"
    f"models: {{implementer: {MODEL}, planner: {MODEL}}}\n"
    "budgets: {implementer_iterations: 2, test_timeout_s: 60}\n",
}
REPLY = edits_reply(
    replace_block("calc.py", ("    return a - b\n", "    return a + b\n")),
    append_block(
        "tests/test_calc.py",
        "\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    ),
)
WHY = {
    "POST /app/installations/{installation_id}/access_tokens": (
        "an installation token (githubkit's REST client; then one for git)"
    ),
    "GET /app": "ourobot's own bot login, once per process (its comments are found by it)",
    "GET /repos/{owner}/{repo}/collaborators/{username}/permission": (
        "the labeler's permission, from GitHub (write or more starts a cycle)"
    ),
    "GET /repos/{owner}/{repo}": "the default branch and the clone URL",
    "GET /repos/{owner}/{repo}/pulls": (
        "open pull requests, once: the open-PR cap and this ticket's existing PR"
    ),
    "GET /repos/{owner}/{repo}/issues/{number}/comments": (
        "find an existing status comment by its hidden marker (a retry edits it)"
    ),
    "POST /repos/{owner}/{repo}/issues/{number}/comments": "the status comment, once",
    "POST /repos/{owner}/{repo}/issues/{number}/labels": "label `ourobot:in-progress`",
    "POST /repos/{owner}/{repo}/pulls": "open the pull request",
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": (
        "edit the status comment by its id: the outcome"
    ),
}
GIT_WHY = {
    "upload-pack": "fetch the base branch into the bare mirror",
    "receive-pack": "push ourobot/issue-N",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2)
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-github-loop-"))
    server = SandboxServer(data_dir=root / "sandbox").start()
    try:
        with running_fake_models() as models:
            run(server, models, root, args.cycles)
    finally:
        server.stop()
    return 0


def run(server: SandboxServer, models: Any, root: Path, cycles: int) -> None:
    control = server.control()
    control.reset()
    control.create_user("octo")
    writer = control.create_user("writer")
    seed = root / "seed"
    for rel, text in FILES.items():
        (seed / rel).parent.mkdir(parents=True, exist_ok=True)
        (seed / rel).write_text(text)
    control.create_repo("octo", "demo", seed)
    installation = control.install_app("octo", ["demo"])
    control.set_permission("octo", "demo", "writer", "write")
    models.default(MODEL, REPLY)
    info = control.app_info()
    env = models.env()
    settings = load_settings(
        env={},
        app_id=info["id"],
        private_key=info["private_key_pem"],
        github_api_url=server.url,
        data_dir=root / "data",
        anthropic_api_key=env["ANTHROPIC_API_KEY"],
        anthropic_base_url=env["ANTHROPIC_BASE_URL"],
    )
    store = Store.open(settings)
    store.migrate()
    load_job_modules(settings)
    ctx = JobContext(
        settings, store, GitHubClients(settings, write_guard=HaltRegistry(store).check), None
    )
    from githubkit import GitHub, TokenAuthStrategy

    person = GitHub(TokenAuthStrategy(writer), base_url=server.url, http_cache=False)
    for index in range(cycles + 1):
        title = f"add() subtracts ({index + 1})"
        number = int(
            person.rest.issues.create(
                "octo", "demo", title=title, body="Fix add."
            ).parsed_data.number
        )
        person.rest.issues.add_labels("octo", "demo", number, labels=["ourobot:ticket"])
        secondary = index == cycles
        if secondary:
            control.add_fault("secondary", method="POST", path=r"/pulls$", retry_after_s=2)
        control.wait_idle()
        before = control.stats()
        started = time.monotonic()
        outcome = run_ticket(
            ctx,
            TicketRun(installation, "octo/demo", number, "writer", f"bench:{number}", title,
                      "Fix add.", ("ourobot:ticket",)),
        )  # fmt: skip
        elapsed = time.monotonic() - started
        after = control.stats()
        report(index + 1, before, after, outcome, elapsed, secondary)
    store.close()


def report(
    index: int,
    before: dict[str, Any],
    after: dict[str, Any],
    outcome: str,
    elapsed: float,
    secondary: bool,
) -> None:
    counted = Counter(after["routes"]) - Counter(before["routes"])
    routes = Counter({k: n for k, n in counted.items() if not k.startswith("GIT ")})
    git = Counter(after["git"]) - Counter(before["git"])
    log = [e for e in after["log"] if e["t"] > (before["log"][-1]["t"] if before["log"] else 0)]
    log = [e for e in log if e["identity"] != "admin"]
    note = " [secondary rate limit on POST /pulls]" if secondary else ""
    print(f"\n== cycle {index}: {outcome} ({elapsed:.1f}s){note}")
    print(f"REST requests: {sum(routes.values())}")
    for route, count in sorted(routes.items(), key=lambda kv: kv[0].split()[1]):
        print(f"  {count} x {route:<66} {WHY.get(route, '?')}")
    print(f"git round trips: {sum(git.values())}")
    for trip, count in sorted(git.items()):
        service = "receive-pack" if "receive-pack" in trip else "upload-pack"
        print(f"  {count} x {trip:<52} {GIT_WHY[service]}")
    seen = Counter((e["method"], _normal(e["path"])) for e in log)
    repeated = {k: n for k, n in seen.items() if n > 1 and k[0] != "PATCH"}
    print(f"repeated within the cycle (PATCH of the status comment aside): {repeated or 'none'}")
    if repeated:
        print("  (two tokens are two different mints; a POST after a 403 is the one retry)")
    minted = routes.get("POST /app/installations/{installation_id}/access_tokens", 0)
    print(f"installation tokens minted: {minted}")
    if secondary:
        posts = [e for e in log if e["method"] == "POST" and e["path"].endswith("/pulls")]
        if len(posts) >= 2:
            print(
                f"secondary limit: {posts[0]['status']} then {posts[1]['status']} after "
                f"{posts[1]['t'] - posts[0]['t']:.2f}s (retry-after asked 2 s)"
            )


def _normal(path: str) -> str:
    return re.sub(r"\?.*$", "", path)


if __name__ == "__main__":
    raise SystemExit(main())
